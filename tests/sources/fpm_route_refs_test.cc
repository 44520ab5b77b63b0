// The FPM source's per-route table (sources/fpm/fpm_route_refs.h) against a
// std::map: random puts, replacements and erases of IPv4 and IPv6 prefixes
// through many growths and backward shifts, every lookup checked, the whole
// table compared at intervals, and its load once it stops growing. Seeded
// (FIBSYNC_SEED replays a run).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>

#include "sources/fpm/fpm_route_refs.h"
#include "tests/fib/test_seed.h"

namespace fibnic {
namespace {

// One step against the map: put r at p (or erase p when r is empty), then
// p's lookup and the size must agree with the map's.
void StepAndCheck(FpmRouteRefs& refs, std::map<Prefix, FpmRouteRef>& want, const Prefix& p,
                  const std::optional<FpmRouteRef>& r) {
  if (r) {
    refs.Put(p, *r);
    want[p] = *r;
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
}

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
    std::optional<FpmRouteRef> r;
    if (pick(10) < 7) {
      r = FpmRouteRef{static_cast<uint32_t>(pick(1000)), pick(2) == 1, static_cast<uint8_t>(pick(256)),
                      static_cast<uint8_t>(pick(4))};
    }
    ASSERT_NO_FATAL_FAILURE(StepAndCheck(refs, want, p, r));
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
      const double load = static_cast<double>(refs.size()) / static_cast<double>(refs.slots());
      ASSERT_GE(load, n < 1000 ? 0.3 : 0.63) << n << " routes";
      ASSERT_LE(load, 0.8) << n << " routes";
    }
  }
}

// The same against a map, with every field, both walks, prefixes of each
// table (IPv4, IPv6 up to /64, longer IPv6) and so few kinds allowed that
// routes spill into the side map and come back: after each step the route's
// ref, at intervals the whole table through ForEach and Walk (which change
// the stale and kernel-seen marks and replies), and at the end, once everything is erased,
// no kind is left held.
TEST(FpmRouteRefs, KindsAndTheSideMapMatchAMap) {
  std::mt19937_64 rng(testing::TestSeed("FpmRouteRefs kinds"));
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  FpmRouteRefs refs(/*max_kinds=*/24);
  std::map<Prefix, FpmRouteRef> want;
  std::vector<Prefix> pool;
  for (int i = 0; i < 20000; ++i) {
    const U128 a = (static_cast<U128>(rng()) << 64) | rng();
    switch (pick(3)) {
      case 0: pool.push_back(Prefix::V4(static_cast<uint32_t>(rng()), static_cast<int>(pick(33)))); break;
      case 1: pool.push_back(Prefix::V6(a, static_cast<int>(pick(65)))); break;
      default: pool.push_back(Prefix::V6(a, 65 + static_cast<int>(pick(64)))); break;
    }
  }
  // Sets, protocols and kernel objects drawn from few values, so kinds are shared, with a
  // wide tail that exhausts the 24 kinds now and then.
  auto ref = [&] {
    const bool wide = pick(50) == 0;
    return FpmRouteRef{static_cast<uint32_t>(wide ? rng() : pick(6) | (pick(2) << 31)), pick(2) == 1,
                       static_cast<uint8_t>(wide ? pick(256) : 186 + pick(2)), static_cast<uint8_t>(pick(4)),
                       pick(2) == 1, static_cast<uint32_t>(wide ? rng() : pick(3))};
  };
  auto check_all = [&] {
    size_t seen = 0;
    refs.ForEach([&](const Prefix& q, uint32_t set, bool& stale) {
      ++seen;
      auto w = want.find(q);
      ASSERT_NE(w, want.end()) << q.ToString();
      ASSERT_EQ(set, w->second.set) << q.ToString();
      ASSERT_EQ(stale, w->second.stale) << q.ToString();
      if (pick(3) == 0) stale = w->second.stale = !stale;
    });
    ASSERT_EQ(seen, want.size());
    // A walk in pieces of random size, changing replies.
    seen = 0;
    size_t cursor = 0;
    do {
      cursor = refs.Walk(cursor, 1 + pick(5000), [&](const Prefix& q, FpmRouteRef& r) {
        ++seen;
        auto w = want.find(q);
        ASSERT_NE(w, want.end()) << q.ToString();
        ASSERT_EQ(r, w->second) << q.ToString();
        if (pick(3) == 0) r.replied = w->second.replied = static_cast<uint8_t>(pick(4));
        if (pick(3) == 0) r.kernel_seen = w->second.kernel_seen = !r.kernel_seen;
      });
    } while (cursor != 0);
    ASSERT_EQ(seen, want.size());
    // NamesKernelNh follows the kinds and the side map.
    for (uint32_t id : {1u, 2u}) {
      const bool named = std::any_of(want.begin(), want.end(), [&](const auto& w) { return w.second.kernel_nh == id; });
      ASSERT_EQ(refs.NamesKernelNh(id), named) << id;
    }
  };
  for (int step = 0; step < 200000; ++step) {
    const Prefix& p = pool[pick(pool.size())];
    ASSERT_NO_FATAL_FAILURE(StepAndCheck(refs, want, p, pick(10) < 6 ? std::optional<FpmRouteRef>(ref()) : std::nullopt));
    ASSERT_LE(refs.kinds(), 24u);
    if (step % 20000 == 0) {
      ASSERT_NO_FATAL_FAILURE(check_all());
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_all());
  for (const auto& [p, r] : want) ASSERT_TRUE(refs.Erase(p)) << p.ToString();
  EXPECT_EQ(refs.size(), 0u);
  EXPECT_EQ(refs.kinds(), 0u);
}

// What a route costs: 8 bytes a slot for IPv4, 12 for IPv6 up to /64, 20
// beyond; one peer's routes share one kind.
TEST(FpmRouteRefs, BytesPerRoute) {
  FpmRouteRefs refs;
  for (uint32_t n = 0; n < 100000; ++n) refs.Put(Prefix::V4(n << 8, 24), FpmRouteRef{7, false, 186, 0});
  const size_t v4 = refs.memory();
  EXPECT_EQ(refs.kinds(), 1u);
  EXPECT_LE(static_cast<double>(v4) / 100000, 8 / 0.64 + 0.1);
  for (uint64_t n = 0; n < 100000; ++n) {
    refs.Put(Prefix::V6(static_cast<U128>(0x20010db800000000ull | (n << 16)) << 64, 48), FpmRouteRef{7, false, 186, 0});
  }
  EXPECT_LE(static_cast<double>(refs.memory() - v4) / 100000, 12 / 0.64 + 0.1);
  EXPECT_EQ(refs.kinds(), 1u);
}

}  // namespace
}  // namespace fibnic
