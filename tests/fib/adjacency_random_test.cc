// Adjacencies, randomised: many next-hops share few adjacencies — six routers,
// each an IPv4 gateway, an IPv6 gateway, a link-local gateway (fe80::1 on
// four ports at once) and, on four of them, 169.254.0.1 onlink — and MACs move
// between them (one next-hop to another router's MAC or a new one, a whole
// router's MAC, failures, deletions of one port's neighbour). Every commit is
// applied one bus write at a time and every probe looked up in every
// intermediate state against the reference LPM (old or new routes with old or
// new neighbours); after each commit no two valid NEXTHOP entries name the same
// (MAC, port), and every destination whose route has a resolved path behind a
// valid entry forwards. Seeds are printed; FIBNIC_SEED replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <unordered_map>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "tests/fib/delta_applier.h"
#include "tests/oracle/reference_lpm.h"
#include "tests/support/test_seed.h"

namespace fibnic::testing {
namespace {

constexpr int kRouters = 6;  // routers r and r + 4 share port r % 4

PortId PortOf(int r) { return static_cast<PortId>(r % 4); }
MacAddr RouterMac(int r, int generation) {
  return MacAddr{{0x02, 0, 0, static_cast<uint8_t>(generation), 0, static_cast<uint8_t>(r + 1)}};
}

// A router's next-hops: IPv4, IPv6 global, link-local and (r < 4) 169.254.0.1.
std::vector<NextHop> RouterNextHops(int r) {
  const PortId p = PortOf(r);
  std::vector<NextHop> out{NextHop{IpAddr::V4(0x64400001u + (uint32_t(r) << 8)), p},
                           NextHop{IpAddr::V6((U128{0xfd00} << 112) | (U128(r) << 96) | 1), p},
                           NextHop{IpAddr::V6((U128{0xfe80} << 112) | (r < 4 ? 1 : 2)), p}};
  if (r < 4) out.push_back(NextHop{*IpAddr::Parse("169.254.0.1"), p});
  return out;
}

struct AdjWorld {
  std::map<Prefix, std::vector<NextHop>> routes;
  std::map<std::pair<IpAddr, PortId>, Neighbor> neigh;
  oracle::ReferenceLpm Oracle(const std::map<std::pair<IpAddr, PortId>, Neighbor>& with) const {
    oracle::ReferenceLpm lpm;
    for (const auto& [p, paths] : routes) lpm.SetRoute(p, paths);
    for (const auto& [k, n] : with) lpm.SetNeighbor(n);
    return lpm;
  }
};

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {
    for (int r = 0; r < kRouters; ++r) {
      for (const NextHop& nh : RouterNextHops(r)) nhs_.push_back(nh);
    }
  }
  std::mt19937_64& rng() { return rng_; }
  const NextHop& AnyNextHop() { return nhs_[rng_() % nhs_.size()]; }
  // IPv6 routes go via IPv6 next-hops only; IPv4 routes via any (RFC 5549).
  std::vector<NextHop> Paths(bool v6) {
    std::vector<NextHop> out;
    const int n = rng_() % 4 == 0 ? 2 : 1;
    while (static_cast<int>(out.size()) < n) {
      const NextHop nh = AnyNextHop();
      if (v6 && nh.gateway->is_v4()) continue;
      if (std::find(out.begin(), out.end(), nh) == out.end()) out.push_back(nh);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  Prefix V4Prefix() {  // /16 .. /24 inside 10.0.0.0/16: every /24 uniform
    const int len = 16 + static_cast<int>(rng_() % 9);
    return Prefix::V4(0x0A000000u | static_cast<uint32_t>(rng_() & 0xFFFF), len);
  }
  Prefix V6Prefix() {
    const int len = 40 + 8 * static_cast<int>(rng_() % 4);  // /40 .. /64
    const U128 a = (U128{0x20010db8} << 96) | (U128(rng_() % 8) << 84) | (U128(rng_()) << 64 >> 20);
    return *Prefix::Make(IpAddr::V6(a), len);
  }

 private:
  std::mt19937_64 rng_;
  std::vector<NextHop> nhs_;
};

// One random change: a route, or a neighbour (a MAC moving to another router
// or a new one, a whole router's MAC, a failure, a deletion of one port's).
void RandomChange(Generator& gen, AdjWorld& w, Fib& fib, int& generation) {
  auto& rng = gen.rng();
  const int op = static_cast<int>(rng() % 100);
  if (op < 35) {
    const bool v6 = rng() % 3 == 0;
    std::vector<Prefix> v6_routes;
    for (const auto& [p, paths] : w.routes) {
      if (p.family() == Family::kV6) v6_routes.push_back(p);
    }
    if (v6 && v6_routes.size() >= 20) return;  // the TCAM holds them all
    const Prefix p = v6 ? gen.V6Prefix() : gen.V4Prefix();
    w.routes[p] = gen.Paths(v6);
    fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, w.routes[p]});
  } else if (op < 45 && w.routes.size() > 4) {
    auto it = std::next(w.routes.begin(), static_cast<long>(rng() % w.routes.size()));
    fib.DeleteRoute(it->first, RouteSource::kStatic);
    w.routes.erase(it);
  } else {
    auto set = [&](const Neighbor& n) {
      w.neigh[{n.addr, n.port}] = n;
      fib.UpsertNeighbor(n);
    };
    const NextHop nh = gen.AnyNextHop();
    const auto key = std::make_pair(*nh.gateway, nh.port);
    Neighbor n{*nh.gateway, RouterMac(static_cast<int>(rng() % kRouters), generation), nh.port,
               NeighState::kReachable};
    const int how = static_cast<int>(rng() % 6);
    if (how == 0) {  // a whole router's MAC changes
      const int r = static_cast<int>(rng() % kRouters);
      const MacAddr mac = RouterMac(r, ++generation);
      for (const NextHop& x : RouterNextHops(r)) set(Neighbor{*x.gateway, mac, x.port, NeighState::kReachable});
    } else if (how == 1) {
      n.state = NeighState::kFailed;
      if (w.neigh.count(key)) n.mac = w.neigh[key].mac;
      set(n);
    } else if (how == 2 && w.neigh.count(key)) {
      w.neigh.erase(key);
      fib.DeleteNeighbor(nh.gateway.value(), nh.port);
    } else {
      set(n);  // to some router's current-generation MAC: another adjacency, or back
    }
  }
}

struct Probes {
  std::vector<IpAddr> all;
  std::unordered_map<uint32_t, std::vector<size_t>> by_word;  // IPv4 probes by SRAM word
};

Probes MakeProbes(const AdjWorld& a, const AdjWorld& b, const DeviceImage& old_img, const DeviceImage& new_img) {
  Probes p;
  for (uint32_t s = 0; s < 256; ++s) {
    const uint32_t addr = 0x0A000000u | (s << 8) | 0x2A;
    p.by_word[addr >> 10].push_back(p.all.size());
    p.all.push_back(IpAddr::V4(addr));
  }
  for (const AdjWorld* w : {&a, &b}) {
    for (const auto& [pfx, paths] : w->routes) {
      if (pfx.family() != Family::kV6) continue;
      const U128 host = ~U128{0} >> pfx.len();
      for (U128 off : {U128{0}, host, host >> 1}) p.all.push_back(IpAddr::V6(pfx.addr().v6() | off));
    }
  }
  for (const DeviceImage* img : {&old_img, &new_img}) {
    for (const auto& e : img->tcam) {
      if (e.valid()) p.all.push_back(IpAddr::V6((U128(e.value) << 64) | 7));
    }
  }
  return p;
}

// After a commit: no two valid entries name one (MAC, port), and every probe
// whose route has a resolved path behind a valid entry forwards.
void CheckAdjacencies(const std::vector<uint8_t>& bar, const DeviceImage& img, const AdjWorld& w, const Probes& probes,
                      int round, uint64_t& owed) {
  std::set<std::pair<MacAddr, uint8_t>> valid;
  for (int c = 1; c <= img.caps.slots(); ++c) {
    const auto e = regs::NexthopEntry::Decode(&bar[regs::NexthopOffset(static_cast<uint32_t>(c))]);
    if (!e.valid() || e.connected()) continue;
    ASSERT_TRUE(valid.insert({e.dst_mac, e.port}).second)
        << "round " << round << ": two codes name " << e.dst_mac.ToString() << " port " << int(e.port);
  }
  const auto lpm = w.Oracle(w.neigh);
  for (const IpAddr& dst : probes.all) {
    const auto m = lpm.Match(dst);
    if (!m) continue;
    bool behind_valid = false;
    for (const NextHop& nh : m->second) {
      auto it = w.neigh.find({*nh.gateway, nh.port});
      if (it == w.neigh.end() || !NeighUsable(it->second.state)) continue;
      behind_valid |= valid.count({it->second.mac, nh.port}) != 0;
    }
    if (!behind_valid) continue;
    ++owed;
    const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
    ASSERT_TRUE(d.forward && lpm.Acceptable(dst).count({d.dst_mac, d.port}))
        << "round " << round << ": " << dst.ToString() << " is owed forwarding, got " << d.ToString();
  }
}

class AdjacencyRandom : public ::testing::TestWithParam<int> {};

TEST_P(AdjacencyRandom, EveryWriteSafeAndSharedAdjacenciesForward) {
  const int bits = GetParam();
  Generator gen(TestSeed("AdjacencyRandom"));
  FibConfig cfg;
  cfg.caps = bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  Fib fib(cfg);
  AdjWorld world;
  int generation = 0;
  for (int r = 0; r < kRouters; ++r) {
    for (const NextHop& nh : RouterNextHops(r)) {
      const bool onlink = *nh.gateway == *IpAddr::Parse("169.254.0.1");  // FRR's: permanent
      const Neighbor n{*nh.gateway, RouterMac(r, 0), nh.port, onlink ? NeighState::kPermanent : NeighState::kReachable};
      world.neigh[{n.addr, n.port}] = n;
      fib.UpsertNeighbor(n);
    }
  }
  for (int k = 0; k < 30; ++k) {
    const bool v6 = k % 3 == 0;
    const Prefix p = v6 ? gen.V6Prefix() : gen.V4Prefix();
    world.routes[p] = gen.Paths(v6);
    fib.UpsertRoute(Route{p, RouteSource::kStatic, 1, world.routes[p]});
  }
  fib.Commit();
  std::vector<uint8_t> bar = EncodeBar(fib.image());

  uint64_t steps = 0, checks = 0, retires = 0, owed = 0, shared = 0;
  for (int round = 0; round < 200; ++round) {
    const AdjWorld before = world;
    for (int n = 1 + static_cast<int>(gen.rng()() % 3); n > 0; --n) RandomChange(gen, world, fib, generation);
    const DeviceImage old_image = fib.image();
    const auto deltas = fib.Commit();
    retires += deltas.size() > 1;
    const std::vector<oracle::ReferenceLpm> lpms = {before.Oracle(before.neigh), world.Oracle(world.neigh),
                                                     before.Oracle(world.neigh), world.Oracle(before.neigh)};
    const Probes probes = MakeProbes(before, world, old_image, fib.image());
    auto check = [&](size_t i) {
      const IpAddr& dst = probes.all[i];
      const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
      ++checks;
      if (!d.forward) return;
      bool ok = false;
      for (const auto& lpm : lpms) ok |= lpm.Acceptable(dst).count({d.dst_mac, d.port}) != 0;
      ASSERT_TRUE(ok) << "round " << round << " step " << steps << ": " << dst.ToString() << " -> " << d.ToString();
    };
    ApplyStepwise(bar, fib.image(), deltas, [&](std::optional<uint32_t> word) {
      ++steps;
      if (word) {
        if (auto it = probes.by_word.find(*word); it != probes.by_word.end()) {
          for (size_t i : it->second) check(i);
        }
      } else {
        for (size_t i = 0; i < probes.all.size(); ++i) check(i);
      }
    });
    if (::testing::Test::HasFatalFailure()) return;
    ASSERT_TRUE(bar == EncodeBar(fib.image())) << "round " << round << ": applied deltas != image";
    CheckAdjacencies(bar, fib.image(), world, probes, round, owed);
    if (::testing::Test::HasFatalFailure()) return;
    for (const auto& s : fib.Slots()) shared += s.next_hops.size() > 1;
  }
  EXPECT_GT(shared, 0u);
  EXPECT_GT(owed, 0u);
  std::cout << "steps " << steps << ", probe checks " << checks << ", commits with a retire delta " << retires
            << ", owed destinations checked " << owed << ", codes shared by several next-hops " << shared << "\n";
}

INSTANTIATE_TEST_SUITE_P(CodeBits, AdjacencyRandom, ::testing::Values(2, 4));

}  // namespace
}  // namespace fibnic::testing
