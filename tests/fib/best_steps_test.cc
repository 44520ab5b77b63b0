// Fib::CommitBest in steps, as the pipeline runs it: a choice keeps the IPv6
// routes it began with and changes during its steps wait for the next one;
// Commit() (a resync, a warm restart) must finish every choice — the one
// under way and the one for the changes that waited — so the image it hands
// over is the best one and the offload states are final.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <random>

#include "fib/fib.h"

namespace fibnic {
namespace {

const MacAddr kMacA = *MacAddr::Parse("52:54:00:00:00:0a");
const MacAddr kMacB = *MacAddr::Parse("52:54:00:00:00:0b");

TEST(FibBestSteps, CommitFinishesTheChoiceUnderWayAndTheChangesThatWaitedForIt) {
  Fib fib{FibConfig()};
  const IpAddr ga = *IpAddr::Parse("fd00::a"), gb = *IpAddr::Parse("fd00::b");
  fib.UpsertNeighbor(Neighbor{ga, kMacA, 1, NeighState::kReachable});
  fib.UpsertNeighbor(Neighbor{gb, kMacB, 2, NeighState::kReachable});
  std::mt19937_64 rng(3);
  std::vector<std::pair<Prefix, bool>> routes;
  for (uint32_t i = 0; i < 5000; ++i) routes.emplace_back(Prefix::V6((U128{0x20010db8} << 96) + (U128{i} << 80), 48), rng() % 2);
  auto set = [&](size_t from, size_t step, bool flip) {
    for (size_t i = from; i < routes.size(); i += step) {
      const bool a = routes[i].second != flip;
      fib.UpsertRoute(Route{routes[i].first, RouteSource::kKernel, 20, {NextHop{a ? ga : gb, PortId(a ? 1 : 2)}}});
    }
  };
  set(0, 1, false);
  fib.CommitWhole();
  ASSERT_FALSE(fib.best_pending());

  set(0, 1, true);  // every route moves: a choice of many tables
  fib.CommitSafe();
  EXPECT_TRUE(fib.CommitBest(std::chrono::steady_clock::time_point::min()).empty());
  ASSERT_TRUE(fib.choosing()) << "the choice ended in one table";
  set(0, 2, false);  // half move back while it runs: they wait for the next choice
  fib.CommitSafe();
  ASSERT_TRUE(fib.choosing());
  const uint64_t commits = fib.commits();

  fib.Commit();
  EXPECT_FALSE(fib.choosing());
  EXPECT_FALSE(fib.best_pending()) << "the changes that waited were left for a choice nobody runs";
  EXPECT_EQ(fib.commits(), commits + 1);
  const auto& tcam = fib.image().tcam;
  EXPECT_TRUE(std::any_of(tcam.begin(), tcam.end(), [](const auto& e) { return e.valid() && e.code != 0; }));
}

}  // namespace
}  // namespace fibnic
