// Attacks on ipnumad's peer protocol and on what a peer's answers can make it
// do. The peer routes run on the shared web Router exactly as the daemon
// mounts them (request headers, TCP source and body as the server hands them
// over); NICs are the test bench's in-memory BARs under the RuleChecker. Each
// attack succeeded before peer authentication and answer checks existed:
// the body's `from` was believed, a bearer secret could be replayed forever,
// the TCP source was never looked at, a REGION outlived a silent peer, and
// a peer's answer went to the page map and the journal as it came.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <fstream>
#include <thread>

#include "ipnuma/api.h"
#include "ipnuma/config.h"
#include "ipnuma/http_transport.h"
#include "ipnuma/kernel_neighbours.h"
#include "tests/ipnuma/two_nics.h"
#include "tests/support/as_nobody.h"
#include "tests/support/loopback.h"
#include "tests/support/temp_dir.h"

namespace fibnic::ipnuma::testing {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr uint64_t kPoolA = 0x100000000ull;
constexpr uint64_t kPoolB = 0x200000000ull;
constexpr uint64_t kPoolC = 0x300000000ull;
constexpr int64_t kNow = 1'800'000'000;

const std::string kSecretAB(40, 'a');  // what A and B share
const std::string kSecretBC(40, 'c');  // what B and C share

// B's peers as B's config names them: each with its own secret and source.
PeerSpec PeerWith(const Nic& n, const std::string& secret, const char* source) {
  PeerSpec p = PeerOf(n);
  p.secret = secret;
  p.source = IpAddr::Parse(source).value();
  return p;
}

class PeerAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = &bench_.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
    b_ = &bench_.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
    c_ = &bench_.AddNic("c", "10.0.0.3", "02:00:00:00:00:03", kPoolC);
    for (Nic* n : {a_, b_, c_}) bench_.neighbours[n->local.ip] = n->local.mac;
    // C offers rx-c to B only; B maps it. A is B's peer too (and the attacker).
    ASSERT_TRUE(bench_.Start(*c_, {{PeerOf(*b_)}, {Export("rx-c", kPoolC + 0x4000, 0x4000, "10.0.0.2/32")}, {}}).ok());
    b_peers_ = {PeerWith(*a_, kSecretAB, "192.0.2.1"), PeerWith(*c_, kSecretBC, "192.0.2.3")};
    ASSERT_TRUE(bench_
                    .Start(*b_, {b_peers_,
                                 {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.0/24")},
                                 {Mapping("to-c", "c", "rx-c", 0, 0, 4)}})
                    .ok());
    ASSERT_TRUE(b_->Tables().pagemap[0].mapped());
    auth_ = std::make_unique<PeerAuthenticator>(b_->local.ip, b_peers_, PeerAuthConfig{}, [this] { return now_; });
    ASSERT_TRUE(AddPeerRoutes(router_, *b_->svc, *auth_).ok());
    before_b_ = b_->Bytes();
  }
  void TearDown() override { EXPECT_EQ(bench_.checker.first_violation(), ""); }

  // A request to B's peer API as its web server hands it over.
  web::HttpRequest Signed(const std::string& path, const json& body, const std::string& secret, const char* sender,
                          const char* source, int64_t ts) {
    web::HttpRequest r;
    r.method = "POST";
    r.path = path;
    r.body = body.dump();
    r.remote_address = source;
    for (auto& [k, v] : SignPeerRequest(secret, r.method, r.path, r.body, Ip(sender), b_->local.ip, ts)) {
      std::string lower = k;
      for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      r.headers[lower] = v;
    }
    return r;
  }
  json RevokeRxC() const { return {{"export", "rx-c"}, {"base", kPoolC + 0x4000}, {"length", 0x4000}}; }
  static json GrantRx() { return {{"export", "rx"}, {"offset", 0}, {"length", 4096}}; }

  // The answer has the status and says `says`; B's NIC is byte-identical.
  void ExpectRefused(const web::HttpReply& rep, int status, const std::string& says) {
    EXPECT_EQ(rep.status, status) << rep.body;
    EXPECT_NE(rep.body.find(says), std::string::npos) << rep.body;
    EXPECT_TRUE(b_->Bytes() == before_b_) << "B's NIC changed by a refused request: " << rep.body;
  }

  Bench bench_;
  Nic *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  std::vector<PeerSpec> b_peers_;
  int64_t now_ = kNow;
  std::unique_ptr<PeerAuthenticator> auth_;
  web::Router router_;
  std::vector<uint8_t> before_b_;
};

TEST_F(PeerAuthTest, SignedRequestFromTheRightPeerIsServed) {
  auto rep = router_.Dispatch(Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow));
  ASSERT_EQ(rep.status, 200) << rep.body;
  EXPECT_EQ(json::parse(rep.body)["window_base"], kPoolB + 0x1000);
  // The clock may be off by up to the window.
  rep = router_.Dispatch(Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow - 30));
  EXPECT_EQ(rep.status, 200) << rep.body;
}

// Before: B took the caller from the body, so A (or anyone with the one
// inbound secret) could revoke as C and make B unmap everything into C's memory.
TEST_F(PeerAuthTest, ForgedFromIsRefused) {
  json body = RevokeRxC();
  body["from"] = "10.0.0.3";
  ExpectRefused(router_.Dispatch(Signed(kPeerRevokePath, body, kSecretAB, "10.0.0.1", "192.0.2.1", kNow)), 403,
                "is not the authenticated peer 10.0.0.1");
  // Claiming C in the signed header needs C's secret.
  ExpectRefused(router_.Dispatch(Signed(kPeerRevokePath, RevokeRxC(), kSecretAB, "10.0.0.3", "192.0.2.3", kNow)), 401,
                "signature does not verify");
  // Signed by A as A, the notice only touches A's own mappings: B keeps to-c.
  auto rep = router_.Dispatch(Signed(kPeerRevokePath, RevokeRxC(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow));
  ASSERT_EQ(rep.status, 200) << rep.body;
  EXPECT_EQ(json::parse(rep.body)["unmapped"], json::array());
  EXPECT_TRUE(b_->Bytes() == before_b_);
  // C itself may.
  rep = router_.Dispatch(Signed(kPeerRevokePath, RevokeRxC(), kSecretBC, "10.0.0.3", "192.0.2.3", kNow));
  ASSERT_EQ(rep.status, 200) << rep.body;
  EXPECT_EQ(json::parse(rep.body)["unmapped"], json::array({"to-c"}));
  EXPECT_FALSE(b_->Tables().pagemap[0].mapped());
}

// Before: a captured request (bearer secret in clear) worked again and again.
TEST_F(PeerAuthTest, ReplayedAndStaleRequestsAreRefused) {
  const auto req = Signed(kPeerRevokePath, RevokeRxC(), kSecretBC, "10.0.0.3", "192.0.2.3", kNow);
  auto grant = Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow);
  ASSERT_EQ(router_.Dispatch(grant).status, 200);
  ExpectRefused(router_.Dispatch(grant), 401, "nonce already used");
  // Replayed after the window: the timestamp is stale.
  now_ += 31;
  ExpectRefused(router_.Dispatch(req), 401, "off this node's clock");
  // A body swapped under a valid signature, or another path.
  now_ = kNow;
  auto swapped = Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow);
  swapped.body = json{{"export", "rx"}, {"offset", 4096}, {"length", 4096}}.dump();
  ExpectRefused(router_.Dispatch(swapped), 401, "signature does not verify");
  auto moved = req;
  moved.path = kPeerGrantPath;
  ExpectRefused(router_.Dispatch(moved), 401, "signature does not verify");
}

TEST_F(PeerAuthTest, WrongSecretMissingSignatureAndUnknownPeerAreRefused) {
  ExpectRefused(router_.Dispatch(Signed(kPeerRevokePath, RevokeRxC(), std::string(40, 'x'), "10.0.0.3", "192.0.2.3",
                                        kNow)),
                401, "signature does not verify");
  // A's secret is no good for C, nor C's for A.
  ExpectRefused(router_.Dispatch(Signed(kPeerGrantPath, GrantRx(), kSecretBC, "10.0.0.1", "192.0.2.1", kNow)), 401,
                "signature does not verify");
  web::HttpRequest bare;
  bare.method = "POST";
  bare.path = kPeerRevokePath;
  bare.body = RevokeRxC().dump();
  bare.remote_address = "192.0.2.3";
  bare.authenticated = true;  // even a request the server let through with a bearer token
  ExpectRefused(router_.Dispatch(bare), 401, "unsigned peer request");
  ExpectRefused(router_.Dispatch(Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.9", "192.0.2.1", kNow)), 403,
                "unauthorised peer 10.0.0.9");
}

// Before: the TCP source was never looked at.
TEST_F(PeerAuthTest, WrongSourceAddressIsRefused) {
  ExpectRefused(router_.Dispatch(Signed(kPeerRevokePath, RevokeRxC(), kSecretBC, "10.0.0.3", "192.0.2.1", kNow)), 403,
                "request came from 192.0.2.1, not from its configured source 192.0.2.3");
}

TEST_F(PeerAuthTest, FullNonceCacheRefusesRatherThanForgets) {
  PeerAuthenticator small(b_->local.ip, b_peers_, PeerAuthConfig{std::chrono::seconds(30), 2}, [this] { return now_; });
  auto verify = [&](const web::HttpRequest& r) {
    return small.Verify(r.method, r.path, r.body, r.headers, r.remote_address);
  };
  const auto first = Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow);
  ASSERT_TRUE(verify(first).ok());
  ASSERT_TRUE(verify(Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow)).ok());
  auto third = verify(Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", kNow));
  EXPECT_EQ(third.status().code(), StatusCode::kUnavailable) << third.status().ToString();
  EXPECT_EQ(verify(first).status().code(), StatusCode::kUnauthenticated);  // still remembered
  now_ += 31;  // the first two are stale now: their room is free again
  EXPECT_TRUE(verify(Signed(kPeerGrantPath, GrantRx(), kSecretAB, "10.0.0.1", "192.0.2.1", now_)).ok());
}

// --- what a peer's answers can make this node do ---------------------------

// A transport whose peer answers whatever the test scripts.
class ScriptedTransport : public PeerTransport {
 public:
  StatusOr<json> Post(const PeerSpec&, const std::string&, const json& body) override {
    asked = body;
    return answer;
  }
  StatusOr<json> answer = json::object();
  json asked;
};

TEST(HostileAnswers, GrantOutsideTheAskedWindowNeverReachesThePageMap) {
  Bench bench;
  Nic& a = bench.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
  Nic& b = bench.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
  bench.neighbours[b.local.ip] = b.local.mac;
  ScriptedTransport peer;
  auto prov = Provisioner::Open(*a.rec, a.local, a.pool);
  ASSERT_TRUE(prov.ok());
  IpnumaService svc(std::move(*prov), peer, [&](uint32_t ip) -> std::optional<MacAddr> {
    auto it = bench.neighbours.find(ip);
    return it == bench.neighbours.end() ? std::nullopt : std::optional<MacAddr>(it->second);
  });
  ASSERT_TRUE(svc.Start({{PeerOf(b)}, {}, {}}).ok());
  const auto before = a.Bytes();
  const uint64_t base = kPoolB + 0x10000;
  struct Case {
    const char* why;
    json answer;
    const char* says;
  } cases[] = {
      {"misaligned window", {{"export_base", base}, {"export_length", 0x8000}, {"window_base", base + 0x1010}},
       "window_base is not the 4 KiB aligned export_base + offset"},
      {"another window", {{"export_base", base}, {"export_length", 0x8000}, {"window_base", base + 0x3000}},
       "window_base is not the 4 KiB aligned export_base + offset"},
      {"beyond the export", {{"export_base", base}, {"export_length", 0x1000}, {"window_base", base + 0x1000}},
       "does not fit the export"},
      {"beyond 48 bits",
       {{"export_base", 0xFFFFFFFFF000ull}, {"export_length", 0x10000}, {"window_base", 0xFFFFFFFFF000ull + 0x1000}},
       "below 2^48"},
      {"wraps around", {{"export_base", 0x1000}, {"export_length", 0xFFFFFFFFFFFFF000ull}, {"window_base", 0x2000}},
       "below 2^48"},
      {"negative", {{"export_base", -4096}, {"export_length", 0x8000}, {"window_base", 0}}, "'export_base'"},
  };
  for (const auto& c : cases) {
    peer.answer = c.answer;
    Status st = svc.AddMapping(Mapping("m", "b", "rx", 0x1000, 8, 2));
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << c.why << ": " << st.ToString();
    EXPECT_NE(st.message().find(c.says), std::string::npos) << c.why << ": " << st.message();
    EXPECT_TRUE(a.Bytes() == before) << c.why;
  }
  // A well-formed answer is written (the bench itself can accept grants).
  peer.answer = json{{"export_base", base}, {"export_length", 0x8000}, {"window_base", base + 0x1000}};
  ASSERT_TRUE(svc.AddMapping(Mapping("m", "b", "rx", 0x1000, 8, 2)).ok());
  EXPECT_EQ(a.Tables().pagemap[9].remote_pa, base + 0x2000);
}

// A one-shot HTTP server on loopback that answers every request with `reply`.
class FakePeer {
 public:
  explicit FakePeer(std::string reply) : reply_(std::move(reply)) {
    fd_ = fibnic::testing::BoundTcpSocket("127.0.0.1", &port_);
    EXPECT_EQ(::listen(fd_, 4), 0);
    thread_ = std::thread([this] {
      const int c = ::accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      // The whole request (unread bytes would make close() reset the answer).
      std::string in;
      char buf[4096];
      size_t want = std::string::npos;
      while (want == std::string::npos || in.size() < want) {
        const ssize_t n = ::read(c, buf, sizeof buf);
        if (n <= 0) break;
        in.append(buf, static_cast<size_t>(n));
        const size_t end = in.find("\r\n\r\n");
        if (want == std::string::npos && end != std::string::npos) {
          std::string head = in.substr(0, end);
          for (auto& ch : head) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
          const size_t cl = head.find("content-length: ");
          want = end + 4 + (cl == std::string::npos ? 0 : std::stoul(head.substr(cl + 16)));
        }
      }
      request = in;
      size_t off = 0;
      while (off < reply_.size()) {  // the client may stop reading: no SIGPIPE
        const ssize_t n = ::send(c, reply_.data() + off, reply_.size() - off, MSG_NOSIGNAL);
        if (n <= 0) break;
        off += static_cast<size_t>(n);
      }
      ::close(c);
    });
  }
  ~FakePeer() {
    ::shutdown(fd_, SHUT_RDWR);
    thread_.join();
    ::close(fd_);
  }
  PeerSpec Spec() const {
    return PeerSpec{"evil", IpAddr::Parse("10.0.0.2").value().v4(), "127.0.0.1:" + std::to_string(port_),
                    std::string(32, 's'), IpAddr::Parse("127.0.0.1").value()};
  }
  std::string request;

 private:
  std::string reply_;
  int fd_ = -1;
  uint16_t port_ = 0;
  std::thread thread_;
};

std::string HttpAnswer(int status, const std::string& content_type, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: " + content_type +
         "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

StatusOr<json> Ask(FakePeer& peer) {
  HttpPeerTransport t(IpAddr::Parse("10.0.0.1").value().v4(), "127.0.0.1", std::chrono::seconds(5));
  return t.Post(peer.Spec(), kPeerGrantPath, json{{"export", "rx"}, {"offset", 0}, {"length", 4096}});
}

// Before: up to 256 MiB were read and kept.
TEST(HostileAnswers, OversizedAnswerIsNotRead) {
  FakePeer peer(HttpAnswer(200, "application/json", "{\"x\":\"" + std::string(70 * 1024, 'y') + "\"}"));
  auto ans = Ask(peer);
  ASSERT_FALSE(ans.ok());
  EXPECT_EQ(ans.status().code(), StatusCode::kUnavailable) << "the peer's fault, with its reason: " << ans.status().ToString();
  EXPECT_NE(ans.status().message().find("larger than 65536 bytes"), std::string::npos) << ans.status().ToString();
  EXPECT_LT(ans.status().message().size(), 400u);
}

// Before: the body went verbatim into the error, the journal and /status:
// its newlines forged log records.
TEST(HostileAnswers, NonJsonAnswerIsEscapedAndTruncated) {
  const std::string evil = "oops\nipnumad[1]: <3>FORGED record\r\n\x1b[31m" + std::string(5000, 'z');
  for (int status : {200, 500}) {
    FakePeer peer(HttpAnswer(status, "text/plain", evil));
    auto ans = Ask(peer);
    ASSERT_FALSE(ans.ok());
    EXPECT_EQ(ans.status().code(), StatusCode::kUnavailable) << ans.status().ToString();
    const std::string msg = ans.status().ToString();
    EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\r'), std::string::npos) << msg;
    EXPECT_EQ(msg.find('\x1b'), std::string::npos) << msg;
    EXPECT_NE(msg.find("oops\\nipnumad[1]: <3>FORGED record\\x0d\\n\\x1b[31m"), std::string::npos) << msg;
    EXPECT_NE(msg.find("(" + std::to_string(evil.size()) + " bytes)"), std::string::npos) << msg;
    EXPECT_LT(msg.size(), 600u) << msg;
  }
  // An error object whose message carries newlines.
  FakePeer peer(HttpAnswer(409, "application/json",
                           json{{"error", {{"code", "FAILED_PRECONDITION"}, {"message", "no\nFORGED"}}}}.dump()));
  auto ans = Ask(peer);
  EXPECT_EQ(ans.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(ans.status().message().find('\n'), std::string::npos) << ans.status().message();
  EXPECT_NE(ans.status().message().find("no\\nFORGED"), std::string::npos) << ans.status().message();
}

TEST(HostileAnswers, RequestsAreSignedAndCarryNoFrom) {
  FakePeer peer(HttpAnswer(200, "application/json", "{}"));
  ASSERT_TRUE(Ask(peer).ok());
  std::string lower = peer.request;
  for (auto& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (const char* h : {"x-ipnuma-peer: 10.0.0.1", "x-ipnuma-timestamp: ", "x-ipnuma-nonce: ", "x-ipnuma-signature: "}) {
    EXPECT_NE(lower.find(h), std::string::npos) << h << " in " << peer.request;
  }
  EXPECT_EQ(lower.find("authorization"), std::string::npos) << peer.request;
  EXPECT_EQ(lower.find("\"from\""), std::string::npos) << peer.request;
}

// --- configuration --------------------------------------------------------

class SecretFiles : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p.string();
  }
  std::string Config(const std::string& secret_file, const std::string& extra = "",
                     const std::string& peer_api = "{listen: '192.0.2.10:7470'}",
                     const std::string& neighbours = "{source: static}") {
    return "device: {kind: file, path: /tmp/x.bar}\n"
           "local: {address: 10.0.0.1, netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '02:00:00:00:00:01'}\n"
           "pool: {kind: reserved, base: 0x1000, size: 0x1000}\n"
           "neighbours: " + neighbours + "\n"
           "peer_api: " + peer_api + "\n" + extra +
           "peers:\n  - {name: b, address: 10.0.0.2, api: '192.0.2.20:7470', secret_file: " + secret_file + "}\n";
  }
  fibnic::testing::TempDir dir_;
};

TEST_F(SecretFiles, ReadableByOthersIsRefusedNamingTheFile) {
  const std::string f = Write("open.secret", std::string(40, 'k') + "\n", 0644);
  auto s = ReadSecretFile(f);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(f + " has mode 0644"), std::string::npos) << s.status().ToString();
  EXPECT_NE(s.status().message().find("chmod 600"), std::string::npos) << s.status().ToString();
  auto c = ParseIpnumadConfig(Config(f), "t.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("peers[0].secret_file"), std::string::npos) << c.status().ToString();
  EXPECT_NE(c.status().message().find("mode 0644"), std::string::npos) << c.status().ToString();
  EXPECT_TRUE(ReadSecretFile(Write("ok.secret", std::string(40, 'k') + "\n", 0600)).ok());
  EXPECT_TRUE(ReadSecretFile(Write("ro.secret", std::string(40, 'k') + "\n", 0400)).ok());
}

// The packaged service runs as user ipnuma: a secret left to root (0600, so
// its mode passes) must be refused naming whose it is and whose it must be.
// Run as another user in a child; needs root to become one.
TEST_F(SecretFiles, SecretTheServiceUserCannotReadNamesOwnerAndFix) {
  const std::string f = Write("root.secret", std::string(40, 'k') + "\n", 0600);
  ASSERT_EQ(::chmod(dir_.path().c_str(), 0755), 0);
  const std::string msg = ::fibnic::testing::AsNobody([&] {
    auto r = ReadSecretFile(f);
    return r.ok() ? std::string("read it") : r.status().ToString();
  });
  EXPECT_NE(msg.find(f + " belongs to uid 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("(uid 65534) cannot read it"), std::string::npos) << msg;
  EXPECT_NE(msg.find("chown ipnuma:ipnuma " + f), std::string::npos) << msg;
}

TEST_F(SecretFiles, ShortSecretIsRefused) {
  const std::string f = Write("short.secret", std::string(31, 'k') + "\n", 0600);
  auto c = ParseIpnumadConfig(Config(f), "t.yaml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("holds 31 bytes; at least 32"), std::string::npos) << c.status().ToString();
  auto good = ParseIpnumadConfig(Config(Write("long.secret", std::string(32, 'k') + "\n", 0600)), "t.yaml");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  ASSERT_EQ(good->desired.peers.size(), 1u);
  EXPECT_EQ(good->desired.peers[0].secret, std::string(32, 'k'));
  EXPECT_EQ(good->desired.peers[0].source.ToString(), "192.0.2.20");  // its api address by default
}

TEST_F(SecretFiles, ExposedListenersAndTheOldSharedSecretAreRefused) {
  const std::string f = Write("k.secret", std::string(40, 'k'), 0600);
  auto expect_error = [&](const std::string& text, const std::string& says) {
    auto c = ParseIpnumadConfig(text, "t.yaml");
    ASSERT_FALSE(c.ok()) << says;
    EXPECT_NE(c.status().message().find(says), std::string::npos) << c.status().ToString();
  };
  expect_error(Config(f, "", "{listen: '0.0.0.0:7470'}"), "peer_api.listen: '0.0.0.0:7470' listens on every interface");
  expect_error(Config(f, "", "{timeout: 1s}"), "peer_api.listen: missing required key");
  expect_error(Config(f, "", "{listen: '192.0.2.10:7470', secret_file: " + f + "}"),
               "peer_api.secret_file: no longer used");
  expect_error(Config(f, "api: {listen: '192.0.2.10:7471'}\n"), "api.listen: '192.0.2.10:7471' is beyond loopback");
  EXPECT_TRUE(ParseIpnumadConfig(Config(f, "api: {listen: '192.0.2.10:7471', token_file: /x}\n"), "t.yaml").ok());
  expect_error(Config(f, "", "{listen: '192.0.2.10:7470'}",
                      "{source: static, static: [{address: 10.0.0.2, mac: 'ff:ff:ff:ff:ff:ff'}]}"),
               "'ff:ff:ff:ff:ff:ff' is not a unicast MAC");
}

// --- smaller ones ----------------------------------------------------------

class OperatorApi : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = &bench_.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
    b_ = &bench_.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
    for (Nic* n : {a_, b_}) bench_.neighbours[n->local.ip] = n->local.mac;
    ASSERT_TRUE(bench_.Start(*b_, {{PeerOf(*a_)}, {Export("rx", kPoolB, 0x10000, "10.0.0.0/24")}, {}}).ok());
    ASSERT_TRUE(bench_.Start(*a_, {{PeerOf(*b_)}, {}, {}}).ok());
    ASSERT_TRUE(AddOperatorRoutes(router_, *a_->svc).ok());
  }
  web::HttpReply Post(const std::string& path, const json& body) {
    web::HttpRequest r;
    r.method = "POST";
    r.path = path;
    r.body = body.dump();
    r.authenticated = true;
    return router_.Dispatch(r);
  }
  Bench bench_;
  Nic *a_ = nullptr, *b_ = nullptr;
  web::Router router_;
};

// Before: "010" was read as octal 8.
TEST_F(OperatorApi, NumbersAreDecimalOrHexNeverOctal) {
  auto rep = Post("/api/v1/ipnuma/mappings",
                  {{"name", "m"}, {"peer", "b"}, {"export", "rx"}, {"offset", "0x1000"}, {"first_page", "010"},
                   {"pages", "1"}});
  ASSERT_EQ(rep.status, 200) << rep.body;
  EXPECT_TRUE(a_->Tables().pagemap[10].mapped());
  EXPECT_FALSE(a_->Tables().pagemap[8].mapped());
  EXPECT_EQ(a_->Tables().pagemap[10].remote_pa, kPoolB + 0x1000);
  rep = Post("/api/v1/ipnuma/mappings",
             {{"name", "n"}, {"peer", "b"}, {"export", "rx"}, {"first_page", "0o7"}, {"pages", "1"}});
  EXPECT_EQ(rep.status, 400) << rep.body;
  EXPECT_NE(rep.body.find("'first_page' = '0o7' is not a number"), std::string::npos) << rep.body;
}

// Before: a '/' made an export that DELETE /exports/{name} could never name.
TEST_F(OperatorApi, ExportAndMappingNamesAreChecked) {
  const auto before = a_->Bytes();
  for (const char* bad : {"a/b", "..", "-x", "sp ace", "x\ny"}) {
    auto rep = Post("/api/v1/ipnuma/exports",
                    {{"name", bad}, {"base", kPoolA}, {"length", 4096}, {"allow", "10.0.0.0/24"}});
    EXPECT_EQ(rep.status, 400) << bad << ": " << rep.body;
    EXPECT_NE(rep.body.find("allowed 1-64 characters"), std::string::npos) << rep.body;
  }
  auto rep = Post("/api/v1/ipnuma/exports",
                  {{"name", std::string(65, 'x')}, {"base", kPoolA}, {"length", 4096}, {"allow", "10.0.0.0/24"}});
  EXPECT_EQ(rep.status, 400) << rep.body;
  rep = Post("/api/v1/ipnuma/mappings", {{"name", "m/1"}, {"peer", "b"}, {"export", "rx"}, {"first_page", 1},
                                         {"pages", 1}});
  EXPECT_EQ(rep.status, 400) << rep.body;
  EXPECT_TRUE(a_->Bytes() == before);
  rep = Post("/api/v1/ipnuma/exports",
             {{"name", "Rx_0.a-b"}, {"base", kPoolA}, {"length", 4096}, {"allow", "10.0.0.0/24"}});
  EXPECT_EQ(rep.status, 200) << rep.body;
}

// Before: a broadcast or multicast MAC from the neighbour table went into the
// PCID entry: every page write to that peer would be flooded.
TEST_F(OperatorApi, GroupMacsNeverReachThePcidTable) {
  const auto before = a_->Bytes();
  for (const char* m : {"ff:ff:ff:ff:ff:ff", "01:00:5e:00:00:01", "33:33:00:00:00:01"}) {
    auto st = a_->svc->OnNeighbour(b_->local.ip, Mac(m));
    EXPECT_EQ(st.status().code(), StatusCode::kInvalidArgument) << m;
    EXPECT_NE(st.status().message().find("not a unicast address"), std::string::npos) << st.status().ToString();
  }
  EXPECT_TRUE(a_->Bytes() == before);
  // The kernel's table: such an entry is ignored (and forgets an earlier MAC).
  boost::asio::io_context io;
  std::vector<std::string> logged;
  KernelNeighbours kn(io, "eth1", [&](const std::string& s) { logged.push_back(s); });
  int changes = 0;
  kn.OnChange([&](uint32_t, const MacAddr&) { ++changes; });
  kn.UpsertNeighbor(Neighbor{IpAddr::V4(b_->local.ip), Mac("02:00:00:00:00:22"), 0, NeighState::kReachable});
  kn.UpsertNeighbor(Neighbor{IpAddr::V4(b_->local.ip), Mac("01:00:5e:00:00:01"), 0, NeighState::kReachable});
  EXPECT_EQ(changes, 1);
  EXPECT_FALSE(kn.Lookup(b_->local.ip).has_value());
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_NE(logged[0].find("broadcast/multicast MAC 01:00:5e:00:00:01"), std::string::npos) << logged[0];
}

}  // namespace
}  // namespace fibnic::ipnuma::testing
