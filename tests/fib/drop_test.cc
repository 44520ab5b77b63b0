// Blackholes dropped in the card: a route whose single path is
// NextHop::Drop() gets the drop adjacency's code (entry VALID|DROP) on a
// device whose CAPS announce DROP, and punts on one that does not. The
// expectations are worked out by hand from the routes (which destination the
// kernel would forward, drop or leave to the host), never read from the Fib.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "tests/fib/delta_applier.h"
#include "tests/support/parse.h"

namespace fibnic {
namespace {

using testing::A;
using testing::Mac;
using testing::P;

NextHop Gw(const char* addr, PortId port) { return NextHop{A(addr), port}; }

FibConfig Config(int code_bits, bool drop) {
  FibConfig c;
  c.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  c.caps.drop = drop;
  c.slot_hold = std::chrono::milliseconds(0);
  return c;
}

// Three gateways, one per port, each with a usable neighbour (MAC 1..3).
void AddGateways(Fib& fib) {
  for (uint8_t k = 0; k < 3; ++k) {
    const std::string gw = "100.64." + std::to_string(k) + ".1";
    fib.UpsertNeighbor(Neighbor{A(gw.c_str()), Mac(uint8_t(k + 1)), PortId(k), NeighState::kReachable});
    fib.UpsertNeighbor(Neighbor{A(("fd00:" + std::to_string(k) + "::1").c_str()), Mac(uint8_t(k + 1)), PortId(k),
                                NeighState::kReachable});
  }
}

void Add(Fib& fib, const char* prefix, const NextHop& nh) { fib.UpsertRoute(Route{P(prefix), RouteSource::kStatic, 1, {nh}}); }

HwDecision Look(const Fib& fib, const char* addr) {
  const auto bar = EncodeBar(fib.image());
  return HwLookup(bar.data(), bar.size(), A(addr));
}

// 4-bit codes, the three gateways, 10.0.0.0/8 via the first and
// 2001:db8::/32 via the second: the covering routes the blackholes cut their
// holes in.
std::unique_ptr<Fib> Covered(bool drop) {
  auto fib = std::make_unique<Fib>(Config(4, drop));
  AddGateways(*fib);
  Add(*fib, "10.0.0.0/8", Gw("100.64.0.1", 0));
  Add(*fib, "2001:db8::/32", Gw("fd00:1::1", 1));
  return fib;
}

bool AnyDropEntry(const DeviceImage& img) {
  for (const auto& e : img.nexthop) {
    if (e.drop()) return true;
  }
  return false;
}

TEST(FibDrop, BlackholeSlash24AndSlash48AreDroppedInTheCard) {
  auto owned = Covered(true);
  Fib& fib = *owned;
  Add(fib, "10.1.2.0/24", NextHop::Drop());
  Add(fib, "2001:db8:66::/48", NextHop::Drop());
  fib.Commit();
  EXPECT_TRUE(Look(fib, "10.1.2.77").drop);
  EXPECT_FALSE(Look(fib, "10.1.2.77").forward);
  EXPECT_TRUE(Look(fib, "10.1.3.1").forward);
  EXPECT_EQ(Look(fib, "10.1.3.1").port, 0);
  EXPECT_TRUE(Look(fib, "2001:db8:66:1::5").drop);
  EXPECT_TRUE(Look(fib, "2001:db8:67::5").forward);
  for (const auto& ri : fib.GetRoute(P("10.1.2.0/24"))) EXPECT_EQ(ri.state, OffloadState::kOffloaded);
  const RibAnswer a = fib.Lookup(A("10.1.2.77"));
  ASSERT_TRUE(a.path);
  EXPECT_TRUE(a.path->drop());
  EXPECT_FALSE(a.neighbor);
  // One entry drops, with port and MAC zero.
  int drops = 0;
  for (const auto& e : fib.image().nexthop) {
    if (!e.drop()) continue;
    ++drops;
    EXPECT_TRUE(e.valid());
    EXPECT_FALSE(e.connected());
    EXPECT_EQ(e.port, 0);
    EXPECT_TRUE(e.dst_mac.IsZero());
  }
  EXPECT_EQ(drops, 1);
}

TEST(FibDrop, ADeviceWithoutTheCapabilityPuntsBlackholesAndNeverSeesADropEntry) {
  auto owned = Covered(false);
  Fib& fib = *owned;
  Add(fib, "10.1.2.0/24", NextHop::Drop());
  fib.Commit();
  const HwDecision d = Look(fib, "10.1.2.77");
  EXPECT_FALSE(d.drop);
  EXPECT_FALSE(d.forward);
  EXPECT_FALSE(AnyDropEntry(fib.image()));
  const auto info = fib.GetRoute(P("10.1.2.0/24"));
  ASSERT_EQ(info.size(), 1u);
  EXPECT_EQ(info[0].reason, PuntReason::kToHost);
  EXPECT_NE(info[0].why.find("cannot drop"), std::string::npos) << info[0].why;
  // Its hole is still cut in the covering route.
  EXPECT_TRUE(Look(fib, "10.1.3.1").forward);
}

// The tables hold /24s: a /32 blackhole inside a forwarded /24 makes the /24
// punt (the host drops the /32 and forwards the rest), never drop.
TEST(FibDrop, ABlackholeLongerThanTheTablesHoldPuntsItsSlash24) {
  auto owned = Covered(true);
  Fib& fib = *owned;
  Add(fib, "10.1.2.3/32", NextHop::Drop());
  Add(fib, "2001:db8:0:5::1/128", NextHop::Drop());
  fib.Commit();
  for (const char* a : {"10.1.2.3", "10.1.2.4", "2001:db8:0:5::1", "2001:db8:0:5::2"}) {
    const HwDecision d = Look(fib, a);
    EXPECT_FALSE(d.forward) << a;
    EXPECT_FALSE(d.drop) << a;
  }
  EXPECT_TRUE(Look(fib, "10.1.3.1").forward);
}

// A /24 every address of which lies in blackholes (two /25s) is dropped
// whole, once the drop adjacency holds a code (weights count the space of
// routes up to /24: here a blackholed /24 beside them).
TEST(FibDrop, ASlash24MadeOfBlackholesIsDropped) {
  auto owned = Covered(true);
  Fib& fib = *owned;
  Add(fib, "10.9.9.0/24", NextHop::Drop());
  Add(fib, "10.1.2.0/25", NextHop::Drop());
  Add(fib, "10.1.2.128/25", NextHop::Drop());
  fib.Commit();
  EXPECT_TRUE(Look(fib, "10.1.2.1").drop);
  EXPECT_TRUE(Look(fib, "10.1.2.200").drop);
}

// What the kernel does with a destination under a small table of routes:
// forward (MAC, port), drop, or leave it to the host.
struct Want {
  std::optional<std::pair<MacAddr, uint8_t>> forward;
  bool drop = false;
};

Want Expected(const std::map<Prefix, NextHop>& routes, const std::map<NextHop, uint8_t>& mac_of, const IpAddr& dst) {
  const std::pair<const Prefix, NextHop>* best = nullptr;
  for (const auto& r : routes) {
    if (r.first.family() == dst.family() && r.first.Contains(dst) && (!best || r.first.len() > best->first.len())) best = &r;
  }
  Want w;
  if (!best) return w;
  if (best->second.drop()) {
    w.drop = true;
  } else if (auto it = mac_of.find(best->second); it != mac_of.end()) {
    w.forward = std::make_pair(Mac(it->second), best->second.port);
  }
  return w;
}

// 2-bit codes, three gateways own the three codes; a blackhole grows until
// it outweighs one of them and takes its code. Applied write by write, no
// intermediate state may drop a destination neither the old nor the new
// routes drop, nor forward one where neither forwards it there.
TEST(FibDrop, TheDropCodeChangesOwnerWithoutADropOrForwardTheKernelNeverGave) {
  for (bool remove_again : {false, true}) {
    SCOPED_TRACE(remove_again ? "and back" : "to drop");
    Fib fib(Config(2, true));
    AddGateways(fib);
    std::map<Prefix, NextHop> routes = {{P("10.0.0.0/16"), Gw("100.64.0.1", 0)},
                                        {P("20.0.0.0/18"), Gw("100.64.1.1", 1)},
                                        {P("30.0.0.0/20"), Gw("100.64.2.1", 2)}};
    const std::map<NextHop, uint8_t> mac_of = {{Gw("100.64.0.1", 0), 1}, {Gw("100.64.1.1", 1), 2}, {Gw("100.64.2.1", 2), 3}};
    for (const auto& [p, nh] : routes) fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, {nh}});
    fib.Commit();
    auto before = routes;
    routes[P("40.0.0.0/17")] = NextHop::Drop();
    fib.UpsertRoute(Route{P("40.0.0.0/17"), RouteSource::kStatic, 1, {NextHop::Drop()}});
    std::vector<uint8_t> bar = EncodeBar(fib.image());
    std::vector<DeviceDelta> deltas = fib.Commit();
    if (remove_again) {
      bar = EncodeBar(fib.image());
      before = routes;
      routes.erase(P("40.0.0.0/17"));
      routes[P("50.0.0.0/15")] = Gw("100.64.2.1", 2);
      fib.DeleteRoute(P("40.0.0.0/17"), RouteSource::kStatic);
      fib.UpsertRoute(Route{P("50.0.0.0/15"), RouteSource::kStatic, 1, {Gw("100.64.2.1", 2)}});
      deltas = fib.Commit();
    }
    // The blackhole took a code (and, back, gave it up to the gateway).
    EXPECT_EQ(AnyDropEntry(fib.image()), !remove_again);
    std::vector<IpAddr> probes;
    for (const char* base : {"10.0.", "20.0.", "30.0.", "40.0.", "50.0.", "50.1."}) {
      for (int third : {0, 5, 15, 63, 127, 255}) probes.push_back(A((base + std::to_string(third) + ".9").c_str()));
    }
    int steps = 0, drops_seen = 0;
    testing::ApplyStepwise(bar, fib.image(), deltas, [&](std::optional<uint32_t>) {
      ++steps;
      for (const IpAddr& dst : probes) {
        const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
        const Want o = Expected(before, mac_of, dst), n = Expected(routes, mac_of, dst);
        if (d.drop) {
          ++drops_seen;
          EXPECT_TRUE(o.drop || n.drop) << dst.ToString() << " dropped at step " << steps;
        }
        if (d.forward) {
          const auto f = std::make_pair(d.dst_mac, d.port);
          EXPECT_TRUE(o.forward == f || n.forward == f) << dst.ToString() << " -> " << d.ToString() << " at step " << steps;
        }
      }
    });
    EXPECT_GT(steps, 0);
    if (!remove_again) {
      EXPECT_GT(drops_seen, 0) << "the blackhole never dropped: the check proved nothing";
      EXPECT_TRUE(HwLookup(bar.data(), bar.size(), A("40.0.5.9")).drop);
    } else {
      EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("40.0.5.9")).drop);
    }
  }
}

// A restart adopts the device's drop entry for the blackholes it still has:
// the Sync writes nothing.
TEST(FibDrop, WarmStartAdoptsTheDropEntry) {
  Fib first(Config(2, true));
  AddGateways(first);
  Add(first, "10.0.0.0/16", Gw("100.64.0.1", 0));
  Add(first, "40.0.0.0/16", NextHop::Drop());
  first.Commit();
  int drop_code = 0;
  for (size_t c = 1; c < first.image().nexthop.size(); ++c) {
    if (first.image().nexthop[c].drop()) drop_code = static_cast<int>(c);
  }
  ASSERT_NE(drop_code, 0);
  Fib second(Config(2, true));
  AddGateways(second);
  Add(second, "40.0.0.0/16", NextHop::Drop());
  Add(second, "10.0.0.0/16", Gw("100.64.0.1", 0));
  second.AdoptDevice(first.image());
  second.Commit();
  EXPECT_TRUE(second.image().nexthop[drop_code].drop());
  EXPECT_EQ(second.image(), first.image());
}

}  // namespace
}  // namespace fibnic
