// Real FRR against the FPM source: announce, withdraw, restart zebra (with a
// withdrawal while it is down, so only the stale sweep can remove it), kill
// the BGP peer — each time the RIB the FPM source built must equal what
// zebra has installed (`show ip route json` / `show ipv6 route json`).
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <future>
#include <iostream>
#include <thread>

#include "fibsync/fpm_source.h"
#include "tests/sources/frr_harness.h"
#include "tests/sources/recording_sink.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::FrrHarness;
using testing::RecordingSink;
using testing::WaitFor;

std::string Dump(const std::map<Prefix, std::vector<NextHop>>& m) {
  std::string s;
  for (const auto& [p, paths] : m) {
    s += "  " + p.ToString() + ":";
    for (const auto& nh : paths) s += " [" + nh.ToString() + "]";
    s += "\n";
  }
  return s;
}

// Parameter: zebra uses next-hop groups (the 8.4 default) or inline next-hops.
class FpmFrrTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    testing::EnterNewNetns();
    FpmSourceConfig cfg;
    cfg.port = 0;
    cfg.ports = FrrHarness::Ports();
    cfg.stale_hold = 20s;  // longer than bgpd's reconnect to a restarted zebra
    cfg.replay_quiet = 500ms;
    cfg.log = [](const std::string& m) { std::cout << "fpm: " << m << std::endl; };
    source = std::make_unique<FpmSource>(io, sink, cfg);
    ASSERT_TRUE(source->Start().ok());
    io_thread = std::thread([this] { io.run(); });
  }
  void TearDown() override {
    if (source) boost::asio::post(io, [this] { source->Stop(); });
    work.reset();
    io.stop();
    if (io_thread.joinable()) io_thread.join();
    if (HasFailure()) std::cout << frr.Logs() << std::endl;
  }

  FpmSourceStats Stats() {
    std::promise<FpmSourceStats> p;
    boost::asio::post(io, [&] { p.set_value(source->stats()); });
    return p.get_future().get();
  }
  std::map<Prefix, std::vector<NextHop>> Rib() {
    std::map<Prefix, std::vector<NextHop>> out;
    for (const auto& [p, r] : sink.routes()) out[p] = r.paths;
    return out;
  }
  // Waits until the RIB equals FRR's FIB with nothing stale left.
  void ExpectConverged(const std::string& step, std::chrono::seconds limit = 60s) {
    std::map<Prefix, std::vector<NextHop>> frr_fib;
    const bool ok = WaitFor(
        [&] {
          frr_fib = frr.FrrFib(FrrHarness::Ports());
          return !frr_fib.empty() && Rib() == frr_fib && Stats().stale_pending == 0;
        },
        limit);
    ASSERT_TRUE(ok) << step << ": RIB differs from FRR\nFRR:\n" << Dump(frr_fib) << "RIB:\n" << Dump(Rib());
    std::cout << step << ": converged, " << frr_fib.size() << " routes" << std::endl;
  }
  bool Has(const std::string& p) { return Rib().count(*Prefix::Parse(p)) != 0; }

  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread io_thread;
  RecordingSink sink;
  std::unique_ptr<FpmSource> source;
  FrrHarness frr;
};

TEST_P(FpmFrrTest, RibFollowsZebraThroughChurnRestartAndPeerLoss) {
  frr.Setup(source->port(), {"203.0.113.0/24", "198.51.100.0/24"}, GetParam());
  frr.StartZebra();
  frr.StartStaticd();
  frr.StartRouterBgpd();
  frr.StartPeer();
  ASSERT_TRUE(WaitFor([&] { return frr.BgpEstablished(); }, 60s)) << "BGP session did not come up";
  ASSERT_TRUE(WaitFor([&] { return Has("203.0.113.0/24") && Has("198.51.100.0/24"); }, 60s));
  ExpectConverged("initial");
  const std::vector<NextHop> via_peer{{*IpAddr::Parse("10.99.0.2"), 1}};
  EXPECT_EQ(sink.routes().at(*Prefix::Parse("203.0.113.0/24")).paths, via_peer);
  // Punted, not dropped: the static blackhole and the static route via the
  // non-FIBNIC link. Connected routes are the kernel source's.
  const std::vector<NextHop> host{NextHop::ToHost()};
  EXPECT_EQ(sink.routes().at(*Prefix::Parse("10.200.0.0/16")).paths, host);
  EXPECT_EQ(sink.routes().at(*Prefix::Parse("10.97.0.0/16")).paths, host);
  EXPECT_FALSE(Has("10.99.0.0/24"));

  // Announce and withdraw.
  frr.PeerNetwork("192.0.2.0/25", true);
  frr.PeerNetwork("100.64.0.0/10", true);
  frr.PeerNetwork("203.0.113.0/24", false);
  ASSERT_TRUE(WaitFor([&] { return Has("100.64.0.0/10") && Has("192.0.2.0/25") && !Has("203.0.113.0/24"); }, 60s));
  ExpectConverged("announce/withdraw");

  // Restart zebra; withdraw a route while it is down: zebra's replay will
  // not mention it, and only the stale sweep can take it away. Routes that
  // are replayed must never leave the RIB meanwhile.
  // zebra and bgpd crash (SIGKILL: no goodbye deletes over FPM) and are
  // restarted together, as watchfrr does (FRR 8.4's bgpd does not
  // re-install into a restarted zebra by itself).
  frr.StopRouterBgpd(SIGKILL);
  frr.StopStaticd(SIGKILL);
  frr.StopZebra(SIGKILL);
  frr.PeerNetwork("198.51.100.0/24", false);
  sink.TakeLog();
  frr.StartZebra();
  frr.StartStaticd();
  frr.StartRouterBgpd();
  ASSERT_TRUE(WaitFor([&] { return Stats().connections >= 2; }, 30s)) << "zebra did not reconnect";
  // The session comes back and bgpd installs what the peer still announces.
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return frr.FrrFib(FrrHarness::Ports()).count(*Prefix::Parse("100.64.0.0/10")) != 0; }, 90s))
      << "bgpd did not re-install its routes";
  std::cout << "BGP routes back in zebra after " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count() << " ms" << std::endl;
  ExpectConverged("zebra restart", 90s);
  EXPECT_FALSE(Has("198.51.100.0/24"));
  for (const auto& line : sink.TakeLog()) {
    EXPECT_NE(line, "delete 100.64.0.0/10") << "replayed route left the RIB during the replay";
    EXPECT_NE(line, "delete 192.0.2.0/25") << "replayed route left the RIB during the replay";
  }
  const auto st = Stats();
  EXPECT_GE(st.resyncs, 1u);
  // With next-hop groups the old groups are always left over; inline, zebra
  // may itself delete what it finds stale in the kernel at start-up.
  if (GetParam()) {
    EXPECT_GE(st.stale_swept, 1u);
  }
  std::cout << "stale swept: " << st.stale_swept << std::endl;
  EXPECT_EQ(st.errors, 0u) << st.last_error;

  // Kill the peer: its routes go.
  frr.KillPeer();
  ASSERT_TRUE(WaitFor([&] { return !Has("100.64.0.0/10") && !Has("192.0.2.0/25"); }, 60s));
  ExpectConverged("peer killed");
  if (GetParam()) {
    EXPECT_GT(Stats().nexthop_groups, 0u);
  } else {
    EXPECT_EQ(Stats().nexthop_groups, 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(NextHopModes, FpmFrrTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "NextHopGroups" : "Inline"; });

}  // namespace
}  // namespace fibnic
