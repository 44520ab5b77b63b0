// Real FRR against the kernel source, which follows zebra's routes in the
// kernel (zebra also talks FPM to an FpmSource, as in production: it only
// hears which routes to answer): announce, withdraw, restart zebra (with a
// withdrawal while it is down), kill the BGP peer — each time the RIB the
// kernel source built must hold what zebra has installed (`show ip route
// json` / `show ipv6 route json`) and nothing zebra no longer has, and the
// image a real Fib compiled from the same feed must, decoded as the hardware
// reads it, forward every FRR route only where the reference LPM (built from
// zebra's json and the peer's neighbour) allows.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <future>
#include <iostream>
#include <set>
#include <thread>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "tests/oracle/reference_lpm.h"
#include "tests/sources/frr_harness.h"
#include "tests/sources/frr_sources.h"
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

// Feeds one source's output to the recorder and to the Fib alike.
class TeeSink : public RibSink {
 public:
  TeeSink(RibSink& a, RibSink& b) : a_(a), b_(b) {}
  void UpsertRoute(const Route& r) override {
    a_.UpsertRoute(r);
    b_.UpsertRoute(r);
  }
  void DeleteRoute(const Prefix& p, RouteSource s) override {
    a_.DeleteRoute(p, s);
    b_.DeleteRoute(p, s);
  }
  void UpsertNeighbor(const Neighbor& n) override {
    a_.UpsertNeighbor(n);
    b_.UpsertNeighbor(n);
  }
  void DeleteNeighbor(const IpAddr& a, PortId port) override {
    a_.DeleteNeighbor(a, port);
    b_.DeleteNeighbor(a, port);
  }

 private:
  RibSink& a_;
  RibSink& b_;
};

// First, middle and last address of a prefix.
std::vector<IpAddr> Probes(const Prefix& p) {
  const U128 lo = p.addr().v6(), hi = p.Last().v6(), mid = lo + (hi - lo) / 2;
  auto make = [&](U128 v) { return p.family() == Family::kV4 ? IpAddr::V4(static_cast<uint32_t>(v)) : IpAddr::V6(v); };
  std::vector<IpAddr> out{make(lo), make(mid), make(hi)};
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Parameter: zebra uses next-hop groups (the 8.4 default) or inline next-hops.
class KernelFrrTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    testing::EnterNewNetns();
    FpmSourceConfig cfg;
    ASSERT_TRUE(sources.StartFpm(cfg));
  }
  void TearDown() override {
    sources.Stop();
    if (HasFailure()) std::cout << frr.Logs() << std::endl;
  }

  FpmSourceStats Stats() {
    return sources.OnLoop([&] { return sources.fpm->stats(); });
  }
  // The RIB at FRR's prefixes (system ones too: zebra's connected routes are
  // the kernel's as well), and FRR's routes the RIB still holds although FRR
  // no longer has them.
  std::map<Prefix, std::vector<NextHop>> Rib() {
    const auto all = frr.FrrFib(FrrHarness::Ports(), /*with_system=*/true);
    std::map<Prefix, std::vector<NextHop>> out;
    for (const auto& [p, r] : sink.routes()) {
      if (all.count(p) || ever_frr.count(p)) out[p] = r.paths;
    }
    return out;
  }
  // The gateway neighbours, as the kernel source would give them: the peer
  // on the FIBNIC port (both families). To the Fib and to the oracle.
  void AddNeighbors() {
    const MacAddr mac = frr.PeerMac();
    neighbors = {{*IpAddr::Parse("10.99.0.2"), mac, 1, NeighState::kReachable},
                 {*IpAddr::Parse("2001:db8:99::2"), mac, 1, NeighState::kReachable}};
    sources.OnLoop([&] {
      for (const auto& n : neighbors) fib.UpsertNeighbor(n);
      return true;
    });
  }

  // Waits until the RIB equals FRR's FIB; then
  // checks the compiled image against FRR.
  void ExpectConverged(const std::string& step, bool expect_forwarding, std::chrono::seconds limit = 60s) {
    std::map<Prefix, std::vector<NextHop>> frr_fib;
    const bool ok = WaitFor(
        [&] {
          frr_fib = frr.FrrFib(FrrHarness::Ports());
          for (const auto& [p, paths] : frr_fib) ever_frr.insert(p);
          auto rib = Rib();
          // zebra's connected and kernel routes are the kernel's: compared where FRR has them too.
          std::erase_if(rib, [&](const auto& r) { return !frr_fib.count(r.first) && !Gone(r.first, frr_fib); });
          return !frr_fib.empty() && rib == frr_fib;
        },
        limit);
    ASSERT_TRUE(ok) << step << ": RIB differs from FRR\nFRR:\n" << Dump(frr_fib) << "RIB:\n" << Dump(Rib());
    kernel_stats = sources.OnLoop([&] { return sources.kernel->stats(); });
    std::cout << step << ": converged, " << frr_fib.size() << " routes" << std::endl;
    ExpectImageMatchesFrr(step, frr_fib, expect_forwarding);
  }

  // Commits the Fib and encodes its image on the io thread, together with
  // the recorder's RIB of that moment (the feed the image was built from).
  std::pair<std::vector<uint8_t>, std::map<Prefix, std::vector<NextHop>>> CommitAndEncode() {
    return sources.OnLoop([&] {
      fib.Commit();
      return std::pair{EncodeBar(fib.image(), static_cast<uint32_t>(fib.Counts().commits)), Rib()};
    });
  }

  // For every route FRR has (connected ones too), its first, middle and last
  // address looked up in the decoded BAR: a forward must be one the
  // reference LPM accepts, and an IPv4 route of /24 or shorter via a
  // resolved gateway (no longer route inside its /24s) must forward.
  void ExpectImageMatchesFrr(const std::string& step, const std::map<Prefix, std::vector<NextHop>>& frr_fib,
                             bool expect_forwarding) {
    const auto [bar, fed] = CommitAndEncode();
    for (const auto& [p, paths] : frr_fib) {
      ASSERT_TRUE(fed.count(p) && fed.at(p) == paths) << step << ": the feed moved on before the commit at " << p.ToString();
    }
    const auto all = frr.FrrFib(FrrHarness::Ports(), /*with_system=*/true);
    for (const auto& [p, paths] : frr_fib) {
      ASSERT_TRUE(all.count(p) && all.at(p) == paths) << step << ": FRR changed during the check at " << p.ToString();
    }
    oracle::ReferenceLpm lpm;
    for (const auto& [p, paths] : all) lpm.SetRoute(p, paths);
    for (const auto& n : neighbors) lpm.SetNeighbor(n);
    int probes = 0, forwarded = 0, forwarded_v6 = 0, must_forward = 0;
    for (const auto& [p, paths] : all) {
      const bool via_gateways = std::all_of(paths.begin(), paths.end(), [](const NextHop& nh) { return !nh.connected(); });
      for (const IpAddr& dst : Probes(p)) {
        ++probes;
        const auto acceptable = lpm.Acceptable(dst);
        const HwDecision hw = HwLookup(bar.data(), bar.size(), dst);
        if (hw.forward) {
          ++forwarded;
          forwarded_v6 += p.family() == Family::kV6;
          EXPECT_TRUE(acceptable.count({hw.dst_mac, hw.port}))
              << step << ": " << dst.ToString() << " (FRR " << p.ToString() << ") misforwarded: " << hw.ToString();
        }
        const auto match = lpm.Match(dst);
        if (p.family() == Family::kV4 && p.len() <= 24 && via_gateways && !acceptable.empty() && match &&
            match->first == p && !lpm.HasLongerInside24(dst.v4() >> 8)) {
          ++must_forward;
          EXPECT_TRUE(hw.forward) << step << ": " << dst.ToString() << " (FRR " << p.ToString()
                                  << " via a resolved gateway) punted: " << hw.ToString();
        }
      }
    }
    std::cout << step << ": image checked at " << probes << " addresses of " << all.size() << " FRR routes, "
              << forwarded << " forwarded (" << forwarded_v6 << " IPv6), " << must_forward << " had to" << std::endl;
    if (expect_forwarding) {
      EXPECT_GT(must_forward, 0) << step << ": no FRR route the image had to forward";
    }
  }
  bool Has(const std::string& p) { return sources.OnLoop([&] { return sink.routes().count(*Prefix::Parse(p)) != 0; }); }
  // An FRR route FRR no longer has (the RIB must not hold it either).
  bool Gone(const Prefix& p, const std::map<Prefix, std::vector<NextHop>>& frr_fib) const {
    return ever_frr.count(p) && !frr_fib.count(p);
  }

  RecordingSink sink;
  Fib fib{FibConfig{}};
  TeeSink tee{sink, fib.sink()};
  std::vector<Neighbor> neighbors;
  KernelSourceStats kernel_stats;
  std::set<Prefix> ever_frr;  // every prefix FRR had at a check
  FrrHarness frr;
  testing::FrrSources sources;  // last: stopped first, before what they feed
};

TEST_P(KernelFrrTest, RibFollowsZebraThroughChurnRestartAndPeerLoss) {
  frr.Setup(sources.fpm->port(), {"203.0.113.0/24", "198.51.100.0/24"}, GetParam());
  ASSERT_TRUE(sources.StartKernel(tee));
  AddNeighbors();
  frr.StartZebra();
  frr.StartStaticd();
  frr.StartRouterBgpd();
  frr.StartPeer();
  ASSERT_TRUE(WaitFor([&] { return frr.BgpEstablished(); }, 60s)) << "BGP session did not come up";
  ASSERT_TRUE(WaitFor([&] { return Has("203.0.113.0/24") && Has("198.51.100.0/24"); }, 60s));
  ExpectConverged("initial", true);
  const std::vector<NextHop> via_peer{{*IpAddr::Parse("10.99.0.2"), 1}};
  EXPECT_EQ(sources.OnLoop([&] { return sink.routes().at(*Prefix::Parse("203.0.113.0/24")).paths; }), via_peer);
  // The static blackhole is dropped; the static route via the non-FIBNIC
  // link is punted.
  const std::vector<NextHop> host{NextHop::ToHost()}, drop{NextHop::Drop()};
  EXPECT_EQ(sources.OnLoop([&] { return sink.routes().at(*Prefix::Parse("10.200.0.0/16")).paths; }), drop);
  EXPECT_EQ(sources.OnLoop([&] { return sink.routes().at(*Prefix::Parse("10.97.0.0/16")).paths; }), host);

  // Announce and withdraw.
  frr.PeerNetwork("192.0.2.0/25", true);
  frr.PeerNetwork("100.64.0.0/10", true);
  frr.PeerNetwork("203.0.113.0/24", false);
  ASSERT_TRUE(WaitFor([&] { return Has("100.64.0.0/10") && Has("192.0.2.0/25") && !Has("203.0.113.0/24"); }, 60s));
  ExpectConverged("announce/withdraw", true);

  // Restart zebra; withdraw a route while it is down: the restarted zebra
  // takes it out of the kernel (its start-up sweep), and the RIB follows.
  // zebra and bgpd crash (SIGKILL: no goodbye deletes over FPM) and are
  // restarted together, as watchfrr does (FRR 8.4's bgpd does not
  // re-install into a restarted zebra by itself).
  frr.StopRouterBgpd(SIGKILL);
  frr.StopStaticd(SIGKILL);
  frr.StopZebra(SIGKILL);
  frr.PeerNetwork("198.51.100.0/24", false);
  frr.StartZebra();
  frr.StartStaticd();
  frr.StartRouterBgpd();
  ASSERT_TRUE(WaitFor([&] { return Stats().connections >= 2; }, 30s)) << "zebra did not reconnect";
  // The session comes back and bgpd installs what the peer still announces.
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(WaitFor([&] { return frr.FrrFib(FrrHarness::Ports()).count(*Prefix::Parse("100.64.0.0/10")) != 0; }, 90s))
      << "bgpd did not re-install its routes";
  std::cout << "BGP routes back in zebra after " << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count() << " ms" << std::endl;
  ExpectConverged("zebra restart", true, 90s);
  EXPECT_FALSE(Has("198.51.100.0/24"));
  const auto st = Stats();
  EXPECT_GE(st.resyncs, 1u);
  EXPECT_EQ(st.errors, 0u) << st.last_error;
  EXPECT_EQ(kernel_stats.errors, 0u) << kernel_stats.last_error;

  // Kill the peer: its routes go.
  frr.KillPeer();
  ASSERT_TRUE(WaitFor([&] { return !Has("100.64.0.0/10") && !Has("192.0.2.0/25"); }, 60s));
  ExpectConverged("peer killed", false);
  // zebra installs its routes in the kernel by next-hop objects in both
  // modes (`no fpm use-next-hop-groups` changes only the FPM stream).
  EXPECT_GT(kernel_stats.nexthop_objects, 0u);
}

INSTANTIATE_TEST_SUITE_P(NextHopModes, KernelFrrTest, ::testing::Values(true, false),
                         [](const auto& info) { return info.param ? "NextHopGroups" : "Inline"; });

}  // namespace
}  // namespace fibnic
