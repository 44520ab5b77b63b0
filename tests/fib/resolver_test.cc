// The resolver alone — no Fib, no /24 cell table: groups in a NexthopTable,
// neighbours and weights in, codes out. The expectations are the policy as
// docs/fib.md "Answers and slots" states it, worked out by hand per case
// (and, in the random test, from an independent ranking of the weights).
// Adoption of the device's entries at start: resolver_adoption_test.cc.
#include "fib/resolver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <set>

#include "tests/fib/resolver_config.h"
#include "tests/support/resolver_harness.h"
#include "tests/support/test_seed.h"

namespace fibnic::testing {
namespace {

TEST(FibResolver, FreeSlotsGoToTheHeaviestResolvedNextHops) {
  ResolverHarness h(Config(2));  // codes 1..3
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD}), e = h.Group({kE});
  h.Weigh(a, 500);  // the heaviest, but its gateway has no neighbour
  h.Weigh(b, 100);
  h.Weigh(c, 90);
  h.Weigh(d, 80);
  h.Weigh(e, 70);
  for (const NextHop& nh : {kB, kC, kD, kE}) h.SetNeighbor(nh, 1);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kB, kC, kD}));
  EXPECT_EQ(h.res.CodeOf(kA), 0);
  EXPECT_EQ(h.res.CodeOf(kE), 0);
  EXPECT_EQ(h.res.GroupPuntReason(a), PuntReason::kUnresolved);
  EXPECT_EQ(h.res.GroupPuntReason(e), PuntReason::kNoSlot);
  for (NhgId g : {b, c, d}) {
    EXPECT_NE(codes.after.GroupCode(g), 0);
    EXPECT_EQ(codes.before.GroupCode(g), 0);
    EXPECT_TRUE(codes.owner_changes[codes.after.GroupCode(g)]);
  }
  EXPECT_EQ(codes.after.GroupCode(a), 0);
  EXPECT_EQ(codes.after.GroupCode(e), 0);
  EXPECT_FALSE(codes.any_retired);  // nothing had an owner
  EXPECT_EQ(h.res.slots_used(), 3);
  EXPECT_EQ(h.res.owner_weight(h.res.CodeOf(kB)), 100u);

  // A free slot goes to any resolved next-hop without one, however light:
  // the hysteresis only guards owners.
  h.Weigh(c, 0);  // C's space is gone: its slot is freed and retired
  const CommitCodes next = h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kB, kD, kE}));
  const uint8_t was_c = codes.after.GroupCode(c);
  EXPECT_EQ(h.res.CodeOf(kE), was_c);
  EXPECT_TRUE(next.retired[was_c]);
  EXPECT_TRUE(next.any_retired);
  EXPECT_EQ(next.after.GroupCode(c), 0);
}

// A, B and C own the three codes with 100, 90 and 80 /24s; D is resolved,
// without space yet.
struct ThreeOwners {
  explicit ThreeOwners(double hysteresis)
      : h(Config(2, hysteresis)), a(h.Group({kA})), b(h.Group({kB})), c(h.Group({kC})), d(h.Group({kD})) {
    for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, 1);
    h.Weigh(a, 100);
    h.Weigh(b, 90);
    h.Weigh(c, 80);
    h.Commit();
  }
  ResolverHarness h;
  NhgId a, b, c, d;
};

TEST(FibResolver, AnOwnerIsDisplacedOnlyByAHysteresisHeavierChallenger) {
  ThreeOwners w(1.25);
  ResolverHarness& h = w.h;
  const NhgId a = w.a, c = w.c, d = w.d;
  const uint8_t code_c = h.res.CodeOf(kC);
  ASSERT_NE(code_c, 0);

  h.Weigh(d, 99);  // heavier than C, but less than 1.25 x 80
  CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(kD), 0);
  EXPECT_EQ(h.res.CodeOf(kC), code_c);
  EXPECT_FALSE(codes.any_retired);
  EXPECT_EQ(codes.before.GroupCode(c), codes.after.GroupCode(c));

  h.Weigh(d, 100);  // 1.25 x 80: takes the lightest owner's code
  codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(kD), code_c);
  EXPECT_EQ(h.res.CodeOf(kC), 0);
  EXPECT_TRUE(codes.retired[code_c]);
  EXPECT_TRUE(codes.owner_changes[code_c]);
  for (int k = 1; k <= 3; ++k) {
    if (k != code_c) {
      EXPECT_FALSE(codes.owner_changes[k]) << k;
    }
  }
  EXPECT_EQ(codes.before.GroupCode(c), code_c);
  EXPECT_EQ(codes.after.GroupCode(c), 0);
  EXPECT_EQ(codes.after.GroupCode(d), code_c);
  // While the retire delta lands, nothing may name the code that changes owner.
  EXPECT_EQ(codes.RetirePhaseCode(d), 0);
  EXPECT_EQ(codes.RetirePhaseCode(a), codes.after.GroupCode(a));
  EXPECT_EQ(h.res.GroupPuntReason(c), PuntReason::kNoSlot);
}

TEST(FibResolver, EqualWeightNeverDisplacesEvenWithoutHysteresis) {
  ThreeOwners w(1.0);
  ResolverHarness& h = w.h;
  h.Weigh(w.d, 80);  // ties go to the owner
  EXPECT_FALSE(h.Commit().any_retired);
  EXPECT_EQ(h.res.CodeOf(kD), 0);
  h.Weigh(w.d, 81);
  EXPECT_TRUE(h.Commit().any_retired);
  EXPECT_NE(h.res.CodeOf(kD), 0);
  EXPECT_EQ(h.res.CodeOf(kC), 0);
}

TEST(FibResolver, AnUnresolvedOwnerKeepsItsCodeWithItsEntryInvalid) {
  ResolverHarness h(Config(2));
  const NhgId a = h.Group({kA}), b = h.Group({kB});
  h.SetNeighbor(kA, 7);
  h.SetNeighbor(kB, 8);
  h.Weigh(a, 100);
  h.Weigh(b, 50);
  h.Commit();
  const uint8_t code = h.res.CodeOf(kA);
  const regs::NexthopEntry live = *h.res.EntryFor(code, regs::NexthopEntry{});
  EXPECT_EQ(live, (regs::NexthopEntry{Mac(7), kA.port, regs::kNexthopValid}));

  h.SetNeighbor(kA, 7, NeighState::kFailed);
  EXPECT_EQ(h.res.GroupPuntReason(a), PuntReason::kUnresolved);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(kA), code);  // kept: one entry write punts all its space ...
  EXPECT_FALSE(codes.owner_changes[code]);
  EXPECT_EQ(codes.after.GroupCode(a), code);
  EXPECT_EQ(*h.res.EntryFor(code, live), (regs::NexthopEntry{Mac(7), kA.port, 0}));  // same fields, VALID=0

  // ... and one restores it. A neighbour on another port does not resolve it.
  h.res.UpsertNeighbor(Neighbor{*kA.gateway, Mac(9), PortId(kA.port + 1), NeighState::kReachable});
  EXPECT_FALSE(h.res.Resolved(kA));
  h.SetNeighbor(kA, 9);
  EXPECT_TRUE(h.res.Resolved(kA));
  EXPECT_FALSE(h.Commit().owner_changes[code]);
  EXPECT_EQ(*h.res.EntryFor(code, live), (regs::NexthopEntry{Mac(9), kA.port, regs::kNexthopValid}));
  // A free code has no entry.
  for (int c = 1; c <= 3; ++c) {
    if (!h.res.owners()[c - 1]) {
      EXPECT_FALSE(h.res.EntryFor(c, regs::NexthopEntry{}).has_value());
    }
  }
}

TEST(FibResolver, EachFamilyCountsByItsShare) {
  ResolverHarness h(Config(2));
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  h.Weigh(a, 1);     // 1 of 6 /24s
  h.Weigh(b, 0, 9);  // every IPv6 route, no IPv4 space
  h.Weigh(c, 2);     // 2 of 6
  h.Weigh(d, 3);     // 3 of 6
  h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kB, kC, kD}));
  EXPECT_EQ(h.res.GroupPuntReason(a), PuntReason::kNoSlot);
  EXPECT_EQ(h.res.owner_weight(h.res.CodeOf(kB)), 9u);  // reported unscaled

  // A /24 next to a share of the IPv6 routes does not displace it: the
  // IPv6 owner holds 9 of 10 routes, A's 1 of 7 /24s is far less.
  h.Weigh(a, 1, 1);
  h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kB, kC, kD}));
  // Half the IPv4 space outweighs a few IPv6 routes of many.
  h.Weigh(b, 0, 1);
  h.Weigh(a, 6, 9);  // a: 6/12 + 9/10, b: 1/10, c: 2/12
  h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kA, kC, kD}));

  // Equal shares in one family: the other orders them (without, the lower address, A, would win).
  ResolverHarness t(Config(2));
  const NhgId ta = t.Group({kA}), tb = t.Group({kB}), tc = t.Group({kC}), td = t.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) t.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  t.Weigh(tc, 10);
  t.Weigh(td, 10);
  t.Weigh(ta, 5);
  t.Weigh(tb, 5, 1);
  t.Commit();
  EXPECT_EQ(t.Owners(), (std::set<NextHop>{kB, kC, kD}));
  ResolverHarness u(Config(2));  // the same without B's IPv6 route, from scratch
  const NhgId ua = u.Group({kA}), ub = u.Group({kB}), uc = u.Group({kC}), ud = u.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) u.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  u.Weigh(uc, 10);
  u.Weigh(ud, 10);
  u.Weigh(ua, 5);
  u.Weigh(ub, 5);
  u.Commit();
  EXPECT_EQ(u.Owners(), (std::set<NextHop>{kA, kC, kD}));
}

// An IPv4 routing daemon restarts: B's and C's /24s go for a few seconds
// while their IPv6 routes stay, and a connected-like D with one /24 waits.
// Neither the share ranking nor, once every route has gone, the hold lets D
// in, and the codes stay as they were; after the hold, a weight that stays
// at 0 frees its code.
TEST(FibResolver, ARestartWithinTheHoldKeepsEveryOwnerAndCode) {
  auto clock = std::make_shared<FakeClock>();
  ResolverHarness h(HoldConfig(2, clock, std::chrono::seconds(60)));
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  h.Weigh(a, 300, 300);
  h.Weigh(b, 200, 200);
  h.Weigh(c, 100, 100);
  h.Weigh(d, 1);
  h.Commit();
  const auto codes0 = h.OwnerNextHops();
  const uint8_t code_c = h.res.CodeOf(kC);
  ASSERT_EQ(h.Owners(), (std::set<NextHop>{kA, kB, kC}));
  EXPECT_FALSE(h.res.NextReview().has_value());  // nothing held

  // IPv4 goes (IPv6 stays): D's 1 /24 is the whole IPv4 space now, but the
  // owners' /24s are held.
  clock->Advance(std::chrono::seconds(1));
  h.Weigh(a, 0, 300);
  h.Weigh(b, 0, 200);
  h.Weigh(c, 0, 100);
  CommitCodes codes = h.Commit();
  EXPECT_EQ(h.OwnerNextHops(), codes0);
  EXPECT_FALSE(codes.any_retired);
  ASSERT_TRUE(h.res.NextReview().has_value());
  EXPECT_EQ(*h.res.NextReview(), clock->now - std::chrono::seconds(1) + std::chrono::seconds(60));

  // Everything goes (C entirely): C's code is held for it.
  clock->Advance(std::chrono::seconds(5));
  h.Weigh(c, 0, 0);
  codes = h.Commit();
  EXPECT_EQ(h.OwnerNextHops(), codes0);
  EXPECT_EQ(h.res.CodeOf(kD), 0);

  // And comes back within the hold: nothing moved, nothing to write.
  clock->Advance(std::chrono::seconds(20));
  h.Weigh(a, 300, 300);
  h.Weigh(b, 200, 200);
  h.Weigh(c, 100, 100);
  codes = h.Commit();
  EXPECT_EQ(h.OwnerNextHops(), codes0);
  for (int k = 1; k <= 3; ++k) EXPECT_FALSE(codes.owner_changes[k]) << k;

  // C goes for longer than the hold: its code is freed and D, waiting, takes it.
  clock->Advance(std::chrono::seconds(1));
  h.Weigh(c, 0, 0);
  h.Commit();
  EXPECT_NE(h.res.CodeOf(kC), 0);
  clock->Advance(std::chrono::seconds(61));
  ASSERT_TRUE(h.res.NextReview().has_value());
  EXPECT_LE(*h.res.NextReview(), clock->now);
  codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(kC), 0);
  EXPECT_EQ(h.res.CodeOf(kD), code_c);
  EXPECT_TRUE(codes.any_retired);
  EXPECT_FALSE(h.res.NextReview().has_value());
}

// A held owner is still displaced by a challenger heavier than its held
// weight by the hysteresis: the hold keeps what was, it does not raise it.
TEST(FibResolver, AHeldOwnerYieldsToAChallengerHeavierThanItsHeldWeight) {
  auto clock = std::make_shared<FakeClock>();
  ResolverHarness h(HoldConfig(2, clock, std::chrono::seconds(60)));
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  h.Weigh(a, 100);
  h.Weigh(b, 100);
  h.Weigh(c, 10);
  h.Commit();
  h.Weigh(b, 0);  // B's and C's routes go: 110 of 210 /24s missing, both held
  h.Weigh(c, 0);
  clock->Advance(std::chrono::seconds(1));
  h.Commit();
  h.Weigh(d, 12);  // 12 < 1.25 x 10
  clock->Advance(std::chrono::seconds(1));
  h.Commit();
  EXPECT_EQ(h.res.CodeOf(kD), 0);
  EXPECT_NE(h.res.CodeOf(kC), 0);
  h.Weigh(d, 13);  // 13 >= 1.25 x 10
  clock->Advance(std::chrono::seconds(1));
  h.Commit();
  EXPECT_NE(h.res.CodeOf(kD), 0);
  EXPECT_EQ(h.res.CodeOf(kC), 0);
  EXPECT_NE(h.res.CodeOf(kB), 0);
}

// Space that moves to another adjacency is not held: a peer lost and its
// routes now through a backup without a code. The table did not shrink, so
// the backup takes the lost peer's code at once, as without a hold.
TEST(FibResolver, AWeightThatMovedToAnotherAdjacencyIsNotHeld) {
  auto clock = std::make_shared<FakeClock>();
  ResolverHarness h(HoldConfig(2, clock, std::chrono::seconds(60)));
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  h.Weigh(a, 300, 30);
  h.Weigh(b, 200, 20);
  h.Weigh(c, 100, 10);
  h.Weigh(d, 1);
  h.Commit();
  const uint8_t code_c = h.res.CodeOf(kC);
  ASSERT_NE(code_c, 0);
  clock->Advance(std::chrono::seconds(1));
  h.SetNeighbor(kC, 3, NeighState::kFailed);  // C is lost; its routes go through D
  h.Weigh(c, 0, 0);
  h.Weigh(d, 101, 10);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(kD), code_c);
  EXPECT_TRUE(codes.retired[code_c]);
}

// An adjacency whose code was freed gets that same code back when it
// returns while the code is still free; a newcomer meanwhile takes a free
// code nobody left behind.
TEST(FibResolver, AReturningAdjacencyGetsItsFreeCodeBack) {
  ResolverHarness h(Config(4));
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD});
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  h.Weigh(a, 30);
  h.Weigh(b, 20);
  h.Weigh(c, 10);
  h.Commit();
  const uint8_t code_a = h.res.CodeOf(kA), code_b = h.res.CodeOf(kB), code_c = h.res.CodeOf(kC);
  h.Weigh(a, 0);
  h.Weigh(b, 0);
  h.Commit();
  ASSERT_EQ(h.res.CodeOf(kA), 0);
  ASSERT_EQ(h.res.CodeOf(kB), 0);
  h.Weigh(d, 40);  // heavier than all, new: not A's code nor B's
  h.Commit();
  EXPECT_NE(h.res.CodeOf(kD), 0);
  for (uint8_t was : {code_a, code_b, code_c}) EXPECT_NE(h.res.CodeOf(kD), was);
  h.Weigh(b, 20);
  h.Commit();
  EXPECT_EQ(h.res.CodeOf(kB), code_b);
  h.Weigh(a, 30);
  h.Commit();
  EXPECT_EQ(h.res.CodeOf(kA), code_a);
}

// Random weights and resolution, with the slot rules checked against an
// independent ranking: from empty, the top resolved next-hops by their share
// of the /24s plus their share of the IPv6 routes (among the next-hops that
// ever resolved: those have an adjacency) own the codes; after a change, a
// free code never stays free
// while a resolved next-hop with weight waits, an owner only goes when its
// weight is 0 or a challenger outweighs it by the hysteresis, and no
// unresolved next-hop gains a code.
TEST(FibResolver, RandomWeightsFollowTheSlotRules) {
  std::mt19937_64 rng(TestSeed("FibResolver.RandomWeightsFollowTheSlotRules"));
  for (int round = 0; round < 200; ++round) {
    const int bits = rng() % 2 ? 2 : 4;
    const double hyst = 1.0 + static_cast<double>(rng() % 100) / 100.0;
    ResolverHarness h(Config(bits, hyst));
    const int n = 2 + static_cast<int>(rng() % 24);
    std::vector<NextHop> nhs;
    std::vector<NhgId> groups;
    for (int k = 0; k < n; ++k) {
      nhs.push_back(NextHop{IpAddr::V4(0x0A000001u + static_cast<uint32_t>(k)), PortId(k % 4)});
      groups.push_back(h.Group({nhs.back()}));
    }
    std::map<NextHop, std::pair<uint64_t, uint64_t>> weight;  // (/24s, IPv6 routes)
    std::set<NextHop> resolved, ever;
    auto shuffle = [&] {
      resolved.clear();
      for (int k = 0; k < n; ++k) {
        const uint64_t w4 = rng() % 3 == 0 ? 0 : rng() % 50, w6 = rng() % 2 ? 0 : rng() % 50;
        weight[nhs[k]] = {w4, w6};
        h.Weigh(groups[k], w4, w6);
        const bool up = rng() % 4 != 0;
        // Each next-hop its own MAC: its own adjacency (shared ones: adjacency_test.cc).
        h.SetNeighbor(nhs[k], static_cast<uint8_t>(k + 1), up ? NeighState::kReachable : NeighState::kFailed);
        if (up) resolved.insert(nhs[k]);
      }
      ever.insert(resolved.begin(), resolved.end());
    };
    auto scalar = [&](const NextHop& nh) {
      uint64_t t4 = 0, t6 = 0;
      for (const NextHop& x : ever) {
        t4 += weight[x].first;
        t6 += weight[x].second;
      }
      return (t4 ? static_cast<double>(weight[nh].first) / static_cast<double>(t4) : 0.0) +
             (t6 ? static_cast<double>(weight[nh].second) / static_cast<double>(t6) : 0.0);
    };
    shuffle();
    h.Commit();
    std::vector<NextHop> ranked;
    for (const NextHop& nh : nhs) {
      if (resolved.count(nh) && (weight[nh].first || weight[nh].second)) ranked.push_back(nh);
    }
    std::sort(ranked.begin(), ranked.end(), [&](const NextHop& x, const NextHop& y) {
      return scalar(x) != scalar(y) ? scalar(x) > scalar(y) : x < y;
    });
    ranked.resize(std::min<size_t>(ranked.size(), static_cast<size_t>((1 << bits) - 1)));
    ASSERT_EQ(h.Owners(), std::set<NextHop>(ranked.begin(), ranked.end())) << "round " << round;

    const auto before = h.OwnerNextHops();
    shuffle();
    h.Commit();
    const auto after = h.OwnerNextHops();
    bool free_code = false;
    for (size_t i = 0; i < after.size(); ++i) {
      free_code |= !after[i];
      if (after[i] && after[i] != before[i]) {
        ASSERT_TRUE(resolved.count(*after[i])) << "round " << round << ": unresolved gains a code";
      }
      if (before[i] && after[i] == before[i]) {
        ASSERT_NE(scalar(*before[i]), 0.0) << "round " << round << ": an owner of weight 0 kept its code";
      }
      if (before[i] && after[i] && after[i] != before[i] && scalar(*before[i]) != 0) {
        const double w_new = scalar(*after[i]), w_old = scalar(*before[i]);
        ASSERT_TRUE(w_new > w_old && w_new >= hyst * w_old) << "round " << round << ": displaced without hysteresis";
      }
    }
    if (free_code) {
      for (const NextHop& nh : resolved) {
        ASSERT_TRUE(scalar(nh) == 0 || h.res.CodeOf(nh) != 0) << "round " << round << ": a code left free";
      }
    }
  }
}

}  // namespace
}  // namespace fibnic::testing
