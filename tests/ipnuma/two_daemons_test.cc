// Two ipnumad processes on loopback ports provisioning each other end to end
// over the real peer protocol (HTTP/JSON, signed with the pair's secret), driven through the
// REST API; the NICs are file-backed BARs that the test decodes itself with
// the ipnuma_regs codecs and checks against the spec.
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <tuple>

#include "common/http_client.h"
#include "ipnuma/config.h"
#include "ipnuma/nic.h"
#include "ipnuma/peer_auth.h"
#include "ipnuma/service.h"
#include "tests/support/loopback.h"
#include "tests/support/parse.h"

namespace fibnic::ipnuma {
namespace {

using fibnic::testing::FreePort;
using fibnic::testing::Ip;

using nlohmann::json;
namespace fs = std::filesystem;

StatusOr<HttpResult> Http(const std::string& server, const std::string& method, const std::string& target,
                          const std::string& body, const std::string& token,
                          std::vector<std::pair<std::string, std::string>> headers = {},
                          const std::string& bind = "") {
  HttpRequestSpec req;
  req.server = Endpoint::Parse(server).value();
  req.method = method;
  req.target = target;
  req.body = body;
  req.token = token;
  req.headers = std::move(headers);
  req.bind_address = bind;
  req.timeout = std::chrono::seconds(10);
  return HttpCall(req);
}

void WriteFile(const fs::path& p, const std::string& text) { std::ofstream(p) << text; }
void WriteSecret(const fs::path& p, const std::string& text) {
  WriteFile(p, text);
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
}

// The secret A and B share (each pair of ipnumad has its own).
const std::string kPairSecret = "0123456789abcdef0123456789abcdef-a-b";

// Runs a command; its exit status and stdout+stderr.
std::pair<int, std::string> RunCmd(const std::string& cmd) {
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  char buf[512];
  while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
  const int st = ::pclose(f);
  return {WEXITSTATUS(st), out};
}

std::vector<uint8_t> ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

regs::Caps Model() { return {.pages = 256, .pcid_entries = 16, .region_entries = 8}; }

struct Daemon {
  std::string name;
  fs::path config, bar, log;
  uint16_t peer_port = 0, api_port = 0;
  std::string token;
  pid_t pid = -1;

  std::string api() const { return "127.0.0.1:" + std::to_string(api_port); }
  void Start() {
    pid = ::fork();
    if (pid == 0) {
      int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(fd, 2);
      ::execl(IPNUMAD_BIN, "ipnumad", "--config", config.c_str(), nullptr);
      ::_exit(127);
    }
  }
  void Stop() {
    if (pid > 0) {
      ::kill(pid, SIGTERM);
      int st = 0;
      ::waitpid(pid, &st, 0);
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << name << " exit status " << st;
      pid = -1;
    }
  }
  StatusOr<HttpResult> Call(const std::string& method, const std::string& target, const json& body = nullptr,
                            bool with_token = true) const {
    return Http(api(), method, target, body.is_null() ? "" : body.dump(), with_token ? token : "");
  }
  json Get(const std::string& what) const {
    auto a = Call("GET", "/api/v1/ipnuma/" + what);
    if (!a.ok() || a->status != 200) return json();
    return json::parse(a->body, nullptr, false);
  }
  NicTables Tables() const {
    auto bytes = ReadBytes(bar);
    return DecodeNicTables(bytes.data(), Model());
  }
};

class TwoDaemons : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ipnumad-e2e-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    a_ = {"a", dir_ / "a.yaml", dir_ / "a.bar", dir_ / "a.log", FreePort(), FreePort(), "token-a"};
    b_ = {"b", dir_ / "b.yaml", dir_ / "b.bar", dir_ / "b.log", FreePort(), FreePort(), "token-b"};
    WriteSecret(dir_ / "ab.secret", kPairSecret + "\n");
    WriteSecret(dir_ / "a.token", "token-a\n");
    WriteSecret(dir_ / "b.token", "token-b\n");
    WriteFile(a_.config, Config(a_, b_, "10.0.0.1", "02:00:00:00:00:01", "10.0.0.2", "02:00:00:00:00:02",
                                "0x100000000",
                                "  - {name: tx, base: 0x100004000, length: 0x2000, allow: 10.0.0.2/32}\n",
                                "  - {name: to-b, peer: b, export: rx, offset: 0x1000, first_page: 4, pages: 3}\n"));
    WriteFile(b_.config, Config(b_, a_, "10.0.0.2", "02:00:00:00:00:02", "10.0.0.1", "02:00:00:00:00:01",
                                "0x200000000",
                                "  - {name: rx, base: 0x200001000, length: 0x4000, allow: 10.0.0.0/24}\n",
                                "  - {name: to-a, peer: a, export: tx, first_page: 10, pages: 2}\n"));
  }
  void TearDown() override {
    a_.Stop();
    b_.Stop();
    if (HasFailure()) {
      for (auto* d : {&a_, &b_}) {
        std::ifstream in(d->log);
        std::cerr << "---- " << d->name << " log\n" << in.rdbuf() << "\n";
      }
    }
    fs::remove_all(dir_);
  }

  std::string Config(const Daemon& self, const Daemon& peer, const char* ip, const char* mac, const char* peer_ip,
                     const char* peer_mac, const char* pool, const std::string& exports, const std::string& mappings) {
    std::string s;
    s += "device: {kind: file, path: " + self.bar.string() + ", model: {pages: 256, pcid_entries: 16, region_entries: 8}}\n";
    s += std::string("local: {address: ") + ip + ", netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '" + mac +
         "', udp_port: 4790, retransmit_timeout: 5us}\n";
    s += std::string("pool: {kind: reserved, base: ") + pool + ", size: 0x100000}\n";
    s += std::string("neighbours: {source: static, static: [{address: ") + peer_ip + ", mac: '" + peer_mac + "'}]}\n";
    s += "api: {listen: '127.0.0.1:" + std::to_string(self.api_port) + "', token_file: " +
         (dir_ / (self.name + ".token")).string() + "}\n";
    s += "peer_api: {listen: '127.0.0.1:" + std::to_string(self.peer_port) + "', timeout: 1s}\n";
    s += "reconcile_interval: 200ms\n";
    s += std::string("peers:\n  - {name: ") + peer.name + ", address: " + peer_ip + ", api: '127.0.0.1:" +
         std::to_string(peer.peer_port) + "', secret_file: " + (dir_ / "ab.secret").string() + "}\n";
    s += "exports:\n" + exports + "mappings:\n" + mappings;
    return s;
  }

  // Waits until the daemon lists n mappings (peers may start in any order).
  bool WaitMappings(const Daemon& d, size_t n) {
    for (int i = 0; i < 200; ++i) {
      json m = d.Get("mappings");
      if (m.is_object() && m["mappings"].size() == n) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  fs::path dir_;
  Daemon a_, b_;
};

TEST_F(TwoDaemons, ProvisionEachOtherThroughThePeerProtocol) {
  a_.Start();
  b_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1)) << a_.Get("status").dump();
  ASSERT_TRUE(WaitMappings(b_, 1)) << b_.Get("status").dump();

  const NicTables ta = a_.Tables();
  const NicTables tb = b_.Tables();
  // Local registers (spec: CONTROL bit0 enable; LOCAL_IP..RETX_TIMEOUT_NS).
  EXPECT_EQ(ta.local.control, regs::kControlEnable);
  EXPECT_EQ(ta.local.local_ip, Ip("10.0.0.1"));
  EXPECT_EQ(ta.local.netmask, Ip("255.255.255.0"));
  EXPECT_EQ(ta.local.gateway_ip, Ip("10.0.0.254"));
  EXPECT_EQ(ta.local.local_mac.ToString(), "02:00:00:00:00:01");
  EXPECT_EQ(ta.local.udp_port, 4790);
  EXPECT_EQ(ta.local.retx_timeout_ns, 5000u);
  // A: one PC ID for B, pages 4..6 → B's rx + 0x1000.
  int a_pcid = 0;
  for (int i = 1; i < 16; ++i) {
    if (ta.pcid[i].valid()) {
      EXPECT_EQ(a_pcid, 0) << "second valid PC ID " << i;
      a_pcid = i;
    }
  }
  ASSERT_NE(a_pcid, 0);
  EXPECT_FALSE(ta.pcid[0].valid());
  EXPECT_EQ(ta.pcid[a_pcid].ip, Ip("10.0.0.2"));
  EXPECT_EQ(ta.pcid[a_pcid].mac.ToString(), "02:00:00:00:00:02");
  EXPECT_FALSE(ta.pcid[a_pcid].via_gateway());
  for (uint32_t p = 0; p < 256; ++p) {
    if (p >= 4 && p <= 6) {
      EXPECT_EQ(ta.pagemap[p], (regs::PagemapEntry{0x200002000ull + (p - 4) * 4096ull, uint16_t(a_pcid)})) << p;
      // B's NIC would accept A's writes to that page: a valid REGION admits them.
      bool admitted = false;
      for (const auto& r : tb.region) admitted = admitted || r.Admits(Ip("10.0.0.1"), ta.pagemap[p].remote_pa, 4096);
      EXPECT_TRUE(admitted) << p;
    } else {
      EXPECT_EQ(ta.pagemap[p].Encode(), 0u) << p;
    }
  }
  // B: REGION for rx; pages 10..11 → A's tx.
  int rx = -1;
  for (int s = 0; s < 8; ++s) {
    if (tb.region[s].valid()) rx = s;
  }
  ASSERT_GE(rx, 0);
  EXPECT_EQ(tb.region[rx], (regs::RegionEntry{0x200001000ull, 0x4000, Ip("10.0.0.0"), Ip("255.255.255.0"),
                                              regs::kRegionValid}));
  EXPECT_EQ(tb.pagemap[10].remote_pa, 0x100004000ull);
  EXPECT_EQ(tb.pagemap[11].remote_pa, 0x100005000ull);
  EXPECT_TRUE(tb.pcid[tb.pagemap[10].pcid].valid());
  EXPECT_EQ(tb.pcid[tb.pagemap[10].pcid].ip, Ip("10.0.0.1"));

  // The dashboard and the API document are served by the shared web layer.
  auto page = a_.Call("GET", "/");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->status, 200);
  auto doc = a_.Call("GET", "/api/v1/openapi.json");
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(doc->body.find("/api/v1/ipnuma/mappings"), std::string::npos);
}

TEST_F(TwoDaemons, BadRequestsChangeNothingAndSayWhy) {
  a_.Start();
  b_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1));
  ASSERT_TRUE(WaitMappings(b_, 1));
  const auto a0 = ReadBytes(a_.bar), b0 = ReadBytes(b_.bar);
  auto expect = [&](const StatusOr<HttpResult>& ans, int status, const std::string& says) {
    ASSERT_TRUE(ans.ok()) << ans.status().ToString();
    EXPECT_EQ(ans->status, status) << ans->body;
    EXPECT_NE(ans->body.find(says), std::string::npos) << ans->body;
    EXPECT_EQ(ReadBytes(a_.bar), a0);
    EXPECT_EQ(ReadBytes(b_.bar), b0);
  };
  const std::string peer_b = "127.0.0.1:" + std::to_string(b_.peer_port);
  json grant = {{"from", "10.0.0.1"}, {"export", "rx"}, {"offset", 0}, {"length", 4096}};
  // Wrong secret at the peer API.
  expect(Http(peer_b, "POST", kPeerGrantPath, grant.dump(), "secret-of-a"), 401,
         "bearer token rejected");
  expect(Http(peer_b, "POST", kPeerGrantPath, grant.dump(), ""), 401, "Bearer");
  // Rightly signed, but by an address B does not know.
  grant.erase("from");
  expect(Http(peer_b, "POST", kPeerGrantPath, grant.dump(), "",
              SignPeerRequest(kPairSecret, "POST", kPeerGrantPath, grant.dump(), Ip("10.0.0.9"), Ip("10.0.0.2"),
                              SystemUnixSeconds())),
         403, "unauthorised peer 10.0.0.9");
  // Operator API: no token, overlap, misaligned, outside pool, unknown export, page range.
  expect(a_.Call("POST", "/api/v1/ipnuma/exports", {{"name", "x"}, {"base", "0x100004000"}, {"length", 64},
                                                    {"allow", "10.0.0.0/24"}}, false),
         401, "Bearer");
  expect(a_.Call("POST", "/api/v1/ipnuma/exports",
                 {{"name", "x"}, {"base", "0x100005000"}, {"length", 4096}, {"allow", "10.0.0.0/24"}}),
         409, "overlaps export 'tx'");
  expect(a_.Call("POST", "/api/v1/ipnuma/exports",
                 {{"name", "x"}, {"base", "0x100010010"}, {"length", 4096}, {"allow", "10.0.0.0/24"}}),
         400, "64-byte aligned");
  expect(a_.Call("POST", "/api/v1/ipnuma/exports",
                 {{"name", "x"}, {"base", "0x300000000"}, {"length", 4096}, {"allow", "10.0.0.0/24"}}),
         400, "outside the buffer pool");
  expect(a_.Call("POST", "/api/v1/ipnuma/exports", {{"name", "x"}, {"base", 1}, {"colour", "red"}}), 400,
         "unknown field 'colour'");
  expect(a_.Call("POST", "/api/v1/ipnuma/mappings",
                 {{"name", "m"}, {"peer", "b"}, {"export", "nope"}, {"first_page", 20}, {"pages", 1}}),
         404, "unknown export 'nope'");
  expect(a_.Call("POST", "/api/v1/ipnuma/mappings",
                 {{"name", "m"}, {"peer", "b"}, {"export", "rx"}, {"first_page", 255}, {"pages", 2}}),
         400, "out of the BAR's 256 pages");
  expect(b_.Call("POST", "/api/v1/ipnuma/mappings",
                 {{"name", "m"}, {"peer", "a"}, {"export", "tx"}, {"offset", 0x2000}, {"first_page", 20}, {"pages", 1}}),
         400, "exceeds its length");
}

TEST_F(TwoDaemons, RevokeUnmapsPeerFirstAndRestartKeepsTables) {
  a_.Start();
  b_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1));
  ASSERT_TRUE(WaitMappings(b_, 1));
  // A restarts: it reconciles from the NIC and rewrites nothing.
  const auto a0 = ReadBytes(a_.bar);
  a_.Stop();
  a_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1));
  json m = a_.Get("mappings")["mappings"][0];
  EXPECT_EQ(m["name"], "to-b");
  EXPECT_TRUE(m["confirmed"].get<bool>());
  EXPECT_EQ(ReadBytes(a_.bar), a0);

  // B revokes rx: A's pages are gone, then B's REGION.
  auto ans = b_.Call("DELETE", "/api/v1/ipnuma/exports/rx");
  ASSERT_TRUE(ans.ok());
  EXPECT_EQ(ans->status, 200) << ans->body;
  NicTables ta = a_.Tables(), tb = b_.Tables();
  for (uint32_t p = 4; p <= 6; ++p) EXPECT_FALSE(ta.pagemap[p].mapped()) << p;
  for (const auto& r : tb.region) EXPECT_FALSE(r.valid());
  EXPECT_TRUE(a_.Get("mappings")["mappings"].empty());
}

TEST_F(TwoDaemons, IpnumactlDrivesTheApiAndDecodesBars) {
  a_.Start();
  b_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1));
  ASSERT_TRUE(WaitMappings(b_, 1));
  const std::string ctl = std::string(IPNUMACTL_BIN) + " --api " + a_.api() + " --token-file " +
                          (dir_ / "a.token").string() + " ";
  auto [rc, out] = RunCmd(ctl + "map extra b rx 0x3000 20 1");
  EXPECT_EQ(rc, 0) << out;
  std::tie(rc, out) = RunCmd(ctl + "map extra2 b rx 0x3000 300 1");
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("out of the BAR's 256 pages"), std::string::npos) << out;
  std::tie(rc, out) = RunCmd(ctl + "mappings");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("\"extra\""), std::string::npos) << out;
  // Offline decode of A's BAR file: both runs, B's PC ID.
  std::tie(rc, out) = RunCmd(std::string(IPNUMACTL_BIN) + " decode " + a_.bar.string());
  ASSERT_EQ(rc, 0) << out;
  json d = json::parse(out);
  ASSERT_EQ(d["pages"].size(), 2u) << out;
  EXPECT_EQ(d["pages"][0]["first_page"], 4);
  EXPECT_EQ(d["pages"][0]["pages"], 3);
  EXPECT_EQ(d["pages"][0]["remote_base"], "0x200002000");
  EXPECT_EQ(d["pages"][1]["first_page"], 20);
  EXPECT_EQ(d["pages"][1]["remote_base"], "0x200004000");
  EXPECT_EQ(d["pcid"][0]["address"], "10.0.0.2");
  EXPECT_EQ(d["regions"][0]["base"], "0x100004000");
  std::tie(rc, out) = RunCmd(ctl + "unmap extra");
  EXPECT_EQ(rc, 0) << out;
  EXPECT_FALSE(a_.Tables().pagemap[20].mapped());
}

// Over real sockets: a signed request from A's NIC address is served once
// from A's address; the same bytes again, or from another address, are not.
TEST_F(TwoDaemons, SignedPeerRequestsCannotBeReplayedOrSentFromElsewhere) {
  a_.Start();
  b_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1));
  ASSERT_TRUE(WaitMappings(b_, 1));
  const auto a0 = ReadBytes(a_.bar), b0 = ReadBytes(b_.bar);
  const std::string peer_b = "127.0.0.1:" + std::to_string(b_.peer_port);
  const std::string grant = json{{"export", "rx"}, {"offset", 0}, {"length", 4096}}.dump();
  auto sign = [&] {
    return SignPeerRequest(kPairSecret, "POST", kPeerGrantPath, grant, Ip("10.0.0.1"), Ip("10.0.0.2"),
                           SystemUnixSeconds());
  };
  const auto headers = sign();
  auto ans = Http(peer_b, "POST", kPeerGrantPath, grant, "", headers);
  ASSERT_TRUE(ans.ok()) << ans.status().ToString();
  EXPECT_EQ(ans->status, 200) << ans->body;
  ans = Http(peer_b, "POST", kPeerGrantPath, grant, "", headers);
  ASSERT_TRUE(ans.ok());
  EXPECT_EQ(ans->status, 401) << ans->body;
  EXPECT_NE(ans->body.find("nonce already used"), std::string::npos) << ans->body;
  ans = Http(peer_b, "POST", kPeerGrantPath, grant, "", sign(), "127.0.0.2");
  ASSERT_TRUE(ans.ok()) << ans.status().ToString();
  EXPECT_EQ(ans->status, 403) << ans->body;
  EXPECT_NE(ans->body.find("request came from 127.0.0.2, not from its configured source 127.0.0.1"),
            std::string::npos)
      << ans->body;
  EXPECT_EQ(ReadBytes(a_.bar), a0);
  EXPECT_EQ(ReadBytes(b_.bar), b0);
}

// A peer that is down when an export is revoked: the REGION is invalid at
// once, the answer names the peer, and the notice is repeated until it is in.
TEST_F(TwoDaemons, RevokeWhilePeerIsDownInvalidatesAtOnceAndCatchesUp) {
  a_.Start();
  b_.Start();
  ASSERT_TRUE(WaitMappings(a_, 1));
  ASSERT_TRUE(WaitMappings(b_, 1));
  a_.Stop();
  auto ans = b_.Call("DELETE", "/api/v1/ipnuma/exports/rx");
  ASSERT_TRUE(ans.ok());
  EXPECT_EQ(ans->status, 200) << ans->body;
  EXPECT_EQ(json::parse(ans->body)["unacknowledged"], json::array({"a"})) << ans->body;
  for (const auto& r : b_.Tables().region) EXPECT_NE(r.base, 0x200001000ull) << "rx still in a REGION";
  json st = b_.Get("status");
  ASSERT_EQ(st["revocations"].size(), 1u) << st.dump();
  a_.Start();
  bool drained = false;
  for (int i = 0; i < 200 && !drained; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    drained = b_.Get("status")["revocations"] == json::array();
  }
  EXPECT_TRUE(drained) << b_.Get("status").dump();
  ASSERT_TRUE(WaitMappings(a_, 0));
  for (uint32_t p = 4; p <= 6; ++p) EXPECT_FALSE(a_.Tables().pagemap[p].mapped()) << p;
}

TEST(IpnumadConfig, CheckConfigNamesFileLineAndKey) {
  const fs::path p = fs::temp_directory_path() / ("ipnumad-bad-" + std::to_string(::getpid()) + ".yaml");
  WriteFile(p, "device: {kind: file, path: /tmp/x.bar}\nlocal:\n  address: 10.0.0.1\n  netmask: 255.255.255.0\n"
               "  gateway: 10.0.0.254\n  mac: '02:00:00:00:00:01'\n  retransmit_timeout: 90us\n"
               "pool: {kind: reserved, base: 0x1000, size: 0x1000}\npeer_api: {secret_file: /nonexistent}\n"
               "colour: red\n");
  auto [rc, out] = RunCmd(std::string(IPNUMAD_BIN) + " --check-config --config " + p.string());
  fs::remove(p);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find(p.string() + ":7:"), std::string::npos) << out;  // file:line of the bad value
  EXPECT_NE(out.find("retransmit_timeout"), std::string::npos) << out;
  EXPECT_NE(out.find("90us"), std::string::npos) << out;
  EXPECT_NE(out.find("colour"), std::string::npos) << out;  // unknown key
  EXPECT_NE(out.find("neighbours.interface: missing required key"), std::string::npos) << out;  // kernel source
}

TEST(IpnumadConfig, KernelNeighboursNeedAnInterfaceName) {
  const std::string base =
      "device: {kind: file, path: /tmp/x.bar}\n"
      "local: {address: 10.0.0.1, netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '02:00:00:00:00:01'}\n"
      "pool: {kind: reserved, base: 0x1000, size: 0x1000}\npeer_api: {listen: '127.0.0.1:7470'}\n";
  auto good = ParseIpnumadConfig(base + "neighbours: {source: kernel, interface: eth1}\n", "t.yaml");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_EQ(good->neighbours.source, NeighbourConfig::Source::kKernel);
  EXPECT_EQ(good->neighbours.interface, "eth1");
  auto bad = ParseIpnumadConfig(base + "neighbours: {source: kernel, interface: 'eth/1'}\n", "t.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("t.yaml:5:"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("neighbours.interface"), std::string::npos) << bad.status().ToString();
  EXPECT_NE(bad.status().message().find("'eth/1'"), std::string::npos) << bad.status().ToString();
  auto unknown = ParseIpnumadConfig(base + "neighbours: {source: static, interface: eth1}\n", "t.yaml");
  ASSERT_FALSE(unknown.ok());  // an interface means nothing to a static list
  EXPECT_NE(unknown.status().message().find("neighbours.interface"), std::string::npos) << unknown.status().ToString();
}

}  // namespace
}  // namespace fibnic::ipnuma
