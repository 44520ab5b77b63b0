// Adjacencies on the resolver alone: a code names an adjacency (MAC, port), so
// every resolved next-hop behind one (MAC, port) — IPv4 gateway, IPv6 global
// and link-local gateway, 169.254.0.1 onlink — shares one code; neighbours are
// (address, port). Expectations worked out by hand per case.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "fib/resolver.h"
#include "tests/support/resolver_harness.h"

namespace fibnic::testing {
namespace {

FibConfig Config(int code_bits) {
  FibConfig c;
  c.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  return c;
}

// make-routes' dual stack: three routers, each an IPv4 and an IPv6 gateway
// behind one MAC. Were codes to name gateways, the IPv4 addresses would take
// all three codes and the IPv6 routes get none.
TEST(FibAdjacency, DualStackGatewaysOfOneRouterShareItsCode) {
  ResolverHarness h(Config(2));
  const NextHop v4[] = {Gw("10.0.0.1", 0), Gw("10.0.1.1", 1), Gw("10.0.2.1", 2)};
  const NextHop v6[] = {Gw("2001:db8::1", 0), Gw("2001:db8:1::1", 1), Gw("2001:db8:2::1", 2)};
  for (int r = 0; r < 3; ++r) {
    h.SetNeighbor(v4[r], static_cast<uint8_t>(r + 1));
    h.SetNeighbor(v6[r], static_cast<uint8_t>(r + 1));
    h.Weigh(h.Group({v4[r]}), 1000 * (r + 1));
    h.Weigh(h.Group({v6[r]}), 0, 50'000);
  }
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.slots_used(), 3);
  for (int r = 0; r < 3; ++r) {
    EXPECT_NE(h.res.CodeOf(v4[r]), 0) << r;
    EXPECT_EQ(h.res.CodeOf(v6[r]), h.res.CodeOf(v4[r])) << r;
    EXPECT_EQ(codes.after.GroupCode(h.Group({v6[r]})), h.res.CodeOf(v4[r])) << r;
    const int c = h.res.CodeOf(v4[r]);
    EXPECT_EQ(h.res.owner_weight(c), 1000u * (r + 1) + 50'000u);  // the adjacency's total
    EXPECT_EQ(*h.res.EntryFor(c, {}), (regs::NexthopEntry{Mac(static_cast<uint8_t>(r + 1)), PortId(r), regs::kNexthopValid}));
    EXPECT_EQ(h.res.NextHopsOf(c), (std::vector<NextHop>{v4[r], v6[r]}));
  }
}

// BGP unnumbered: an IPv4 route via the peer's fe80:: address, and inline
// mode's 169.254.0.1 onlink with a permanent neighbour per interface, all
// behind the peer's MAC on its port: one code per peer.
TEST(FibAdjacency, UnnumberedNextHopsShareThePeersCode) {
  ResolverHarness h(Config(2));
  const NextHop ll0 = Gw("fe80::1", 0), ll1 = Gw("fe80::1", 1);  // the same address on two ports
  const NextHop onlink0 = Gw("169.254.0.1", 0), onlink1 = Gw("169.254.0.1", 1);
  h.SetNeighbor(ll0, 10);
  h.SetNeighbor(ll1, 11);
  h.SetNeighbor(onlink0, 10, NeighState::kPermanent);
  h.SetNeighbor(onlink1, 11, NeighState::kPermanent);
  for (const NextHop& nh : {ll0, ll1, onlink0, onlink1}) h.Weigh(h.Group({nh}), 100);
  h.Weigh(h.Group({ll0, ll1}), 100);  // ECMP over both peers
  h.Commit();
  EXPECT_EQ(h.res.slots_used(), 2);
  EXPECT_NE(h.res.CodeOf(ll0), h.res.CodeOf(ll1));
  EXPECT_EQ(h.res.CodeOf(ll0), h.res.CodeOf(onlink0));
  EXPECT_EQ(h.res.CodeOf(ll1), h.res.CodeOf(onlink1));
  EXPECT_EQ(h.res.owner_weight(h.res.CodeOf(ll0)), 300u);  // ll0, onlink0 and the ECMP group's first path

  // Deleting 169.254.0.1 on port 1 leaves the one on port 0 alone.
  h.res.DeleteNeighbor(A("169.254.0.1"), 1);
  EXPECT_TRUE(h.res.Resolved(onlink0));
  EXPECT_FALSE(h.res.Resolved(onlink1));
  ASSERT_NE(h.res.FindNeighbor(A("169.254.0.1"), 0), nullptr);
  EXPECT_EQ(h.res.FindNeighbor(A("169.254.0.1"), 0)->mac, Mac(10));
  const CommitCodes codes = h.Commit();
  EXPECT_NE(codes.after.GroupCode(h.Group({onlink0})), 0);
  // onlink1's adjacency is still valid through fe80::1 on port 1: its space
  // may not name that code any more (the kernel would not send it there).
  EXPECT_EQ(codes.after.GroupCode(h.Group({onlink1})), 0);
  EXPECT_EQ(h.res.GroupPuntReason(h.Group({onlink1})), PuntReason::kUnresolved);
  EXPECT_EQ(h.res.Why(onlink1, PuntReason::kUnresolved), "no neighbour 169.254.0.1 on port 1");
  EXPECT_FALSE(codes.any_retired);  // no entry changed
}

// One neighbour's MAC changes: the others keep the code, the changed one
// moves (a free code here), and nothing is retired: the code's entry is
// unchanged, so words still naming it forward to the old, correct MAC.
TEST(FibAdjacency, ADivergingNextHopMovesAndTheOthersKeepTheCode) {
  ResolverHarness h(Config(2));
  const NextHop v4 = Gw("10.0.0.1", 0), v6 = Gw("2001:db8::1", 0), ll = Gw("fe80::1", 0);
  for (const NextHop& nh : {v4, v6, ll}) {
    h.SetNeighbor(nh, 1);
    h.Weigh(h.Group({nh}), 10);
  }
  h.Commit();
  const int code = h.res.CodeOf(v4);
  ASSERT_NE(code, 0);
  h.SetNeighbor(v6, 2);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(v4), code);
  EXPECT_EQ(h.res.CodeOf(ll), code);
  EXPECT_NE(h.res.CodeOf(v6), 0);
  EXPECT_NE(h.res.CodeOf(v6), code);
  EXPECT_FALSE(codes.entry_changes[code]);
  EXPECT_FALSE(codes.any_retired);
  EXPECT_EQ(*h.res.EntryFor(h.res.CodeOf(v6), {}), (regs::NexthopEntry{Mac(2), 0, regs::kNexthopValid}));
}

// Every next-hop of the adjacency moves to one new MAC (the peer's NIC
// changed): the code follows in place, one entry write, no retire.
TEST(FibAdjacency, AWholeAdjacencyChangingMacKeepsItsCodeInPlace) {
  ResolverHarness h(Config(2));
  const NextHop v4 = Gw("10.0.0.1", 0), v6 = Gw("2001:db8::1", 0);
  const NextHop others[] = {Gw("10.0.1.1", 1), Gw("10.0.2.1", 2)};
  h.SetNeighbor(v4, 1);
  h.SetNeighbor(v6, 1);
  h.Weigh(h.Group({v4}), 10);
  h.Weigh(h.Group({v6}), 0, 10);
  for (const NextHop& nh : others) {  // every code taken: no free one to move to
    h.SetNeighbor(nh, static_cast<uint8_t>(nh.port + 10));
    h.Weigh(h.Group({nh}), 1000);
  }
  h.Commit();
  const int code = h.res.CodeOf(v4);
  ASSERT_NE(code, 0);
  h.SetNeighbor(v4, 5);
  h.SetNeighbor(v6, 5);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(v4), code);
  EXPECT_EQ(h.res.CodeOf(v6), code);
  EXPECT_FALSE(codes.owner_changes[code]);
  EXPECT_TRUE(codes.entry_changes[code]);
  EXPECT_FALSE(codes.any_retired);
  EXPECT_EQ(*h.res.EntryFor(code, {}), (regs::NexthopEntry{Mac(5), 0, regs::kNexthopValid}));
}

// All of an adjacency's neighbours fail: it keeps its code, VALID=0. One
// comes back: the entry turns valid, so the code is retired first — the
// other's space still names it and must not forward to the MAC its own
// (failed) neighbour no longer answers for.
TEST(FibAdjacency, AnEntryTurningValidWithAMemberLeftBehindIsRetiredFirst) {
  ResolverHarness h(Config(2));
  const NextHop v4 = Gw("10.0.0.1", 0), v6 = Gw("2001:db8::1", 0);
  h.SetNeighbor(v4, 1);
  h.SetNeighbor(v6, 1);
  const NhgId g4 = h.Group({v4}), g6 = h.Group({v6});
  h.Weigh(g4, 10);
  h.Weigh(g6, 0, 10);
  h.Commit();
  const int code = h.res.CodeOf(v4);
  h.SetNeighbor(v4, 1, NeighState::kFailed);
  h.SetNeighbor(v6, 1, NeighState::kFailed);
  CommitCodes codes = h.Commit();
  EXPECT_EQ(codes.after.GroupCode(g4), code);  // kept, VALID=0
  EXPECT_EQ(codes.after.GroupCode(g6), code);
  EXPECT_FALSE(h.res.EntryFor(code, {})->valid());
  EXPECT_FALSE(codes.any_retired);

  h.SetNeighbor(v4, 1);
  codes = h.Commit();
  EXPECT_EQ(codes.after.GroupCode(g4), code);
  EXPECT_EQ(codes.after.GroupCode(g6), 0);
  EXPECT_TRUE(h.res.EntryFor(code, {})->valid());
  EXPECT_TRUE(codes.retired[code]);
  EXPECT_EQ(codes.RetirePhaseCode(g4), 0);
  EXPECT_EQ(h.res.Why(v6, PuntReason::kUnresolved), "neighbour 2001:db8::1 on port 0 is failed");
}

// A member failing while another keeps the adjacency valid: its space goes to
// punt; the entry does not change, so no retire is needed.
TEST(FibAdjacency, AMemberFailingPuntsItsSpaceAlone) {
  ResolverHarness h(Config(2));
  const NextHop v4 = Gw("10.0.0.1", 0), v6 = Gw("2001:db8::1", 0);
  h.SetNeighbor(v4, 1);
  h.SetNeighbor(v6, 1);
  const NhgId g4 = h.Group({v4}), g6 = h.Group({v6});
  h.Weigh(g4, 10);
  h.Weigh(g6, 0, 10);
  h.Commit();
  const int code = h.res.CodeOf(v4);
  h.SetNeighbor(v6, 1, NeighState::kFailed);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(codes.after.GroupCode(g4), code);
  EXPECT_EQ(codes.after.GroupCode(g6), 0);
  EXPECT_FALSE(codes.entry_changes[code]);
  EXPECT_FALSE(codes.any_retired);
}

// Warm start: an entry names its adjacency; every next-hop behind it (here
// an IPv4 and a link-local gateway) takes that code.
TEST(FibAdjacency, AdoptionGivesAnAdjacencysCodeToAllItsNextHops) {
  ResolverHarness h(Config(2));
  const NextHop v4 = Gw("10.0.0.1", 1), ll = Gw("fe80::1", 1), other = Gw("fe80::1", 2);
  h.SetNeighbor(v4, 7);
  h.SetNeighbor(ll, 7);
  h.SetNeighbor(other, 8);
  for (const NextHop& nh : {v4, ll, other}) h.Weigh(h.Group({nh}), 10);
  std::vector<regs::NexthopEntry> device(4);
  device[2] = {Mac(7), 1, regs::kNexthopValid};
  device[3] = {Mac(7), 1, regs::kNexthopValid};  // the same adjacency again: not adopted
  EXPECT_EQ(h.res.Adopt(device), 1);
  EXPECT_EQ(h.res.CodeOf(v4), 2);
  EXPECT_EQ(h.res.CodeOf(ll), 2);
  const CommitCodes codes = h.Commit();
  EXPECT_EQ(h.res.CodeOf(v4), 2);
  EXPECT_EQ(h.res.CodeOf(ll), 2);
  EXPECT_FALSE(codes.owner_changes[2]);
  EXPECT_EQ(h.res.CodeOf(other), 1);  // fe80::1 on port 2 is another adjacency
}

// The cases through the whole Fib: IPv4 routes via 169.254.0.1 onlink
// on two ports and via fe80::1 (RFC 5549) on two ports, IPv6 routes via the
// same fe80::1: every route offloaded with its port's peer MAC; deleting
// 169.254.0.1 on port 1 leaves port 0's routes alone and says why port 1's punt.
TEST(FibAdjacency, UnnumberedPeersThroughTheFib) {
  Fib fib(Config(2));
  const MacAddr peer0 = Mac(10), peer1 = Mac(11);
  for (PortId port : {PortId(0), PortId(1)}) {
    const MacAddr mac = port == 0 ? peer0 : peer1;
    fib.UpsertNeighbor(Neighbor{A("169.254.0.1"), mac, port, NeighState::kPermanent});
    fib.UpsertNeighbor(Neighbor{A("fe80::1"), mac, port, NeighState::kReachable});
  }
  auto route = [&](const char* p, std::vector<NextHop> paths) {
    fib.UpsertRoute(Route{*Prefix::Parse(p), RouteSource::kKernel, 20, std::move(paths)});
  };
  route("10.1.0.0/16", {Gw("169.254.0.1", 0)});
  route("10.2.0.0/16", {Gw("169.254.0.1", 1)});
  route("10.3.0.0/16", {Gw("fe80::1", 0)});
  route("10.4.0.0/16", {Gw("fe80::1", 1)});
  route("2001:db8:1::/48", {Gw("fe80::1", 0)});
  route("2001:db8:2::/48", {Gw("fe80::1", 1)});
  fib.Commit();
  auto hw = [&](const char* dst) { const auto bar = EncodeBar(fib.image()); return HwLookup(bar.data(), bar.size(), A(dst)); };
  auto expect = [&](const char* dst, const MacAddr& mac, PortId port) {
    const HwDecision d = hw(dst);
    EXPECT_TRUE(d.forward && d.dst_mac == mac && d.port == port) << dst << " -> " << d.ToString();
  };
  for (const char* p : {"10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16", "10.4.0.0/16", "2001:db8:1::/48", "2001:db8:2::/48"}) {
    EXPECT_EQ(fib.GetRoute(*Prefix::Parse(p)).at(0).state, OffloadState::kOffloaded) << p;
  }
  expect("10.1.2.3", peer0, 0);
  expect("10.2.2.3", peer1, 1);
  expect("10.3.2.3", peer0, 0);
  expect("10.4.2.3", peer1, 1);
  expect("2001:db8:1::5", peer0, 0);
  expect("2001:db8:2::5", peer1, 1);
  EXPECT_EQ(fib.Counts().slots_used, 2);  // two peers, two adjacencies

  fib.DeleteNeighbor(A("169.254.0.1"), 1);
  fib.Commit();
  expect("10.1.2.3", peer0, 0);
  EXPECT_FALSE(hw("10.2.2.3").forward);
  expect("10.4.2.3", peer1, 1);
  const RouteInfo info = fib.GetRoute(*Prefix::Parse("10.2.0.0/16")).at(0);
  EXPECT_EQ(info.reason, PuntReason::kUnresolved);
  EXPECT_EQ(info.why, "no neighbour 169.254.0.1 on port 1");
  const RibAnswer ans = fib.Lookup(A("10.2.2.3"));
  EXPECT_EQ(ans.why, "no neighbour 169.254.0.1 on port 1");
  // Port 0's permanent entry still updates.
  fib.UpsertNeighbor(Neighbor{A("169.254.0.1"), Mac(12), 0, NeighState::kPermanent});
  fib.UpsertNeighbor(Neighbor{A("fe80::1"), Mac(12), 0, NeighState::kReachable});
  fib.Commit();
  expect("10.1.2.3", Mac(12), 0);
  expect("2001:db8:1::5", Mac(12), 0);
}

}  // namespace
}  // namespace fibnic::testing
