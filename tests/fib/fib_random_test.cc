// Random tables checked /24 by /24 against the reference LPM, and random
// update sequences whose every bus step is checked and whose end state must
// equal a from-scratch compile. Seeds are printed; FIBNIC_SEED replays one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <unordered_map>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "tests/fib/delta_applier.h"
#include "tests/fib/random_ops.h"
#include "tests/fib/random_world.h"
#include "tests/support/test_seed.h"

namespace fibnic::testing {
namespace {

FibConfig Config(int code_bits, EcmpPolicy ecmp) {
  FibConfig c;
  c.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  c.ecmp = ecmp;
  return c;
}

struct Param {
  int code_bits;
  EcmpPolicy ecmp;
};

class RandomTable : public ::testing::TestWithParam<Param> {};

TEST_P(RandomTable, EverySlash24MatchesReferenceLpm) {
  const auto [bits, ecmp] = GetParam();
  RandomWorlds gen(TestSeed("RandomTable"));
  WorldShape shape;
  shape.gateways = bits == 4 ? 20 : 6;  // more gateways than slots either way
  World world = gen.Make(shape);
  gen.AddV6(world, WorldShape6{});  // dual stack: IPv4 takes every slot, IPv6 must punt safely
  Fib fib(Config(bits, ecmp));
  world.LoadInto(fib);
  fib.Commit();
  const auto owners = Owners(fib);
  EXPECT_EQ(owners.size(), static_cast<size_t>(fib.config().caps.slots()));
  const auto r = CheckAllSlash24(EncodeBar(fib.image()), world, world.Oracle(), owners, ecmp, 256);
  EXPECT_EQ(r.misforwarded, 0u) << r.first_error;
  EXPECT_EQ(r.owed_punted, 0u) << r.first_error;
  EXPECT_GT(r.owed, 8'000'000u);  // the default route's gateway holds a slot
  const auto r6 = CheckV6Sampled(EncodeBar(fib.image()), world, world.Oracle(), fib, gen.rng());
  EXPECT_EQ(r6.misforwarded, 0u) << r6.first_error;
  EXPECT_EQ(r6.owed_punted, 0u) << r6.first_error;
}

// IPv6 only: the slots go to IPv6 next-hops and the TCAM fills.
TEST_P(RandomTable, Ipv6SampledMatchesReferenceLpm) {
  const auto [bits, ecmp] = GetParam();
  RandomWorlds gen(TestSeed("RandomTable6"));
  WorldShape6 shape;
  shape.gateways = bits == 4 ? 20 : 6;  // more gateways than slots
  shape.routes = 300;
  World world;
  gen.AddV6(world, shape);
  Fib fib(Config(bits, ecmp));
  world.LoadInto(fib);
  fib.Commit();
  EXPECT_EQ(Owners(fib).size(), static_cast<size_t>(fib.config().caps.slots()));
  const auto bar = EncodeBar(fib.image());
  const auto r = CheckV6Sampled(bar, world, world.Oracle(), fib, gen.rng());
  EXPECT_EQ(r.misforwarded, 0u) << r.first_error;
  EXPECT_EQ(r.owed_punted, 0u) << r.first_error;
  EXPECT_GT(r.forwarded, 0u);
  EXPECT_GT(fib.Counts().routes[1][static_cast<int>(OffloadState::kOffloaded)], 0u);
  uint32_t used = 0;
  for (const auto& e : fib.image().tcam) used += e.valid();
  EXPECT_GT(used, 0u);
  std::cout << "IPv6: " << r.addresses << " destinations, " << r.forwarded << " forwarded, " << r.owed << " owed, "
            << used << " TCAM entries\n";
}

INSTANTIATE_TEST_SUITE_P(Models, RandomTable,
                         ::testing::Values(Param{2, EcmpPolicy::kFirst}, Param{4, EcmpPolicy::kFirst},
                                           Param{2, EcmpPolicy::kPunt}));

// --- a data-centre IPv6 table: everything offloaded ------------------------------

struct DcParam {
  int code_bits;
  bool dual_stack;  // an IPv4 table beside it, using one slot
};

class DcFabric6 : public ::testing::TestWithParam<DcParam> {};

TEST_P(DcFabric6, FullyOffloadedAndForwardsRight) {
  const auto [bits, dual] = GetParam();
  RandomWorlds gen(TestSeed("DcFabric6"));
  auto& rng = gen.rng();
  const FibConfig cfg = Config(bits, EcmpPolicy::kFirst);
  const int slots = cfg.caps.slots();
  const int gateways = slots - 1 - (dual ? 1 : 0);  // + one connected next-hop (+ the IPv4 gateway)
  World w;
  for (int k = 0; k < gateways; ++k) {
    const NextHop g = gen.Gateway6(k);
    w.neigh[*g.gateway] = Neighbor{*g.gateway, gen.RandomMac(), g.port, NeighState::kReachable};
  }
  auto gw = [&] { return std::vector<NextHop>{gen.Gateway6(static_cast<int>(rng() % gateways))}; };
  w.routes[*Prefix::Parse("::/0")] = {gen.Gateway6(0)};
  const U128 dc = U128{0x20010db8} << 96;
  std::vector<Prefix> p48, p56;
  // 29 + the server /64 + ::/0 = 31 routes, and the default route's two
  // never-forwarded holes (fe00::/7, ::/64: fib/martians.h): 33 > 32 entries
  // would not fit; 30 routes + 2 holes do.
  while (w.routes.size() < 29) {
    const int kind = static_cast<int>(rng() % 3);
    Prefix p;
    if (kind == 0 || p48.empty()) {
      p = *Prefix::Make(IpAddr::V6(dc | (U128(rng() % 16) << 80)), 48);
      p48.push_back(p);
    } else if (kind == 1 || p56.empty()) {
      p = *Prefix::Make(IpAddr::V6(gen.RandomInside(p48[rng() % p48.size()])), 56);
      p56.push_back(p);
    } else {
      p = *Prefix::Make(IpAddr::V6(gen.RandomInside(p56[rng() % p56.size()])), 64);
    }
    w.routes[p] = gw();
  }
  // A server /64 on port 3, its hosts in the NEIGH CAM.
  const Prefix servers = *Prefix::Make(IpAddr::V6(dc | (U128{0xff} << 72)), 64);
  w.routes[servers] = {NextHop{std::nullopt, PortId(3)}};
  for (int i = 0; i < 4; ++i) {
    const IpAddr a = IpAddr::V6(gen.RandomInside(servers));
    w.neigh[a] = Neighbor{a, gen.RandomMac(), PortId(3), NeighState::kReachable};
  }
  if (dual) {
    const NextHop g4{IpAddr::V4(0x0A000001u), PortId(0)};
    w.neigh[*g4.gateway] = Neighbor{*g4.gateway, gen.RandomMac(), g4.port, NeighState::kReachable};
    w.routes[Prefix::V4(0, 0)] = {g4};
    w.routes[Prefix::V4(0x0A010000u, 16)] = {g4};
  }
  ASSERT_LE(w.routes.size() - (dual ? 2 : 0), 32u);
  Fib fib(cfg);
  w.LoadInto(fib);
  fib.Commit();

  uint64_t offloaded = 0;
  fib.ForEachRoute(Family::kV6, [&](const RouteInfo& r) {
    EXPECT_EQ(r.state, OffloadState::kOffloaded)
        << r.route.prefix.ToString() << ": " << OffloadStateName(r.state) << " " << PuntReasonName(r.reason);
    offloaded += r.state == OffloadState::kOffloaded;
    return true;
  });
  EXPECT_EQ(offloaded, w.routes.size() - (dual ? 2 : 0));
  const auto bar = EncodeBar(fib.image());
  const auto lpm = w.Oracle();
  auto expect_forward = [&](const IpAddr& dst) {
    const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
    const auto ok = lpm.Acceptable(dst);
    EXPECT_TRUE(d.forward && ok.count({d.dst_mac, d.port})) << dst.ToString() << " -> " << d.ToString();
  };
  // A route's edge address may lie in a longer route: when that is the
  // server /64 and the address has no neighbour, punting is the only right
  // answer (a /56 holding the server /64, say).
  auto expect_forward_or_unresolved = [&](const IpAddr& dst) {
    const auto m = lpm.Match(dst);
    if (m && m->first == servers && !w.neigh.count(dst)) {
      const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
      EXPECT_FALSE(d.forward) << dst.ToString() << " has no neighbour but -> " << d.ToString();
      return;
    }
    expect_forward(dst);
  };
  // Multicast, link-local (held as fe00::/7) and ::/64 (::1) are never forwarded:
  // the default route's first and last addresses, and a random one, step
  // out of them.
  auto routable = [](U128 a) {
    const uint64_t hi = static_cast<uint64_t>(a >> 64);
    return hi >> 57 != (0xfe >> 1) && hi != 0;  // fe00::/7 and ::/64 punt
  };
  for (const auto& [p, paths] : w.routes) {
    if (p.family() != Family::kV6 || paths[0].connected()) continue;
    const U128 host = p.len() == 0 ? ~U128{0} : ~U128{0} >> p.len();
    for (U128 a : {p.addr().v6(), p.addr().v6() | host, gen.RandomInside(p)}) {
      if (!routable(a) && p.len() == 0) a = a >> 127 ? a & ~(U128{0x03} << 120) : a | (U128{1} << 64);
      if (routable(a)) expect_forward_or_unresolved(IpAddr::V6(a));
    }
  }
  for (const auto& [a, n] : w.neigh) {
    if (!a.is_v4() && servers.Contains(a)) expect_forward(a);
  }
  const auto r = CheckV6Sampled(bar, w, lpm, fib, rng);
  EXPECT_TRUE(r.ok()) << r.first_error;
  if (dual) {
    expect_forward(IpAddr::V4(0x0A010203u));
    expect_forward(IpAddr::V4(0xC0000201u));
  }
}

INSTANTIATE_TEST_SUITE_P(Models, DcFabric6,
                         ::testing::Values(DcParam{2, false}, DcParam{4, false}, DcParam{2, true}, DcParam{4, true}));

// --- update sequences ------------------------------------------------------------

// Destinations probed in every intermediate state, indexed by SRAM word.
struct Probes {
  std::vector<IpAddr> all;  // IPv6 ones are looked up after every entry write
  std::unordered_map<uint32_t, std::vector<size_t>> by_word;
  void Add(uint32_t a) {
    by_word[a >> 10].push_back(all.size());
    all.push_back(IpAddr::V4(a));
  }
};

Probes MakeProbes(const World& a, const World& b) {
  Probes p;
  for (uint32_t s = 0; s < 256; ++s) p.Add(0x0A000000u | (s << 8) | 0x2A);  // 10.0.0.0/16
  for (uint32_t x = 0; x < 256; x += 37) p.Add(0x0A002A00u | x);
  for (uint32_t a8 : {1u, 11u, 20u, 99u, 200u}) p.Add(a8 << 24 | 0x010203);
  for (const World* w : {&a, &b}) {
    for (const auto& [pfx, paths] : w->routes) {
      if (pfx.len() > 24) {
        for (uint32_t x = 0; x < 256; x += 16) p.Add((pfx.addr().v4() & 0xFFFFFF00u) | x);
        p.Add(pfx.addr().v4());
      }
    }
    for (const auto& [addr, n] : w->neigh) {
      if (addr.is_v4()) p.Add(addr.v4());
      else p.all.push_back(addr);
    }
    for (const auto& [pfx, paths] : w->routes) {
      if (pfx.family() != Family::kV6) continue;
      const U128 host = pfx.len() == 0 ? ~U128{0} : pfx.len() >= 128 ? U128{0} : ~U128{0} >> pfx.len();
      for (U128 off : {U128{0}, host, host >> 1, host >> 3}) p.all.push_back(IpAddr::V6(pfx.addr().v6() | off));
    }
  }
  return p;
}

// Addresses under the TCAM entries of an image (first, last, middle of each).
void AddTcamProbes(Probes& p, const DeviceImage& img) {
  for (const auto& e : img.tcam) {
    if (!e.valid()) continue;
    const U128 base = U128(e.value) << 64, host = (U128(~e.mask) << 64) | ~uint64_t{0};
    for (U128 off : {U128{0}, host, host >> 1}) p.all.push_back(IpAddr::V6(base | off));
  }
}

// Same forwarding as a from-scratch compile: with the same slot owners the
// images are equal up to code numbering; otherwise every /24 that both code
// uses the same next-hop, and one that only one codes has an owner the
// other lacks (or holds a multipath route, where any path is right — also
// one longer than the /24 inside it).
void ExpectSameAsScratch(const Fib& inc, const Fib& scratch, const oracle::ReferenceLpm& lpm) {
  const auto& a = inc.image();
  const auto& b = scratch.image();
  std::vector<std::optional<NextHop>> oa(16), ob(16);
  for (const auto& s : inc.Slots()) oa[s.code] = s.owner;
  for (const auto& s : scratch.Slots()) ob[s.code] = s.owner;
  const auto owners_a = Owners(inc), owners_b = Owners(scratch);
  const bool same_owners = owners_a == owners_b;
  const std::set<uint32_t> longer = lpm.Slash24sWithLonger();
  const std::vector<uint8_t> paths24 = lpm.PathsBy24();
  uint64_t mismatches = 0;
  std::string first;
  for (uint32_t i = 0; i < (1u << 24); ++i) {
    const uint8_t ca = a.CodeOf24(i), cb = b.CodeOf24(i);
    if (ca == 0 && cb == 0) continue;
    const auto na = ca ? oa[ca] : std::nullopt, nb = cb ? ob[cb] : std::nullopt;
    if (na == nb) continue;
    bool ok = false;
    if (!same_owners) {
      // Multipath anywhere in the /24 (a longer route inside it too): its
      // answer is whichever path holds a code, so the owners decide it. Only a
      // /24 with longer routes inside needs its hosts looked up one by one (a
      // lookup per /24 timed out CI under ASan when a default route mismatched).
      bool multipath = paths24[i] > 1;
      for (uint32_t host = 0; host < 256 && !multipath && longer.count(i); ++host) {
        const auto m = lpm.Match(IpAddr::V4(i << 8 | host));
        multipath = m && m->second.size() > 1;
      }
      ok = multipath || (na && !nb && !owners_b.count(*na)) || (nb && !na && !owners_a.count(*nb));
    }
    if (!ok && mismatches++ == 0) {
      first = IpAddr::V4(i << 8).ToString() + "/24: incremental " + (na ? na->ToString() : "punt") + ", scratch " +
              (nb ? nb->ToString() : "punt");
    }
  }
  EXPECT_EQ(mismatches, 0u) << first;
  // Entries of the same owner are the same bytes; the CAMs hold the same set.
  for (int c = 1; c < 16; ++c) {
    if (!oa[c]) continue;
    for (int d = 1; d < 16; ++d) {
      if (ob[d] == oa[c]) {
        EXPECT_EQ(a.nexthop[c], b.nexthop[d]) << "entry of " << oa[c]->ToString();
      }
    }
  }
  auto cam = [](const DeviceImage& img) {
    std::set<std::array<uint8_t, 32>> s;
    for (const auto& e : img.neigh) {
      if (e.valid()) s.insert(e.Encode());
    }
    return s;
  };
  // Which neighbours qualify depends on which connected next-hops hold slots.
  if (same_owners) {
    EXPECT_EQ(cam(a), cam(b));
  }
}

struct SeqParam {
  int code_bits;
  int v4_routes;
  int v4_gateways;  // few: IPv6 next-hops compete for the slots IPv4 leaves
};

class RandomSequence : public ::testing::TestWithParam<SeqParam> {};

TEST_P(RandomSequence, EveryStepSafeAndEndEqualsScratch) {
  const auto [bits, v4_routes, v4_gateways] = GetParam();
  RandomWorlds gen(TestSeed("RandomSequence"));
  auto [shape, shape6, world] = MakeSequenceWorld(gen, v4_routes, v4_gateways);
  const FibConfig cfg = Config(bits, EcmpPolicy::kFirst);
  Fib fib(cfg);
  world.LoadInto(fib);
  fib.Commit();
  std::vector<uint8_t> bar = EncodeBar(fib.image());

  uint64_t steps = 0, checks = 0, slot_moves = 0, tcam_writes = 0, retire_tcam_writes = 0;
  for (int round = 0; round < 150; ++round) {
    const World before = world;
    for (int n = 1 + static_cast<int>(gen.rng()() % 4); n > 0; --n) {
      if (gen.rng()() % 3 == 0) {
        RandomOp6(gen, shape6, world, fib);
      } else {
        RandomOp(gen, shape, world, fib);
      }
    }
    const DeviceImage old_image = fib.image();
    // In two steps, as the pipeline pushes them: the safe deltas, then the
    // TCAM's best entries (Fib::CommitSafe).
    const auto safe = fib.CommitSafe();
    const DeviceImage safe_image = fib.image();
    const auto best = fib.CommitBest();
    slot_moves += safe.size() > 1;
    for (const auto& ds : {safe, best}) {
      for (const auto& d : ds) tcam_writes += d.tcam.size();
    }
    if (safe.size() > 1) retire_tcam_writes += safe[0].tcam.size();
    // A commit batches route and neighbour changes; either may be seen first,
    // so a state is correct under old or new routes with old or new neighbours.
    World mixed1{before.routes, world.neigh}, mixed2{world.routes, before.neigh};
    const auto old_lpm = before.Oracle(), new_lpm = world.Oracle();
    const auto mix1_lpm = mixed1.Oracle(), mix2_lpm = mixed2.Oracle();
    Probes probes = MakeProbes(before, world);
    AddTcamProbes(probes, old_image);
    AddTcamProbes(probes, safe_image);
    AddTcamProbes(probes, fib.image());
    bool safe_pushed = false;  // from then on only the new routes (with old or new neighbours) are right
    auto check = [&](size_t idx) {
      const IpAddr& dst = probes.all[idx];
      const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
      ++checks;
      if (!d.forward) return;
      const oracle::Forward f{d.dst_mac, d.port};
      auto describe = [&](const oracle::ReferenceLpm& lpm) {
        const auto m = lpm.Match(dst);
        std::string s = m ? m->first.ToString() : "no route";
        if (m) {
          for (const auto& nh : m->second) s += " [" + nh.ToString() + "]";
        }
        return s;
      };
      if (safe_pushed) {
        ASSERT_TRUE(new_lpm.Acceptable(dst).count(f) || mix2_lpm.Acceptable(dst).count(f))
            << "round " << round << " step " << steps << ", after the safe deltas: " << dst.ToString() << " -> "
            << d.ToString() << "; before: " << describe(old_lpm) << "; after: " << describe(new_lpm);
        return;
      }
      ASSERT_TRUE(old_lpm.Acceptable(dst).count(f) || new_lpm.Acceptable(dst).count(f) ||
                  mix1_lpm.Acceptable(dst).count(f) || mix2_lpm.Acceptable(dst).count(f))
          << "round " << round << " step " << steps << ": " << dst.ToString() << " -> " << d.ToString()
          << "; before: " << describe(old_lpm) << "; after: " << describe(new_lpm);
    };
    auto apply = [&](const std::vector<DeviceDelta>& deltas, const DeviceImage& image) {
      ApplyStepwise(bar, image, deltas, [&](std::optional<uint32_t> word) {
        ++steps;
        if (word) {
          auto it = probes.by_word.find(*word);
          if (it != probes.by_word.end()) {
            for (size_t i : it->second) check(i);
          }
        } else {
          for (size_t i = 0; i < probes.all.size(); ++i) check(i);
        }
      });
    };
    apply(safe, safe_image);
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_TRUE(bar == EncodeBar(safe_image)) << "round " << round << ": applied safe deltas != their image";
    safe_pushed = true;
    for (size_t i = 0; i < probes.all.size(); ++i) check(i);
    if (::testing::Test::HasFatalFailure()) return;
    apply(best, fib.image());
    if (::testing::Test::HasFatalFailure()) return;
    // The deltas took the device exactly to the new image.
    ASSERT_TRUE(bar == EncodeBar(fib.image())) << "round " << round << ": applied deltas != image";
  }
  Fib scratch(cfg);
  world.LoadInto(scratch);
  scratch.Commit();
  ExpectSameAsScratch(fib, scratch, world.Oracle());
  const auto r6 = CheckV6Sampled(bar, world, world.Oracle(), fib, gen.rng());
  EXPECT_TRUE(r6.ok()) << r6.first_error;
  std::cout << "steps " << steps << ", probe checks " << checks << ", commits with a slot move " << slot_moves
            << ", TCAM writes " << tcam_writes << " (" << retire_tcam_writes << " in retire deltas)\n";
}

INSTANTIATE_TEST_SUITE_P(CodeBits, RandomSequence,
                         ::testing::Values(SeqParam{2, 40, 6}, SeqParam{4, 40, 6}, SeqParam{2, 3, 1}));

// --- more next-hop groups than a /24 cell's narrow group field (1024) ------------

Prefix ManyGroupsPrefix(RandomWorlds& gen) {
  const int len = 12 + static_cast<int>(gen.rng()() % 13);  // /12 .. /24
  return Prefix::V4(0x0A000000u | static_cast<uint32_t>(gen.rng()() & 0xFFFFFF), len);
}

std::vector<NextHop> ManyGroupsPaths(RandomWorlds& gen, int gateways) {
  std::vector<NextHop> p;
  while (p.size() < 2 + gen.rng()() % 2) {
    const NextHop g = gen.Gateway(static_cast<int>(gen.rng()() % static_cast<uint64_t>(gateways)));
    if (std::find(p.begin(), p.end(), g) == p.end()) p.push_back(g);
  }
  std::sort(p.begin(), p.end());
  return p;
}

// Routes under 10/8, each with its own ECMP pair (or triple) of 60 gateways:
// far more distinct path sets than 1024, so group ids of 1024 and up are painted.
World ManyGroupsWorld(RandomWorlds& gen, size_t routes) {
  constexpr int kGateways = 60;
  World w;
  for (int k = 0; k < kGateways; ++k) {
    if (auto n = gen.GatewayNeighbor(k)) w.neigh[n->addr] = *n;
  }
  w.routes[Prefix::V4(0, 0)] = {gen.Gateway(0)};
  while (w.routes.size() < routes) w.routes[ManyGroupsPrefix(gen)] = ManyGroupsPaths(gen, kGateways);
  return w;
}

size_t DistinctPathSets(const World& w) {
  std::set<std::vector<NextHop>> sets;
  for (const auto& [p, paths] : w.routes) sets.insert(paths);
  return sets.size();
}

TEST_P(RandomTable, ManyGroupsEverySlash24MatchesReferenceLpm) {
  const auto [bits, ecmp] = GetParam();
  RandomWorlds gen(TestSeed("ManyGroups"));
  const World world = ManyGroupsWorld(gen, 3000);
  ASSERT_GT(DistinctPathSets(world), 2000u);
  Fib fib(Config(bits, ecmp));
  world.LoadInto(fib);
  fib.Commit();
  const auto r = CheckAllSlash24(EncodeBar(fib.image()), world, world.Oracle(), Owners(fib), ecmp, 256);
  EXPECT_EQ(r.misforwarded, 0u) << r.first_error;
  EXPECT_EQ(r.owed_punted, 0u) << r.first_error;
  EXPECT_GT(r.forwarded, 1'000'000u);
}

// Groups come and go (ids are reused, above and below 1024) over many
// commits; the end state forwards like a from-scratch compile.
TEST(ManyGroups, ChurnEndEqualsScratch) {
  RandomWorlds gen(TestSeed("ManyGroupsChurn"));
  auto& rng = gen.rng();
  World world = ManyGroupsWorld(gen, 2500);
  const FibConfig cfg = Config(4, EcmpPolicy::kFirst);
  Fib fib(cfg);
  world.LoadInto(fib);
  fib.Commit();
  for (int round = 0; round < 16; ++round) {
    for (int k = 0; k < 60; ++k) {
      auto it = std::next(world.routes.begin(), static_cast<long>(1 + rng() % (world.routes.size() - 1)));
      fib.DeleteRoute(it->first, RouteSource::kStatic);
      world.routes.erase(it);
    }
    for (int k = 0; k < (round < 8 ? 40 : 80); ++k) {
      const Prefix p = ManyGroupsPrefix(gen);
      world.routes[p] = ManyGroupsPaths(gen, 60);
      fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, world.routes[p]});
    }
    fib.Commit();
  }
  Fib scratch(cfg);
  world.LoadInto(scratch);
  scratch.Commit();
  ExpectSameAsScratch(fib, scratch, world.Oracle());
}

}  // namespace
}  // namespace fibnic::testing
