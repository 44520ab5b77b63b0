// The FPM source's per-route table (sources/fpm/fpm_route_refs.h) against a
// std::map: random puts, replacements and erases of IPv4 and IPv6 prefixes
// through many growths and backward shifts, every lookup checked, the whole
// table compared at intervals, and its load once it stops growing. Seeded
// (FIBSYNC_SEED replays a run).
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "sources/fpm/fpm_route_refs.h"
#include "tests/fib/test_seed.h"

namespace fibnic {
namespace {

TEST(FpmRouteRefs, RandomChangesMatchAMap) {
  std::mt19937_64 rng(testing::TestSeed("FpmRouteRefs"));
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  FpmRouteRefs refs;
  std::map<Prefix, FpmRouteRef> want;
  // Few enough distinct prefixes that puts replace and erases hit.
  std::vector<Prefix> pool;
  for (int i = 0; i < 60000; ++i) {
    pool.push_back(i % 4 ? Prefix::V4(static_cast<uint32_t>(rng()), static_cast<int>(pick(33)))
                         : Prefix::V6((static_cast<U128>(rng()) << 64) | rng(), static_cast<int>(pick(129))));
  }
  for (int step = 0; step < 400000; ++step) {
    const Prefix& p = pool[pick(pool.size())];
    if (pick(10) < 7) {
      const FpmRouteRef r{static_cast<uint32_t>(pick(1000)), pick(2) == 1, static_cast<uint8_t>(pick(256)),
                          static_cast<uint8_t>(pick(4))};
      refs.Put(p, r);
      want[p] = r;
    } else {
      ASSERT_EQ(refs.Erase(p), want.erase(p) == 1) << p.ToString();
    }
    const auto got = refs.Find(p);
    auto it = want.find(p);
    ASSERT_EQ(got.has_value(), it != want.end()) << p.ToString();
    if (got) {
      ASSERT_EQ(*got, it->second) << p.ToString();
    }
    ASSERT_EQ(refs.size(), want.size());
    if (step % 50000 == 0) {
      size_t seen = 0;
      refs.ForEach([&](const Prefix& q, uint32_t set, bool& stale) {
        ++seen;
        auto w = want.find(q);
        ASSERT_NE(w, want.end()) << q.ToString();
        EXPECT_EQ(set, w->second.set);
        EXPECT_EQ(stale, w->second.stale);
      });
      EXPECT_EQ(seen, want.size());
    }
  }
}

// A table that stopped growing is at least 64% full (grown by a quarter at 80%).
TEST(FpmRouteRefs, GrownTableStaysDense) {
  FpmRouteRefs refs;
  for (uint32_t n = 1; n <= 300000; ++n) {
    refs.Put(Prefix::V4(n << 8, 24), FpmRouteRef{1, false, 186, 0});
    if (n % 997 == 0) {
      const double load = static_cast<double>(refs.size()) * 12 / static_cast<double>(refs.memory());
      ASSERT_GE(load, n < 1000 ? 0.3 : 0.63) << n << " routes";
      ASSERT_LE(load, 0.8) << n << " routes";
    }
  }
}

}  // namespace
}  // namespace fibnic
