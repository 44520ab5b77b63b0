// The incremental tests' judge: an optimizer that kept its trie and tables
// across changes must answer exactly what a fresh one fed the same routes (in
// another order) answers for the same `prefer` — entries, covered totals and
// every route's state.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "fib/tcam6/tcam6_optimizer.h"
#include "tests/fib/tcam6/tcam6_oracle.h"

namespace fibnic::tcam6test {

inline std::string Show(const std::vector<tcam6::OptEntry>& es) {
  std::string s;
  for (const auto& e : es) s += "  " + Hex(e.value) + "/" + std::to_string(e.len) + " code " + std::to_string(e.code) + "\n";
  return s;
}

// A fresh optimizer over `routes` (inserted in a shuffled order) vs `inc`.
inline void ExpectSameAsFresh(const tcam6::Optimizer& inc, const std::vector<tcam6::OptEntry>& inc_entries,
                       const Routes& routes, uint32_t budget, const std::vector<tcam6::OptEntry>& prefer,
                       std::mt19937_64& rng, const std::string& label) {
  std::vector<std::pair<Prefix, Tcam6Route>> order(routes.begin(), routes.end());
  std::shuffle(order.begin(), order.end(), rng);
  tcam6::Optimizer fresh(budget);
  for (const auto& [p, r] : order) fresh.Upsert(p, r.code, r.reason, r.weight);
  const auto& want = fresh.Solve(prefer);
  ASSERT_EQ(inc_entries, want) << label << "\nincremental:\n" << Show(inc_entries) << "fresh:\n" << Show(want);
  EXPECT_EQ(inc.covered_weight(), fresh.covered_weight()) << label;
  EXPECT_EQ(inc.covered_routes(), fresh.covered_routes()) << label;
  EXPECT_EQ(inc.route_count(), routes.size()) << label;
  int failures = 0;
  for (const auto& [p, r] : routes) {
    const auto a = inc.StateOf(p), b = fresh.StateOf(p);
    if ((a.state != b.state || a.reason != b.reason) && failures++ < 5) {
      ADD_FAILURE() << label << ": " << p.ToString() << " incremental " << OffloadStateName(a.state) << "/"
                    << PuntReasonName(a.reason) << ", fresh " << OffloadStateName(b.state) << "/"
                    << PuntReasonName(b.reason);
    }
  }
}

// A random optimizer and the routes given to it, for the incremental tests:
// a budget of 1-32 entries, a light-subtree bound from every table stored (0)
// to the default (the fresh optimizer judging it uses the default), 1-3 codes.
struct RandomOptimizer {
  explicit RandomOptimizer(std::mt19937_64& rng)
      : budget(1 + uint32_t(rng() % 32)), light(kLight[rng() % 4]), inc(budget, light), codes(1 + int(rng() % 3)) {}
  void Set(const Prefix& p, const Tcam6Route& r) {
    routes[p] = r;
    inc.Upsert(p, r.code, r.reason, r.weight);
  }
  static constexpr uint32_t kLight[] = {0, 3, 16, tcam6::Optimizer::kLightNodes};
  const uint32_t budget, light;
  tcam6::Optimizer inc;
  int codes;
  Routes routes;
  std::vector<Prefix> known;
};

}  // namespace fibnic::tcam6test
