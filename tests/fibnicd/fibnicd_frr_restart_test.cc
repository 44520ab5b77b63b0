// The real fibnicd (file backend, kernel + FPM sources) beside real FRR
// (zebra -M dplane_fpm_nl + staticd + bgpd, an eBGP peer in another
// namespace), through restarts:
// - fibnicd restart: the device's state comes from the kernel's dump (zebra's
//   routes are the kernel's; zebra's FPM replay is not waited for); an
//   unchanged table writes 0 bytes and the BAR stays identical (so nothing
//   was punted or misforwarded in between);
// - zebra restart: the new zebra deletes from the kernel what it no longer
//   has; the device stops forwarding it as the kernel drops it.
#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <thread>

#include "device/fibnic_lookup.h"
#include "tests/fibnicd/daemon_harness.h"
#include "tests/sources/frr_harness.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::Child;
using testing::FrrHarness;
using testing::NotifySocket;
using testing::Sh;
using testing::WaitFor;

constexpr uint16_t kFpmPort = 2620;  // the test's own network namespace

class FibnicdFrrRestart : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::EnterNewNetns();
    dir = frr.dir() + "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    Sh("rm -rf " + dir + " && mkdir -p " + dir);
    testing::WriteFile(dir + "/fibnicd.yaml",
                       "device:\n  backend: file\n  path: " + dir + "/bar0.img\n"
                       "ports:\n  - {interface: r-eth0, port: 1, mac: '02:00:00:00:00:01'}\n"
                       "sources:\n  kernel: {enabled: true}\n"
                       "  fpm: {enabled: true, listen: 127.0.0.1:" + std::to_string(kFpmPort) + "}\n"
                       "web: {enabled: false}\n");
  }
  void TearDown() override {
    daemon.reset();
    if (HasFailure()) std::cout << Sh("tail -n 40 " + log()) << frr.Logs() << std::endl;
  }

  std::string log() const { return dir + "/fibnicd.log"; }
  // FIBNIC_FIBNICD=path runs another build's fibnicd (to show a bug on older code).
  static std::string Binary() {
    const char* other = getenv("FIBNIC_FIBNICD");
    return other && *other ? other : FIBNICD_BIN;
  }
  void StartFibnicd() {
    notify.reset();  // its destructor unlinks the path the new one binds
    notify = std::make_unique<NotifySocket>(dir + "/notify");
    ASSERT_TRUE(notify->ok());
    Sh("echo '--- start' >> " + log());
    daemon = std::make_unique<Child>(
        std::vector<std::string>{"/bin/sh", "-c", "exec " + Binary() + " --config " + dir + "/fibnicd.yaml >> " + log() + " 2>&1"},
        std::vector<std::string>{"NOTIFY_SOCKET=" + notify->path()});
  }
  bool Ready(std::chrono::seconds limit) {
    std::vector<std::string> seen;
    return notify->WaitFor("READY=1", limit, &seen);
  }
  // SIGTERM; returns the daemon's last log line ("stopped: N batches, M device writes, ...").
  std::string StopFibnicd() {
    notify->Drain(0ms);  // read what the daemon sent, as systemd would (unread, its notifications are dropped)
    daemon->Signal(SIGTERM);
    EXPECT_EQ(daemon->Wait(20s, [this] { notify->Drain(0ms); }), 0) << "fibnicd did not stop cleanly";
    daemon.reset();
    const std::string last = Sh("tail -n 1 " + log());
    return last;
  }
  HwDecision Hw(const std::string& dst) {
    const std::vector<char> bar = testing::ReadFile(dir + "/bar0.img");
    return HwLookup(reinterpret_cast<const uint8_t*>(bar.data()), bar.size(), *IpAddr::Parse(dst));
  }
  bool ForwardsToPeer(const std::string& dst) {
    const HwDecision d = Hw(dst);
    return d.forward && d.port == 1 && d.dst_mac == peer_mac;
  }
  bool KernelHas(const std::string& prefix) {
    return Sh("ip -4 route show " + prefix + " table 254").find(prefix.substr(0, prefix.find('/'))) != std::string::npos;
  }

  // FRR and fibnicd up, the device forwarding the peer's routes.
  void BringUp() {
  frr.Setup(kFpmPort, {"203.0.113.0/24", "198.51.100.0/24"}, /*nhg=*/true);
  peer_mac = frr.PeerMac();
  // Cold start: zebra is not there and the kernel holds none of its routes,
  // so fibnicd does not wait for it.
  StartFibnicd();
  ASSERT_TRUE(Ready(20s)) << "no READY=1 on a cold start without zebra";
  frr.StartZebra();
  frr.StartStaticd();
  frr.StartRouterBgpd();
  frr.StartPeer();
  ASSERT_TRUE(WaitFor([&] { return frr.BgpEstablished(); }, 60s)) << "BGP session did not come up";
  ASSERT_TRUE(WaitFor([&] { return ForwardsToPeer("203.0.113.9") && ForwardsToPeer("198.51.100.9"); }, 60s))
      << "the device does not forward the BGP routes: 203.0.113.9 " << Hw("203.0.113.9").ToString();
  }

  FrrHarness frr;
  std::string dir;
  MacAddr peer_mac;
  std::unique_ptr<NotifySocket> notify;
  std::unique_ptr<Child> daemon;
};

TEST_F(FibnicdFrrRestart, RestartWithAnUnchangedTableWritesNothing) {
  BringUp();
  if (HasFatalFailure()) return;
  // Let the first replay be over, the IPv6 static's gateway be resolved and
  // the BAR be still for 2 s (a change of the host's own state while
  // fibnicd is down would rightly be written), then restart.
  WaitFor([&] { return Sh("grep -c 'replay over' " + log()) != "0\n"; }, 15s);
  ASSERT_TRUE(WaitFor([&] { return ForwardsToPeer("2001:db8:100::1"); }, 30s)) << Hw("2001:db8:100::1").ToString();
  std::vector<char> still = testing::ReadFile(dir + "/bar0.img");
  for (int calm = 0; calm < 20;) {
    std::this_thread::sleep_for(100ms);
    std::vector<char> now = testing::ReadFile(dir + "/bar0.img");
    calm = now == still ? calm + 1 : 0;
    still = std::move(now);
  }

  // fibnicd restart with FPM on: the kernel's dump is the device's state,
  // zebra reconnects and replays only to be answered. The table is
  // unchanged: 0 writes.
  const std::vector<char> before = testing::ReadFile(dir + "/bar0.img");
  StopFibnicd();
  ASSERT_EQ(testing::ReadFile(dir + "/bar0.img"), before) << "SIGTERM changed the BAR";
  for (int n = 1; n <= 2; ++n) {
    const auto t0 = std::chrono::steady_clock::now();
    StartFibnicd();
    ASSERT_TRUE(Ready(60s)) << "no READY=1 after restart " << n;
    const auto ready_ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    std::this_thread::sleep_for(1s);
    if (testing::ReadFile(dir + "/bar0.img") != before) {
      testing::WriteFile(dir + "/before.img", std::string(before.begin(), before.end()));
      ADD_FAILURE() << "restart " << n << " on an unchanged table rewrote the BAR (" << dir << "/before.img kept)";
    }
    EXPECT_TRUE(ForwardsToPeer("203.0.113.9")) << Hw("203.0.113.9").ToString();
    const std::string last = StopFibnicd();
    EXPECT_NE(last.find(" 0 device writes"), std::string::npos) << "restart " << n << " wrote to the device: " << last;
    std::cout << "fibnicd restart " << n << ": READY after " << ready_ms << " ms; " << last << std::endl;
  }

}

TEST_F(FibnicdFrrRestart, ZebraRestartFollowsTheKernelsDeletions) {
  BringUp();
  if (HasFatalFailure()) return;
  // zebra restart (with staticd and bgpd, as watchfrr does; SIGKILL: no
  // goodbye over FPM), a route withdrawn while they are down. The new zebra
  // deletes its predecessor's routes from the kernel; the device must stop
  // forwarding the withdrawn one as the kernel drops it.
  frr.StopZebra(SIGKILL);  // first: a zebra outliving bgpd would delete bgpd's routes itself
  frr.StopRouterBgpd(SIGKILL);
  frr.StopStaticd(SIGKILL);
  frr.PeerNetwork("198.51.100.0/24", false);
  ASSERT_TRUE(KernelHas("198.51.100.0/24"));
  ASSERT_TRUE(ForwardsToPeer("198.51.100.9")) << "zebra gone: the device keeps what the kernel keeps";
  frr.StartZebra();
  frr.StartStaticd();
  frr.StartRouterBgpd();
  ASSERT_TRUE(WaitFor([&] { return !KernelHas("198.51.100.0/24"); }, 30s)) << "the new zebra kept the old route";
  const auto dropped = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return !ForwardsToPeer("198.51.100.9"); }, 3s))
      << "the kernel dropped 198.51.100.0/24 but the device still forwards it: " << Hw("198.51.100.9").ToString();
  std::cout << "withdrawn route left the device "
            << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - dropped).count()
            << " ms after the kernel dropped it" << std::endl;
  // bgpd re-installs what the peer still announces, and the device forwards it.
  ASSERT_TRUE(WaitFor([&] { return KernelHas("203.0.113.0/24") && ForwardsToPeer("203.0.113.9"); }, 90s))
      << Hw("203.0.113.9").ToString();
  EXPECT_FALSE(ForwardsToPeer("198.51.100.9"));
  StopFibnicd();
}

}  // namespace
}  // namespace fibnic
