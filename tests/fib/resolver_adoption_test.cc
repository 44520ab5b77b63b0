// The resolver's pinned gateways and multipath answers, and its adoption of
// what the device holds at start: owners named by the kept entries (MAC and
// port, or connected and port), failed gateways bound only as the device
// shows them, the adopted owners then subject to the slot policy like any
// other. Worked out by hand per case.
#include "fib/resolver.h"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <memory>
#include <set>
#include <vector>

#include "tests/fib/resolver_config.h"
#include "tests/support/resolver_harness.h"

namespace fibnic::testing {
namespace {

// A, B, C and D resolved, each a group of its own; the device's three slots
// hold A, B and C, and all three are adopted. Returns the four groups.
std::array<NhgId, 4> AdoptAbcOfAbcd(ResolverHarness& h) {
  const std::array<NhgId, 4> groups = {h.Group({kA}), h.Group({kB}), h.Group({kC}), h.Group({kD})};
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  std::vector<regs::NexthopEntry> device(4);
  device[1] = {Mac(1), kA.port, regs::kNexthopValid};
  device[2] = {Mac(2), kB.port, regs::kNexthopValid};
  device[3] = {Mac(3), kC.port, regs::kNexthopValid};
  EXPECT_EQ(h.res.Adopt(device), 3);
  return groups;
}

// A restart in the middle of a hold: the device's kept entry that no live
// next-hop names is the previous run's held slot. It is adopted and held for
// one more hold (a restart with nothing changed writes nothing), then freed.
TEST(FibResolver, AdoptionHoldsAKeptEntryNoNextHopNamesForOneHold) {
  auto clock = std::make_shared<FakeClock>();
  ResolverHarness h(HoldConfig(4, clock, std::chrono::seconds(60)));
  std::vector<regs::NexthopEntry> device(8);
  device[2] = {Mac(5), 1, 0};                                                          // VALID=0
  device[3] = {MacAddr{}, 2, regs::kNexthopValid | regs::kNexthopConnected};  // a connected port's
  device[1] = {MacAddr{}, 0, regs::kNexthopDrop};                             // the drop entry, VALID=0
  // And a live, resolved next-hop whose routes carry nothing now (say, no
  // longer the kernel's best): the previous run held its weight.
  h.Group({kD});
  h.SetNeighbor(kD, 7);
  device[4] = {Mac(7), kD.port, regs::kNexthopValid};
  ASSERT_EQ(h.res.Adopt(device), 4);
  CommitCodes codes = h.Commit();
  for (int c : {1, 2, 3, 4}) {
    EXPECT_FALSE(codes.owner_changes[c]) << c;
    EXPECT_EQ(h.res.EntryFor(c, device[c]), device[c]) << c;
  }
  clock->Advance(std::chrono::seconds(61));
  codes = h.Commit();
  for (int c : {1, 2, 3, 4}) {
    EXPECT_TRUE(codes.retired[c]) << c;
    EXPECT_FALSE(h.res.EntryFor(c, device[c]).has_value()) << c;
  }

  ResolverHarness no_hold(Config(4));  // without a hold, what no live next-hop names is free
  EXPECT_EQ(no_hold.res.Adopt(std::vector<regs::NexthopEntry>(device.begin(), device.begin() + 4)), 0);
}

// An adopted owner is kept for its first hold however heavy a challenger:
// the previous run may have held its weight higher than this run can see,
// and displacing it would make a restart with nothing changed write. Once
// the hold ends (NextReview names that time) the policy judges it again.
TEST(FibResolver, AnAdoptedOwnerIsNotDisplacedWithinItsFirstHold) {
  auto clock = std::make_shared<FakeClock>();
  ResolverHarness h(HoldConfig(2, clock, std::chrono::seconds(60)));
  const auto [a, b, c, d] = AdoptAbcOfAbcd(h);
  h.Weigh(a, 1);
  h.Weigh(b, 10);
  h.Weigh(c, 10);
  h.Weigh(d, 100);  // a hundred times A's: a displacement at once without the hold
  h.Commit();
  EXPECT_EQ(h.res.CodeOf(kA), 1);
  EXPECT_EQ(h.res.CodeOf(kD), 0);
  ASSERT_TRUE(h.res.NextReview().has_value());
  EXPECT_EQ(*h.res.NextReview(), clock->now + std::chrono::seconds(60));
  clock->Advance(std::chrono::seconds(61));
  h.Commit();
  EXPECT_EQ(h.res.CodeOf(kA), 0);
  EXPECT_EQ(h.res.CodeOf(kD), 1);
}

// A pinned gateway's adjacency takes a code ahead of heavier ones and no
// unpinned challenger displaces it, however heavy.
TEST(FibResolver, APinnedGatewayRanksFirstAndIsNeverDisplaced) {
  FibConfig cfg = Config(2);
  cfg.slot_pins = {*kD.gateway};
  ResolverHarness h(cfg);
  const NhgId a = h.Group({kA}), b = h.Group({kB}), c = h.Group({kC}), d = h.Group({kD}), e = h.Group({kE});
  for (const NextHop& nh : {kA, kB, kC, kD}) h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 1));
  h.SetNeighbor(kE, 9);
  h.Weigh(a, 100);
  h.Weigh(b, 90);
  h.Weigh(c, 80);
  h.Weigh(d, 1);
  h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kA, kB, kD}));
  h.Weigh(e, 100000);
  h.Commit();
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kA, kE, kD}));
}

TEST(FibResolver, MultipathAnswersWithTheFirstResolvedCodedPath) {
  ResolverHarness h(Config(2));
  const NhgId ab = h.Group({kA, kB});
  const NhgId host = h.Group({NextHop::ToHost()});
  const NhgId cd = h.Group({kC, kD});  // neither resolved
  h.SetNeighbor(kB, 2);
  h.Weigh(ab, 100);
  h.Weigh(host, 100);
  h.Weigh(cd, 100);
  CommitCodes codes = h.Commit();
  // A is unresolved: the space is credited to B, which gets a code and answers.
  EXPECT_EQ(h.Owners(), (std::set<NextHop>{kB}));
  EXPECT_EQ(codes.after.GroupCode(ab), h.res.CodeOf(kB));
  EXPECT_EQ(h.res.GroupPuntReason(host), PuntReason::kToHost);
  EXPECT_EQ(h.res.GroupPuntReason(cd), PuntReason::kUnresolved);
  EXPECT_EQ(codes.after.GroupCode(host), 0);

  // A resolves: until the next commit B still answers (A has no code yet);
  // then the space is A's, which takes a free code and answers.
  h.SetNeighbor(kA, 1);
  EXPECT_EQ(h.res.AnswerOf(ab).nh, static_cast<int64_t>(*h.nht.Find(kB)));
  codes = h.Commit();
  EXPECT_EQ(h.res.AnswerOf(ab).nh, static_cast<int64_t>(*h.nht.Find(kA)));
  EXPECT_EQ(codes.after.GroupCode(ab), h.res.CodeOf(kA));
  EXPECT_EQ(h.res.CodeOf(kB), 0);  // its weight went to A: freed
  EXPECT_TRUE(codes.any_retired);

  // EcmpPolicy::kPunt: multipath never answers, and earns no code.
  ResolverHarness p(Config(2, 1.25, EcmpPolicy::kPunt));
  const NhgId pab = p.Group({kA, kB});
  p.SetNeighbor(kA, 1);
  p.SetNeighbor(kB, 2);
  p.Weigh(pab, 100);
  codes = p.Commit();
  EXPECT_EQ(p.res.GroupPuntReason(pab), PuntReason::kEcmpPolicy);
  EXPECT_EQ(codes.after.GroupCode(pab), 0);
  EXPECT_EQ(p.res.slots_used(), 0);
}

TEST(FibResolver, AdoptionNamesOwnersByMacAndPortOrConnectedAndPort) {
  ResolverHarness h(Config(4));  // codes 1..15
  const NextHop g1 = Gw("10.0.0.1", 1), g2 = Gw("10.0.0.2", 0), g3 = Gw("10.0.0.3", 0), g4 = Gw("10.0.0.4", 2),
                g5 = Gw("10.0.0.5", 3), conn{std::nullopt, 2};
  for (const NextHop& nh : {g1, g2, g3, g4, g5, conn}) h.Weigh(h.Group({nh}), 10);
  h.SetNeighbor(g1, 1);
  h.SetNeighbor(g2, 2);  // g2 and g3 behind one MAC
  h.SetNeighbor(g3, 2);
  h.SetNeighbor(g4, 4, NeighState::kFailed);  // any state names its owner
  h.res.UpsertNeighbor(Neighbor{*g5.gateway, Mac(5), 0, NeighState::kReachable});  // on another port than g5's path
  std::vector<regs::NexthopEntry> device(16);
  device[9] = {Mac(1), 1, regs::kNexthopValid};
  device[3] = {Mac(2), 0, regs::kNexthopValid};
  device[7] = {Mac(2), 0, regs::kNexthopValid};
  device[4] = {Mac(4), 2, 0};                                      // VALID=0 still names its owner
  device[5] = {MacAddr{}, 2, regs::kNexthopValid | regs::kNexthopConnected};
  device[6] = {Mac(5), 3, regs::kNexthopValid};                    // g5's neighbour is on port 0: nobody
  device[8] = {Mac(1), 2, regs::kNexthopValid};                    // g1's MAC on the wrong port: nobody
  device[10] = {Mac(66), 1, regs::kNexthopValid};                  // no neighbour has this MAC
  // g2 and g3 are one adjacency: entry 3 names it, entry 7 names
  // it again and is not adopted.
  EXPECT_EQ(h.res.Adopt(device), 4);
  EXPECT_EQ(h.res.CodeOf(g1), 9);
  EXPECT_EQ(h.res.CodeOf(g2), 3);
  EXPECT_EQ(h.res.CodeOf(g3), 3);
  EXPECT_EQ(h.res.CodeOf(g4), 4);
  EXPECT_EQ(h.res.CodeOf(conn), 5);
  EXPECT_EQ(h.res.CodeOf(g5), 0);

  // The first commit keeps the adopted numbering (a from-scratch compile
  // would hand out 1, 2, 3, ...) and fills the rest by the normal policy.
  h.SetNeighbor(g5, 5);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(g1), 9);
  EXPECT_EQ(h.res.CodeOf(g2), 3);
  EXPECT_EQ(h.res.CodeOf(g3), 3);
  EXPECT_EQ(h.res.CodeOf(g4), 4);
  EXPECT_EQ(h.res.CodeOf(conn), 5);
  EXPECT_EQ(h.res.CodeOf(g5), 1);  // the lowest free code
  EXPECT_FALSE(codes.any_retired);
  for (int c : {3, 4, 5, 7, 9}) EXPECT_FALSE(codes.owner_changes[c]) << c;
  EXPECT_TRUE(codes.owner_changes[1]);
  EXPECT_EQ(*h.res.EntryFor(4, device[4]), device[4]);  // g4 unresolved: VALID=0, same MAC
}

// A kept entry (VALID=0) held gateways whose neighbours failed since, and
// the kernel reports every failed neighbour without a MAC: the resolver asks
// the device about the failed gateways on the entry's port — each one's
// single-path group, since a multipath answer skips unresolved paths — and
// binds only those whose space the device shows with the entry's code.
TEST(FibResolver, AdoptionBindsFailedGatewaysToAKeptEntryOnlyAsTheDeviceShows) {
  ResolverHarness h(Config(2));
  const NextHop held = Gw("10.0.0.1", 1), held3 = Gw("10.0.0.3", 1), never = Gw("10.0.0.9", 1),
                elsewhere = Gw("10.0.0.5", 2), up = Gw("10.0.0.2", 1);
  const NhgId held_group = h.Group({held}), held3_group = h.Group({held3}), never_group = h.Group({never});
  h.Group({elsewhere});
  h.Group({up});
  h.Group({held, never});
  for (const NextHop& nh : {held, held3, never, elsewhere}) {
    h.res.UpsertNeighbor(Neighbor{*nh.gateway, MacAddr{}, nh.port, NeighState::kFailed});
  }
  h.SetNeighbor(up, 2);
  std::vector<regs::NexthopEntry> device(4);
  device[1] = {Mac(1), 1, 0};  // kept: held's MAC before it failed
  device[2] = {Mac(2), 1, regs::kNexthopValid};
  device[3] = {Mac(3), 1, 0};  // kept: held3's
  const Resolver::KeptEntryQuestion q = h.res.AskAboutKeptEntries(device);
  EXPECT_EQ(q.codes, (std::set<int>{1, 3}));
  EXPECT_EQ(q.groups, (std::set<NhgId>{held_group, held3_group, never_group}));  // no kept entry on port 2
  EXPECT_EQ(h.res.Adopt(device, {{held_group, 1}, {held3_group, 3}, {never_group, 2}}), 3);
  EXPECT_EQ(h.res.CodeOf(held), 1);
  EXPECT_EQ(h.res.CodeOf(held3), 3);
  EXPECT_EQ(h.res.CodeOf(never), 0);
  EXPECT_EQ(h.res.CodeOf(up), 2);
  EXPECT_EQ(h.res.CodeOf(elsewhere), 0);
}

TEST(FibResolver, AdoptedOwnersAreSubjectToThePolicy) {
  ResolverHarness h(Config(2));
  const auto [a, b, c, d] = AdoptAbcOfAbcd(h);
  h.Weigh(a, 0);    // A's routes are gone: its adopted code is freed
  h.Weigh(b, 10);
  h.Weigh(c, 10);
  h.Weigh(d, 100);  // and D takes it
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(kA), 0);
  EXPECT_EQ(h.res.CodeOf(kD), 1);
  EXPECT_TRUE(codes.retired[1]);
  EXPECT_EQ(h.res.CodeOf(kB), 2);
  EXPECT_EQ(h.res.CodeOf(kC), 3);
}

}  // namespace
}  // namespace fibnic::testing
