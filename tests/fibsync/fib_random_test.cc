// Random tables checked /24 by /24 against the reference LPM, and random
// update sequences whose every bus step is checked and whose end state must
// equal a from-scratch compile. Seeds are printed; FIBSYNC_SEED replays one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <unordered_map>

#include "hwif/fibnic_image_codec.h"
#include "hwif/fibnic_lookup.h"
#include "tests/fibsync/delta_applier.h"
#include "tests/fibsync/random_world.h"

namespace fibnic::testing {
namespace {

uint64_t Seed(const char* what) {
  const char* env = std::getenv("FIBSYNC_SEED");
  const uint64_t seed = env ? std::strtoull(env, nullptr, 0)
                            : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::cout << what << ": seed " << seed << " (FIBSYNC_SEED=" << seed << " replays it)\n";
  return seed;
}

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
  RandomWorlds gen(Seed("RandomTable"));
  WorldShape shape;
  shape.gateways = bits == 4 ? 20 : 6;  // more gateways than slots either way
  const World world = gen.Make(shape);
  Fib fib(Config(bits, ecmp));
  world.LoadInto(fib);
  fib.Commit();
  const auto owners = Owners(fib);
  EXPECT_EQ(owners.size(), static_cast<size_t>(fib.config().caps.slots()));
  const auto r = CheckAllSlash24(EncodeBar(fib.image()), world, world.Oracle(), owners, ecmp, 256);
  EXPECT_EQ(r.misforwarded, 0u) << r.first_error;
  EXPECT_EQ(r.owed_punted, 0u) << r.first_error;
  EXPECT_GT(r.owed, 8'000'000u);  // the default route's gateway holds a slot
}

INSTANTIATE_TEST_SUITE_P(Models, RandomTable,
                         ::testing::Values(Param{2, EcmpPolicy::kFirst}, Param{4, EcmpPolicy::kFirst},
                                           Param{2, EcmpPolicy::kPunt}));

// --- update sequences ------------------------------------------------------------

// Destinations probed in every intermediate state, indexed by SRAM word.
struct Probes {
  std::vector<IpAddr> all;
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
    for (const auto& [addr, n] : w->neigh) p.Add(addr.v4());
  }
  return p;
}

// One random change to the world and the Fib alike.
void RandomOp(RandomWorlds& gen, const WorldShape& shape, World& w, Fib& fib) {
  auto& rng = gen.rng();
  const int op = static_cast<int>(rng() % 100);
  if (op < 45 || w.routes.size() < 3) {
    const Prefix p = gen.RandomPrefix(shape);
    auto paths = gen.RandomPaths(shape);
    w.routes[p] = paths;
    fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, paths});
    if (paths.size() == 1 && paths[0].connected() && !paths[0].to_host() && p.len() >= 16) {
      World extra;
      gen.AddConnectedNeighbors(extra, p, paths[0].port);
      for (const auto& [a, n] : extra.neigh) {
        w.neigh[a] = n;
        fib.UpsertNeighbor(n);
      }
    }
  } else if (op < 75) {
    auto it = std::next(w.routes.begin(), static_cast<long>(rng() % w.routes.size()));
    fib.DeleteRoute(it->first, RouteSource::kStatic);
    w.routes.erase(it);
  } else if (op < 90) {
    // A gateway's neighbour changes MAC, fails, recovers or moves port.
    const int k = static_cast<int>(rng() % static_cast<uint64_t>(shape.gateways));
    Neighbor n{*gen.Gateway(k).gateway, gen.RandomMac(), gen.Gateway(k).port, NeighState::kReachable};
    const int how = static_cast<int>(rng() % 4);
    if (how == 1) n.state = NeighState::kFailed;
    if (how == 2) n.port = static_cast<PortId>((n.port + 1) % 4);
    if (how == 3 && w.neigh.count(n.addr)) n.mac = w.neigh[n.addr].mac;
    w.neigh[n.addr] = n;
    fib.UpsertNeighbor(n);
  } else if (!w.neigh.empty()) {
    auto it = std::next(w.neigh.begin(), static_cast<long>(rng() % w.neigh.size()));
    fib.DeleteNeighbor(it->first);
    w.neigh.erase(it);
  }
}

// Same forwarding as a from-scratch compile: with the same slot owners the
// images are equal up to code numbering; otherwise every /24 that both code
// uses the same next-hop, and one that only one codes has an owner the
// other lacks (or is multipath, where any path is right).
void ExpectSameAsScratch(const Fib& inc, const Fib& scratch, const oracle::ReferenceLpm& lpm) {
  const auto& a = inc.image();
  const auto& b = scratch.image();
  std::vector<std::optional<NextHop>> oa(16), ob(16);
  for (const auto& s : inc.Slots()) oa[s.code] = s.owner;
  for (const auto& s : scratch.Slots()) ob[s.code] = s.owner;
  const auto owners_a = Owners(inc), owners_b = Owners(scratch);
  const bool same_owners = owners_a == owners_b;
  uint64_t mismatches = 0;
  std::string first;
  for (uint32_t i = 0; i < (1u << 24); ++i) {
    const uint8_t ca = a.CodeOf24(i), cb = b.CodeOf24(i);
    if (ca == 0 && cb == 0) continue;
    const auto na = ca ? oa[ca] : std::nullopt, nb = cb ? ob[cb] : std::nullopt;
    if (na == nb) continue;
    bool ok = false;
    if (!same_owners) {
      const auto m = lpm.Match(IpAddr::V4(i << 8 | 0x2A));
      const bool multipath = m && m->second.size() > 1;
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

class RandomSequence : public ::testing::TestWithParam<int> {};

TEST_P(RandomSequence, EveryStepSafeAndEndEqualsScratch) {
  const int bits = GetParam();
  RandomWorlds gen(Seed("RandomSequence"));
  WorldShape shape;
  shape.regions = {10};
  shape.min_len = 16;
  shape.gateways = 6;
  shape.routes = 40;
  shape.within = Prefix::V4(0x0A000000u, 16);  // probes see every route (plus the default)
  World world = gen.Make(shape);
  const FibConfig cfg = Config(bits, EcmpPolicy::kFirst);
  Fib fib(cfg);
  world.LoadInto(fib);
  fib.Commit();
  std::vector<uint8_t> bar = EncodeBar(fib.image());

  uint64_t steps = 0, checks = 0, slot_moves = 0;
  for (int round = 0; round < 150; ++round) {
    const World before = world;
    for (int n = 1 + static_cast<int>(gen.rng()() % 4); n > 0; --n) RandomOp(gen, shape, world, fib);
    const auto deltas = fib.Commit();
    slot_moves += deltas.size() > 1;
    // A commit batches route and neighbour changes; either may be seen first,
    // so a state is correct under old or new routes with old or new neighbours.
    World mixed1{before.routes, world.neigh}, mixed2{world.routes, before.neigh};
    const auto old_lpm = before.Oracle(), new_lpm = world.Oracle();
    const auto mix1_lpm = mixed1.Oracle(), mix2_lpm = mixed2.Oracle();
    const Probes probes = MakeProbes(before, world);
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
      ASSERT_TRUE(old_lpm.Acceptable(dst).count(f) || new_lpm.Acceptable(dst).count(f) ||
                  mix1_lpm.Acceptable(dst).count(f) || mix2_lpm.Acceptable(dst).count(f))
          << "round " << round << " step " << steps << ": " << dst.ToString() << " -> " << d.ToString()
          << "; before: " << describe(old_lpm) << "; after: " << describe(new_lpm);
    };
    ApplyStepwise(bar, fib.image(), deltas, [&](std::optional<uint32_t> word) {
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
    if (::testing::Test::HasFatalFailure()) return;
    // The deltas took the device exactly to the new image.
    ASSERT_TRUE(bar == EncodeBar(fib.image())) << "round " << round << ": applied deltas != image";
  }
  Fib scratch(cfg);
  world.LoadInto(scratch);
  scratch.Commit();
  ExpectSameAsScratch(fib, scratch, world.Oracle());
  std::cout << "steps " << steps << ", probe checks " << checks << ", commits with a slot move " << slot_moves << "\n";
}

INSTANTIATE_TEST_SUITE_P(CodeBits, RandomSequence, ::testing::Values(2, 4));

}  // namespace
}  // namespace fibnic::testing
