// Peer MACs from the kernel's neighbour table (fibnicd's kernel source), in a
// private network namespace (root): `ip neigh replace` for a peer's address,
// or for the gateway when the peer is off-segment, rewrites that peer's PCID
// entry in place on the event.
//  - In process: the NIC sits behind a RecordingBar whose observer runs the
//    RuleChecker after every single bus write while pages name the PC IDs
//    being rewritten; the sequence of MACs each PCID entry holds while VALID
//    is checked exactly (neighbours on other interfaces, failed or deleted
//    entries never reach the NIC).
//  - A real ipnumad (file-backed BAR, reconcile_interval 1h so only events
//    can explain a change): the BAR file's PCID entry changes to the new MAC
//    within a bounded poll, and every sampled state is one the update rules allow.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <thread>

#include "ipnuma/kernel_neighbours.h"
#include "tests/ipnuma/two_nics.h"
#include "tests/support/netns_util.h"
#include "tests/support/on_loop.h"

namespace fibnic::ipnuma::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::fibnic::testing::MustSh;
using ::fibnic::testing::WaitFor;

constexpr uint64_t kPoolA = 0x100000000ull;
constexpr uint64_t kPoolB = 0x200000000ull;
constexpr uint64_t kPoolC = 0x300000000ull;

// This namespace: n0 (10.0.0.1/24) faces the IP-NUMA segment; n1 does not.
void MakeInterfaces() {
  ::fibnic::testing::EnterNewNetns();
  MustSh("ip link add n0 type veth peer name n0p && ip link add n1 type veth peer name n1p");
  MustSh("ip addr add 10.0.0.1/24 dev n0 && ip addr add 10.5.0.1/24 dev n1");
  MustSh("for i in n0 n0p n1 n1p; do ip link set $i up; done");
}

void Neigh(const std::string& ip, const std::string& mac, const std::string& dev = "n0") {
  MustSh("ip neigh replace " + ip + " lladdr " + mac + " dev " + dev);
}

// The VALID PCID entry for ip, if any.
std::optional<regs::PcidEntry> PcidOf(const NicTables& t, uint32_t ip) {
  for (size_t i = 1; i < t.pcid.size(); ++i) {
    if (t.pcid[i].valid() && t.pcid[i].ip == ip) return t.pcid[i];
  }
  return std::nullopt;
}

class KernelNeighboursTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeInterfaces();
    a_ = &bench_.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
    b_ = &bench_.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
    c_ = &bench_.AddNic("c", "10.9.0.3", "02:00:00:00:00:03", kPoolC);  // off a's segment
    // b and c look up a (and c its gateway) in the bench's table; a uses the kernel.
    bench_.neighbours[Ip("10.0.0.1")] = a_->local.mac;
    bench_.neighbours[Ip("10.9.0.254")] = Mac("02:00:00:00:09:fe");
    // After each write to a: the rules, then the MAC each peer's VALID entry holds.
    a_->rec->set_observer([this](const BusWrite&, size_t) {
      Status st = bench_.checker.Check(a_->checker_id);
      const NicTables t = a_->Tables();
      for (auto [ip, seen] : {std::pair{b_->local.ip, &seen_b_}, std::pair{c_->local.ip, &seen_c_}}) {
        auto e = PcidOf(t, ip);
        if (e && (seen->empty() || seen->back() != e->mac.ToString())) seen->push_back(e->mac.ToString());
      }
      return st;
    });
  }
  void TearDown() override {
    if (kernel_) boost::asio::post(io_, [this] { kernel_->Stop(); });
    work_.reset();
    io_.stop();
    if (io_thread_.joinable()) io_thread_.join();
    EXPECT_EQ(bench_.checker.first_violation(), "");
    EXPECT_TRUE(event_errors_.empty()) << event_errors_.front();
  }

  // a's service with its MACs from the kernel, wired as ipnumad wires it.
  void StartA(const DesiredState& desired) {
    kernel_ = std::make_unique<KernelNeighbours>(io_, "n0", [](const std::string& m) { std::cout << m << "\n"; });
    ASSERT_TRUE(kernel_->Start(5s).ok());
    auto prov = Provisioner::Open(*a_->rec, a_->local, a_->pool);
    ASSERT_TRUE(prov.ok());
    a_->svc = std::make_unique<IpnumaService>(std::move(*prov), *a_->transport,
                                              [k = kernel_.get()](uint32_t ip) { return k->Lookup(ip); });
    kernel_->OnChange([this](uint32_t ip, const MacAddr& mac) {
      auto r = a_->svc->OnNeighbour(ip, mac);
      if (!r.ok()) event_errors_.push_back(r.status().ToString());
    });
    ASSERT_TRUE(a_->svc->Start(desired).ok());
    io_thread_ = std::thread([this] { io_.run(); });
  }
  // a's tables as the io thread (which applies the events) sees them.
  NicTables TablesA() {
    return fibnic::testing::OnLoop(io_, [&] { return a_->Tables(); });
  }
  bool WaitMac(const Nic& peer, const char* mac) {
    return WaitFor(
        [&] {
          auto e = PcidOf(TablesA(), peer.local.ip);
          return e && e->mac == Mac(mac);
        },
        5s);
  }

  Bench bench_;
  Nic *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
  boost::asio::io_context io_;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work_{io_.get_executor()};
  std::unique_ptr<KernelNeighbours> kernel_;
  std::thread io_thread_;
  std::vector<std::string> seen_b_, seen_c_, event_errors_;
};

TEST_F(KernelNeighboursTest, NeighbourEventsRewritePcidInPlace) {
  ASSERT_TRUE(bench_.Start(*b_, {{PeerOf(*a_)}, {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.0/24")}, {}}).ok());
  ASSERT_TRUE(bench_.Start(*c_, {{PeerOf(*a_)}, {Export("rx", kPoolC, 0x2000, "10.0.0.1/32")}, {}}).ok());
  // What the kernel knows before ipnumad starts (the first dump).
  Neigh("10.0.0.2", "02:00:00:00:00:02");
  Neigh("10.0.0.254", "02:00:00:00:00:fe");
  StartA({{PeerOf(*b_), PeerOf(*c_)},
          {},
          {Mapping("to-b", "b", "rx", 0, 0, 2), Mapping("to-c", "c", "rx", 0, 4, 2)}});
  NicTables t = TablesA();
  auto eb = PcidOf(t, b_->local.ip);
  auto ec = PcidOf(t, c_->local.ip);
  ASSERT_TRUE(eb && ec) << "peers not resolved from the kernel's dump";
  EXPECT_EQ(eb->mac, Mac("02:00:00:00:00:02"));
  EXPECT_FALSE(eb->via_gateway());
  EXPECT_EQ(ec->mac, Mac("02:00:00:00:00:fe"));  // off-segment: the gateway's
  EXPECT_TRUE(ec->via_gateway());
  ASSERT_TRUE(t.pagemap[0].mapped() && t.pagemap[4].mapped());  // pages name both PC IDs

  // The peer's MAC changes; then the gateway's.
  Neigh("10.0.0.2", "02:00:00:00:00:22");
  ASSERT_TRUE(WaitMac(*b_, "02:00:00:00:00:22"));
  Neigh("10.0.0.254", "02:00:00:00:00:ef");
  ASSERT_TRUE(WaitMac(*c_, "02:00:00:00:00:ef"));
  EXPECT_TRUE(PcidOf(TablesA(), c_->local.ip)->via_gateway());

  // Not the segment's interface: ignored. Back on n0: taken.
  Neigh("10.0.0.2", "02:00:00:00:00:99", "n1");
  Neigh("10.0.0.2", "02:00:00:00:00:33");
  ASSERT_TRUE(WaitMac(*b_, "02:00:00:00:00:33"));

  // Gone from the kernel (aged out, deleted): the NIC keeps the last MAC,
  // also through a periodic reconcile; a failed entry is no MAC either.
  MustSh("ip neigh del 10.0.0.2 dev n0");
  MustSh("ip neigh replace 10.0.0.254 dev n0 nud failed");
  Neigh("10.0.0.77", "02:00:00:00:00:77");  // nobody's: changes nothing, and marks the events' end
  ASSERT_TRUE(WaitFor([&] { return kernel_->Lookup(Ip("10.0.0.77")).has_value(); }, 5s));
  EXPECT_FALSE(kernel_->Lookup(Ip("10.0.0.2")));
  std::promise<Status> rec;
  boost::asio::post(io_, [&] { rec.set_value(a_->svc->Reconcile()); });
  ASSERT_TRUE(rec.get_future().get().ok());
  t = TablesA();
  EXPECT_EQ(PcidOf(t, b_->local.ip)->mac, Mac("02:00:00:00:00:33"));
  EXPECT_EQ(PcidOf(t, c_->local.ip)->mac, Mac("02:00:00:00:00:ef"));
  for (uint32_t p : {0u, 1u, 4u, 5u}) EXPECT_TRUE(t.pagemap[p].mapped()) << p;

  // Exactly these MACs were ever VALID, in this order.
  EXPECT_EQ(seen_b_, (std::vector<std::string>{"02:00:00:00:00:02", "02:00:00:00:00:22", "02:00:00:00:00:33"}));
  EXPECT_EQ(seen_c_, (std::vector<std::string>{"02:00:00:00:00:fe", "02:00:00:00:00:ef"}));
  EXPECT_GT(bench_.checker.checks(), 0u);
}

TEST_F(KernelNeighboursTest, PeerWithoutNeighbourWaitsForTheEvent) {
  ASSERT_TRUE(bench_.Start(*b_, {{PeerOf(*a_)}, {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.0/24")}, {}}).ok());
  StartA({{PeerOf(*b_)}, {}, {Mapping("to-b", "b", "rx", 0, 0, 1)}});
  EXPECT_FALSE(PcidOf(TablesA(), b_->local.ip));
  EXPECT_FALSE(TablesA().pagemap[0].mapped());  // no MAC: the mapping waits
  Neigh("10.0.0.2", "02:00:00:00:00:02");
  ASSERT_TRUE(WaitMac(*b_, "02:00:00:00:00:02"));
  std::promise<Status> rec;
  boost::asio::post(io_, [&] { rec.set_value(a_->svc->Reconcile()); });
  ASSERT_TRUE(rec.get_future().get().ok());
  const NicTables t = TablesA();
  ASSERT_TRUE(t.pcid[1].valid());
  EXPECT_EQ(t.pcid[1].ip, b_->local.ip);
  EXPECT_EQ(t.pagemap[0], (regs::PagemapEntry{kPoolB + 0x1000, 1}));
}

// ---- a real ipnumad --------------------------------------------------------

std::vector<uint8_t> ReadBytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

class KernelNeighboursDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MakeInterfaces();
    char tmpl[] = "/tmp/ipnumad-neigh-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ / "peer.secret") << "a-secret-of-at-least-32-bytes-shared-with-peers\n";
    fs::permissions(dir_ / "peer.secret", fs::perms::owner_read | fs::perms::owner_write);
    // A fresh namespace: these ports are free. Nothing listens at the peers'
    // APIs, so only PC IDs are provisioned (no mappings).
    std::ofstream(dir_ / "a.yaml")
        << "device: {kind: file, path: " << (dir_ / "a.bar").string()
        << ", model: {pages: 64, pcid_entries: 4, region_entries: 2}}\n"
        << "local: {address: 10.0.0.1, netmask: 255.255.255.0, gateway: 10.0.0.254, mac: '02:00:00:00:00:01'}\n"
        << "pool: {kind: reserved, base: 0x100000000, size: 0x100000}\n"
        << "neighbours: {source: kernel, interface: n0}\n"
        << "api: {listen: '127.0.0.1:7471'}\n"
        << "peer_api: {listen: '127.0.0.1:7470', timeout: 100ms}\n"
        << "reconcile_interval: 1h\n"
        << "peers:\n"
        << "  - {name: b, address: 10.0.0.2, api: '127.0.0.1:7480', secret_file: " << (dir_ / "peer.secret").string()
        << "}\n"
        << "  - {name: c, address: 10.9.0.3, api: '127.0.0.1:7490', secret_file: " << (dir_ / "peer.secret").string()
        << "}\n";
  }
  void TearDown() override {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int st = 0;
      ::waitpid(pid_, &st, 0);
      EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "ipnumad exit status " << st;
    }
    if (HasFailure()) {
      std::ifstream in(dir_ / "a.log");
      std::cerr << "---- ipnumad log\n" << in.rdbuf() << "\n";
    }
    fs::remove_all(dir_);
  }
  void Start() {
    pid_ = ::fork();
    if (pid_ == 0) {
      const int fd = ::open((dir_ / "a.log").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execl(IPNUMAD_BIN, "ipnumad", "--config", (dir_ / "a.yaml").c_str(), nullptr);
      ::_exit(127);
    }
  }
  // Polls the BAR file until ip's VALID entry holds want. Every sample must be
  // a state the update rules allow: ip's entry VALID with a MAC it was given
  // (allowed), or invalid (mid-rewrite, or not resolved yet).
  bool WaitBarMac(uint32_t ip, const char* want, const std::vector<std::string>& allowed, bool via_gateway) {
    return WaitFor(
        [&] {
          auto bytes = ReadBytes(dir_ / "a.bar");
          if (bytes.size() < regs::kOffPagemap) return false;
          regs::Caps caps = regs::Caps::Decode(bytes[8] | bytes[9] << 8 | bytes[10] << 16 | bytes[11] << 24,
                                               bytes[12] | bytes[13] << 8 | bytes[14] << 16 | bytes[15] << 24);
          if (bytes.size() < caps.bar0_bytes()) return false;
          auto e = PcidOf(DecodeNicTables(bytes.data(), caps), ip);
          if (!e) return false;
          EXPECT_NE(std::find(allowed.begin(), allowed.end(), e->mac.ToString()), allowed.end())
              << regs::Ipv4String(ip) << " VALID with " << e->mac.ToString();
          EXPECT_EQ(e->via_gateway(), via_gateway) << regs::Ipv4String(ip);
          return e->mac == Mac(want);
        },
        10s);
  }
  fs::path dir_;
  pid_t pid_ = -1;
};

TEST_F(KernelNeighboursDaemonTest, BarFileFollowsTheKernelsNeighbours) {
  Neigh("10.0.0.2", "02:00:00:00:00:02");  // b's, known before the start
  Start();
  const uint32_t b = Ip("10.0.0.2"), c = Ip("10.9.0.3");
  ASSERT_TRUE(WaitBarMac(b, "02:00:00:00:00:02", {"02:00:00:00:00:02"}, false));
  // c is off-segment and the gateway is not resolved: no entry until it is.
  Neigh("10.0.0.254", "02:00:00:00:00:fe");
  ASSERT_TRUE(WaitBarMac(c, "02:00:00:00:00:fe", {"02:00:00:00:00:fe"}, true));
  Neigh("10.0.0.2", "02:00:00:00:00:22");
  ASSERT_TRUE(WaitBarMac(b, "02:00:00:00:00:22", {"02:00:00:00:00:02", "02:00:00:00:00:22"}, false));
  Neigh("10.0.0.254", "02:00:00:00:00:ef");
  ASSERT_TRUE(WaitBarMac(c, "02:00:00:00:00:ef", {"02:00:00:00:00:fe", "02:00:00:00:00:ef"}, true));
}

}  // namespace
}  // namespace fibnic::ipnuma::testing
