// The source → pipeline hand-off: coalescing per key, FIFO by first arrival,
// wake-ups, and the sequence numbers barriers rely on.
#include "fibnicd/update_queue.h"

#include <gtest/gtest.h>

#include <thread>

namespace fibnic {
namespace {

Route R(const char* prefix, const char* gw, PortId port = 0, RouteSource src = RouteSource::kKernel) {
  Route r;
  r.prefix = *Prefix::Parse(prefix);
  r.source = src;
  r.paths.push_back(NextHop{*IpAddr::Parse(gw), port});
  return r;
}

TEST(UpdateQueue, CoalescesPerKeyKeepingFirstPosition) {
  int wakes = 0;
  UpdateQueue q([&] { ++wakes; });
  q.UpsertRoute(R("10.0.0.0/8", "192.0.2.1"));
  q.UpsertRoute(R("10.1.0.0/16", "192.0.2.1"));
  q.UpsertRoute(R("10.0.0.0/8", "192.0.2.2"));  // replaces the first, keeps its place
  q.UpsertRoute(R("10.0.0.0/8", "192.0.2.3", 0, RouteSource::kApi));  // another source: another key
  q.DeleteRoute(*Prefix::Parse("10.1.0.0/16"), RouteSource::kKernel);
  EXPECT_EQ(wakes, 1);
  EXPECT_EQ(q.depth(), 3u);
  EXPECT_EQ(q.received(), 5u);
  EXPECT_EQ(q.coalesced(), 2u);
  UpdateBatch b = q.Take(10);
  ASSERT_EQ(b.updates.size(), 3u);
  EXPECT_EQ(b.updates[0].kind, PendingUpdate::Kind::kUpsertRoute);
  EXPECT_EQ(b.updates[0].route.paths[0].gateway->ToString(), "192.0.2.2");
  EXPECT_EQ(b.updates[1].kind, PendingUpdate::Kind::kDeleteRoute);
  EXPECT_EQ(b.updates[1].route.prefix.ToString(), "10.1.0.0/16");
  EXPECT_EQ(b.updates[2].route.source, RouteSource::kApi);
  EXPECT_EQ(q.depth(), 0u);
  EXPECT_EQ(q.OldestSeq(), UINT64_MAX);
  q.UpsertNeighbor(Neighbor{*IpAddr::Parse("192.0.2.1"), *MacAddr::Parse("02:00:00:00:00:01"), 1,
                            NeighState::kReachable});
  EXPECT_EQ(wakes, 2);  // empty → non-empty again
}

TEST(UpdateQueue, TakeIsBoundedAndFifo) {
  UpdateQueue q(nullptr);
  for (int i = 0; i < 10; ++i) q.UpsertRoute(R(("10.0." + std::to_string(i) + ".0/24").c_str(), "192.0.2.1"));
  uint64_t before = q.OldestSeq();
  UpdateBatch a = q.Take(4);
  ASSERT_EQ(a.updates.size(), 4u);
  EXPECT_EQ(a.updates[0].route.prefix.ToString(), "10.0.0.0/24");
  EXPECT_EQ(a.updates[3].route.prefix.ToString(), "10.0.3.0/24");
  EXPECT_EQ(q.OldestSeq(), before + 4);
  EXPECT_EQ(q.Take(100).updates.size(), 6u);
  EXPECT_EQ(q.max_depth(), 10u);
}

// Neighbour G changes (g1), the route via G moves to H, then
// G changes again (g2, coalesced into G's first place). A cut after one update
// used to apply G=g2 with the route still via G — a MAC the route never had
// while it went via G. The cut now takes everything up to g2's arrival.
TEST(UpdateQueue, BatchCutNeverAppliesALaterValueBeforeAnEarlierUpdate) {
  UpdateQueue q(nullptr);
  const IpAddr g = *IpAddr::Parse("192.0.2.1");
  q.UpsertNeighbor(Neighbor{g, *MacAddr::Parse("02:00:00:00:00:01"), 0, NeighState::kReachable});
  q.UpsertRoute(R("10.0.0.0/8", "192.0.2.9"));
  q.UpsertRoute(R("10.1.0.0/16", "192.0.2.9"));  // after the cut either way
  q.UpsertNeighbor(Neighbor{g, *MacAddr::Parse("02:00:00:00:00:02"), 0, NeighState::kReachable});
  UpdateBatch a = q.Take(1);
  ASSERT_EQ(a.updates.size(), 3u);  // g2 arrived after both routes: they come along
  EXPECT_EQ(a.updates[0].neighbor.mac.ToString(), "02:00:00:00:00:02");
  EXPECT_EQ(a.updates[1].route.prefix.ToString(), "10.0.0.0/8");
  EXPECT_EQ(a.updates[2].route.prefix.ToString(), "10.1.0.0/16");
  EXPECT_EQ(q.depth(), 0u);
  // Without coalescing the cut stays where max puts it.
  q.UpsertRoute(R("10.0.0.0/8", "192.0.2.9"));
  q.UpsertRoute(R("10.1.0.0/16", "192.0.2.9"));
  EXPECT_EQ(q.Take(1).updates.size(), 1u);
  EXPECT_EQ(q.Take(0).updates.size(), 0u);
  EXPECT_EQ(q.depth(), 1u);
}

TEST(UpdateQueue, NeighborsCoalesceByAddress) {
  UpdateQueue q(nullptr);
  IpAddr a = *IpAddr::Parse("2001:db8::1");
  q.UpsertNeighbor(Neighbor{a, *MacAddr::Parse("02:00:00:00:00:01"), 1, NeighState::kReachable});
  q.DeleteNeighbor(a, 1);
  UpdateBatch b = q.Take(10);
  ASSERT_EQ(b.updates.size(), 1u);
  EXPECT_EQ(b.updates[0].kind, PendingUpdate::Kind::kDeleteNeighbor);
  EXPECT_EQ(b.updates[0].neighbor.addr, a);
}

// A neighbour is (address, port); the same link-local address on
// two ports is two keys, and deleting one leaves the other's update.
TEST(UpdateQueue, NeighborsOfOneAddressOnTwoPortsDoNotCoalesce) {
  UpdateQueue q(nullptr);
  const IpAddr a = *IpAddr::Parse("169.254.0.1");
  q.UpsertNeighbor(Neighbor{a, *MacAddr::Parse("02:00:00:00:00:0a"), 0, NeighState::kPermanent});
  q.UpsertNeighbor(Neighbor{a, *MacAddr::Parse("02:00:00:00:00:0b"), 1, NeighState::kPermanent});
  q.DeleteNeighbor(a, 1);
  UpdateBatch b = q.Take(10);
  ASSERT_EQ(b.updates.size(), 2u);
  EXPECT_EQ(b.updates[0].kind, PendingUpdate::Kind::kUpsertNeighbor);
  EXPECT_EQ(b.updates[0].neighbor.port, 0);
  EXPECT_EQ(b.updates[0].neighbor.mac.ToString(), "02:00:00:00:00:0a");
  EXPECT_EQ(b.updates[1].kind, PendingUpdate::Kind::kDeleteNeighbor);
  EXPECT_EQ(b.updates[1].neighbor.addr, a);
  EXPECT_EQ(b.updates[1].neighbor.port, 1);
}

TEST(UpdateQueue, WakesWhenAFullBatchIsWaiting) {
  int wakes = 0;
  UpdateQueue q([&] { ++wakes; });
  q.set_wake_threshold(3);
  for (int i = 0; i < 5; ++i) q.UpsertRoute(R(("10.0." + std::to_string(i) + ".0/24").c_str(), "192.0.2.1"));
  EXPECT_EQ(wakes, 2);  // at 1 and at 3
}

TEST(UpdateQueue, ManyThreadsLoseNothing) {
  UpdateQueue q(nullptr);
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t) {
    ts.emplace_back([&q, t] {
      for (int i = 0; i < 1000; ++i) {
        q.UpsertRoute(R(("10." + std::to_string(t) + "." + std::to_string(i % 250) + ".0/24").c_str(), "192.0.2.1"));
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(q.received(), 4000u);
  EXPECT_EQ(q.depth(), 1000u);  // 4 threads x 250 distinct prefixes
  EXPECT_EQ(q.coalesced(), 3000u);
}

}  // namespace
}  // namespace fibnic
