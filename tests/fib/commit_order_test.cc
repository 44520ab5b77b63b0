// The retire → main ordering of Commit(), on its own: a slot changing owner
// (an IPv6-only owner, whose code the TCAM names, then an IPv4 owner, whose
// code SRAM words hold). The retire delta alone must leave the code named
// nowhere and its entry invalid; applied write by write, retire then main,
// no state may forward a probe where neither the old nor the new routes
// would (the reference LPM); and the same deltas applied main first must
// misforward — the check can tell the order.
#include <gtest/gtest.h>

#include <unordered_map>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "tests/fib/delta_applier.h"
#include "tests/fib/fib_check.h"
#include "tests/support/parse.h"

namespace fibnic::testing {

using testing::A;
using testing::Mac;
using testing::P;
namespace {

struct Probes {
  std::vector<IpAddr> all;
  std::unordered_map<uint32_t, std::vector<size_t>> by_word;  // IPv4 probes by SRAM word
};

// One address in every IPv4 /24 and three in every IPv6 route of the worlds.
Probes MakeProbes(const World& a, const World& b) {
  Probes p;
  for (const World* w : {&a, &b}) {
    for (const auto& [pfx, paths] : w->routes) {
      if (pfx.family() == Family::kV4) {
        for (uint32_t s = 0; s < (1u << (24 - pfx.len())); ++s) {
          const uint32_t addr = pfx.addr().v4() + (s << 8) + 42;
          p.by_word[addr >> 10].push_back(p.all.size());
          p.all.push_back(IpAddr::V4(addr));
        }
      } else {
        for (U128 off : {U128{0}, U128{1} << 64, ~U128{0} >> pfx.len()}) p.all.push_back(IpAddr::V6(pfx.addr().v6() | off));
      }
    }
  }
  return p;
}

// Applies deltas write by write; returns the first probe forwarded where
// neither world's routes would send it ("" if none).
std::string FirstMisforward(std::vector<uint8_t> bar, const DeviceImage& image, const std::vector<DeviceDelta>& deltas,
                            const World& before, const World& after) {
  const auto old_lpm = before.Oracle(), new_lpm = after.Oracle();
  const Probes probes = MakeProbes(before, after);
  std::string first;
  auto check = [&](size_t i) {
    const IpAddr& dst = probes.all[i];
    const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
    if (!d.forward || !first.empty()) return;
    const oracle::Forward f{d.dst_mac, d.port};
    if (!old_lpm.Acceptable(dst).count(f) && !new_lpm.Acceptable(dst).count(f)) first = dst.ToString() + " -> " + d.ToString();
  };
  ApplyStepwise(bar, image, deltas, [&](std::optional<uint32_t> word) {
    if (!word) {
      for (size_t i = 0; i < probes.all.size(); ++i) check(i);
    } else if (auto it = probes.by_word.find(*word); it != probes.by_word.end()) {
      for (size_t i : it->second) check(i);
    }
  });
  return first;
}

std::vector<std::optional<NextHop>> OwnersByCode(const Fib& fib) {
  std::vector<std::optional<NextHop>> out(16);
  for (const auto& s : fib.Slots()) out[s.code] = s.owner;
  return out;
}

// A route to add, and the world it is added to, to a Fib that already holds
// the world: the commit must hand one code to a new owner, safely.
void ExpectSafeHandover(Fib& fib, World& world, const Prefix& p, const NextHop& via, const char* what) {
  SCOPED_TRACE(what);
  const std::vector<uint8_t> bar = EncodeBar(fib.image());
  const World before = world;
  const auto owners_before = OwnersByCode(fib);
  world.routes[p] = {via};
  fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, {via}});
  const auto deltas = fib.Commit();
  const auto owners_after = OwnersByCode(fib);
  int code = 0;
  for (int c = 1; c < 16; ++c) {
    if (owners_before[c] != owners_after[c]) {
      ASSERT_EQ(code, 0) << "more than one code changed owner";
      code = c;
    }
  }
  ASSERT_NE(code, 0);
  ASSERT_TRUE(owners_before[code] && owners_after[code] == via);
  // Retire, main, then the TCAM's best entries if they changed (Fib::CommitSafe).
  ASSERT_GE(deltas.size(), 2u) << "a code changing owner needs a retire delta";
  const DeviceDelta& retire = deltas[0];
  const DeviceDelta& main = deltas[1];
  auto writes = [&](const std::vector<NexthopWrite>& ws) {
    return std::count_if(ws.begin(), ws.end(), [&](const NexthopWrite& w) { return w.index == uint32_t(code); });
  };
  EXPECT_EQ(writes(retire.nexthop_retire), 1);
  EXPECT_EQ(writes(retire.nexthop_activate), 0);
  EXPECT_EQ(writes(main.nexthop_activate), 1);
  EXPECT_EQ(writes(main.nexthop_retire), 0);

  // After the retire delta alone nothing names the code and its entry is invalid.
  std::vector<uint8_t> mid = bar;
  ApplyStepwise(mid, fib.image(), {retire}, [](std::optional<uint32_t>) {});
  const int bits = fib.config().caps.code_bits;
  uint32_t named = 0;
  for (uint32_t i = 0; i < (1u << 24); ++i) named += regs::SramCode(mid.data() + regs::kOffSram4, bits, i) == code;
  EXPECT_EQ(named, 0u) << "/24s still coded " << code << " after the retire delta";
  for (uint32_t t = 0; t < fib.config().caps.tcam_entries; ++t) {
    const auto e = regs::Tcam6Entry::Decode(&mid[regs::Tcam6Offset(t)]);
    EXPECT_FALSE(e.valid() && e.code == code) << "TCAM entry " << t << " still names code " << code;
  }
  EXPECT_FALSE(regs::NexthopEntry::Decode(&mid[regs::NexthopOffset(uint32_t(code))]).valid());

  EXPECT_EQ(FirstMisforward(bar, fib.image(), deltas, before, world), "");
  // The control: main before retire re-owns the entry while the old owner's
  // space still names its code.
  std::vector<DeviceDelta> swapped = deltas;
  std::swap(swapped[0], swapped[1]);
  EXPECT_NE(FirstMisforward(bar, fib.image(), swapped, before, world), "");
}

TEST(FibCommitOrder, ACodeIsZeroedEverywhereBeforeItsEntryChangesOwner) {
  FibConfig cfg;
  cfg.caps = regs::Caps::Model2Bit();  // three codes
  Fib fib(cfg);
  const NextHop a{A("10.255.0.1"), 0}, b{A("10.255.0.2"), 1}, d{A("10.255.0.4"), 3}, e{A("10.255.0.5"), 0},
      c6{A("fd00::3"), 2}, a6{A("fd00::1"), 0}, b6{A("fd00::2"), 1};
  World world;
  uint8_t mac = 1;
  for (const NextHop& nh : {a, b, d, e, c6}) world.neigh[*nh.gateway] = Neighbor{*nh.gateway, Mac(mac++), nh.port};
  world.neigh[*a6.gateway] = Neighbor{*a6.gateway, Mac(1), a6.port};  // a's adjacency
  world.neigh[*b6.gateway] = Neighbor{*b6.gateway, Mac(2), b6.port};  // b's
  world.routes[P("20.1.0.0/16")] = {a};  // 256 /24s
  world.routes[P("20.2.0.0/17")] = {b};  // 128
  for (const char* p : {"2001:db8:3::/48", "2001:db8:4::/48"}) world.routes[P(p)] = {c6};
  for (int k = 0; k < 10; ++k) {
    world.routes[P(("2001:db8:1" + std::to_string(k) + "::/48").c_str())] = {a6};
    world.routes[P(("2001:db8:2" + std::to_string(k) + "::/48").c_str())] = {b6};
  }
  world.LoadInto(fib);
  fib.Commit();
  ASSERT_EQ(Owners(fib), (std::set<NextHop>{a, a6, b, b6, c6}));

  // A share of the IPv4 space displaces an owner with a small share of the
  // IPv6 routes: its TCAM entries go to 0 first.
  ExpectSafeHandover(fib, world, P("20.4.0.0/18"), d, "IPv6-only owner displaced");  // 64 /24s
  EXPECT_EQ(Owners(fib), (std::set<NextHop>{a, a6, b, b6, d}));
  // A heavier IPv4 next-hop displaces the lightest: its SRAM words go to 0 first.
  ExpectSafeHandover(fib, world, P("20.6.0.0/15"), e, "IPv4 owner displaced");  // 512 /24s
  EXPECT_EQ(Owners(fib), (std::set<NextHop>{a, a6, b, b6, e}));
}

// One adjacency (MAC 1 on port 0) behind an IPv4 gateway and an
// IPv6 one, both failed: its code is kept, VALID=0. The IPv4 gateway comes
// back while the IPv6 one (which also carries an IPv4 route, RFC 5549) stays
// failed: the entry turns valid, and the IPv6 next-hop's space, still naming
// the code, must be zeroed before — retire then main never misforwards; main
// alone (the entry activated first) does.
TEST(FibCommitOrder, AnEntryTurningValidFirstZeroesTheSpaceOfAMemberLeftBehind) {
  FibConfig cfg;
  cfg.caps = regs::Caps::Model2Bit();
  Fib fib(cfg);
  const NextHop v4{A("10.255.0.1"), 0}, v6{A("fd00::1"), 0};
  World world;
  for (const NextHop& nh : {v4, v6}) world.neigh[*nh.gateway] = Neighbor{*nh.gateway, Mac(1), 0, NeighState::kReachable};
  world.routes[P("20.1.0.0/16")] = {v4};
  world.routes[P("20.2.0.0/16")] = {v6};
  world.routes[P("2001:db8:2::/48")] = {v6};
  world.LoadInto(fib);
  fib.Commit();
  ASSERT_EQ(fib.Counts().slots_used, 1);
  for (const NextHop& nh : {v4, v6}) {
    world.neigh[*nh.gateway].state = NeighState::kFailed;
    fib.UpsertNeighbor(world.neigh[*nh.gateway]);
  }
  fib.Commit();
  ASSERT_EQ(fib.Counts().slots_used, 1);  // kept, VALID=0
  const std::vector<uint8_t> bar = EncodeBar(fib.image());
  const World before = world;
  world.neigh[*v4.gateway].state = NeighState::kReachable;
  fib.UpsertNeighbor(world.neigh[*v4.gateway]);
  const auto deltas = fib.Commit();
  ASSERT_GE(deltas.size(), 2u) << "the code must be retired first";
  EXPECT_EQ(FirstMisforward(bar, fib.image(), deltas, before, world), "");
  EXPECT_NE(FirstMisforward(bar, fib.image(), {deltas[1]}, before, world), "");
}

}  // namespace
}  // namespace fibnic::testing
