// Incremental == from scratch: the optimizer keeps its trie and DP tables
// across Solve() calls and redoes only what a change touches; after every
// batch of random changes its answer (entries, covered totals, every route's
// state) must be exactly what a fresh optimizer fed the same routes, in
// another order, gives for the same `prefer`. Also at the compiler level
// (prefer = the TCAM before the commit) and on the real table.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fib/tcam6/tcam6_compiler.h"
#include "fib/tcam6/tcam6_optimizer.h"
#include "fib/tcam6/tcam6_sequencer.h"
#include "tests/fib/tcam6/route_file.h"
#include "tests/fib/tcam6/tcam6_fresh.h"
#include "tests/fib/tcam6/tcam6_oracle.h"
#include "tests/fib/tcam6/tcam6_random.h"

namespace fibnic::tcam6test {
namespace {

#ifndef TCAM6_REAL_TABLE_LIMIT
#define TCAM6_REAL_TABLE_LIMIT 0  // all of it
#endif

// Random batches: new routes near old ones (nesting, splitting branching
// points), erasures (pruning them), code/weight/reason changes, new codes
// (the colour set changes), huge weights (the cell width changes), and
// prefer sets that are the last answer, a part of it, or random trie prefixes.
TEST(Tcam6Incremental, MatchesFreshOptimizerOnRandomChanges) {
  const uint64_t seed = std::random_device{}();
  std::printf("MatchesFreshOptimizerOnRandomChanges seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int table = 0; table < 60; ++table) {
    // Both sides of the light-subtree bound (RandomOptimizer).
    RandomOptimizer t(rng);
    const uint32_t budget = t.budget, light = t.light;
    auto& inc = t.inc;
    auto& routes = t.routes;
    auto& known = t.known;
    int& codes = t.codes;
    auto set = [&](const Prefix& p, const Tcam6Route& r) { t.Set(p, r); };
    const int n = 1 + int(rng() % 150);
    for (int i = 0; i < n; ++i) {
      known.push_back(RandomPrefix(rng, known));
      set(known.back(), RandomRoute(rng, codes));
    }
    std::vector<tcam6::OptEntry> prefer;
    for (int round = 0; round < 25; ++round) {
      const std::string label = "seed " + std::to_string(seed) + " table " + std::to_string(table) + " round " +
                                std::to_string(round) + " budget " + std::to_string(budget) + " light " +
                                std::to_string(light);
      const auto entries = inc.Solve(prefer);
      ExpectSameAsFresh(inc, entries, routes, budget, prefer, rng, label);
      if (HasFailure()) return;
      switch (rng() % 4) {
        case 0: prefer = entries; break;  // what the compiler does
        case 1:
          prefer = entries;
          if (!prefer.empty()) prefer.erase(prefer.begin() + long(rng() % prefer.size()));
          break;
        case 2:
          prefer.clear();
          for (int i = 0; i < 4 && !known.empty(); ++i) {
            const Prefix& p = known[rng() % known.size()];
            const int len = std::min(p.len(), 64);
            prefer.push_back({uint64_t(p.addr().v6() >> 64) & tcam6::Mask64(len), uint8_t(len), uint8_t(rng() % 5)});
          }
          break;
        default: prefer.clear();
      }
      if (rng() % 8 == 0) ++codes;  // a code nobody used so far
      const int changes = 1 + int(rng() % (rng() % 5 == 0 ? 40 : 4));
      for (int c = 0; c < changes; ++c) {
        const int kind = int(rng() % 4);
        if (kind == 0 || known.empty()) {
          known.push_back(RandomPrefix(rng, known));
          set(known.back(), RandomRoute(rng, codes));
        } else if (kind == 1) {
          const Prefix p = known[rng() % known.size()];
          EXPECT_EQ(inc.Erase(p), routes.erase(p) == 1) << label << " erase " << p.ToString();
        } else if (kind == 2) {
          Tcam6Route r = RandomRoute(rng, codes);
          // Now and then a traffic weight too big for 32-bit DP cells: the
          // tables switch to 64-bit cells (and back once it is gone).
          if (rng() % 10 == 0) r.weight = 0x80000000u + uint32_t(rng() % 1000);
          set(known[rng() % known.size()], r);
        } else {  // the same route again: no change
          const Prefix& p = known[rng() % known.size()];
          auto it = routes.find(p);
          if (it != routes.end()) {
            EXPECT_FALSE(inc.Upsert(p, it->second.code, it->second.reason, it->second.weight)) << label;
          }
        }
      }
    }
  }
}

// The compiler's Commit() answers what a fresh optimizer answers with the
// TCAM before the commit as `prefer`.
TEST(Tcam6Incremental, CompilerCommitsMatchFresh) {
  const uint64_t seed = std::random_device{}();
  std::printf("CompilerCommitsMatchFresh seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int table = 0; table < 20; ++table) {
    const uint32_t cap = 1 + uint32_t(rng() % 32);
    Tcam6Compiler comp(cap);
    Routes routes;
    std::vector<Prefix> known;
    for (int round = 0; round < 20; ++round) {
      std::vector<tcam6::OptEntry> prefer;
      for (const auto& e : comp.entries()) {
        if (e.valid()) prefer.push_back({e.value, uint8_t(tcam6::MaskLen(e.mask)), e.code});
      }
      const int changes = round == 0 ? 60 : 1 + int(rng() % 3);
      for (int c = 0; c < changes; ++c) {
        if (rng() % 3 != 0 || known.empty()) {
          known.push_back(RandomPrefix(rng, known));
          routes[known.back()] = RandomRoute(rng, 3);
          comp.Upsert(known.back(), routes[known.back()]);
        } else {
          const Prefix p = known[rng() % known.size()];
          routes.erase(p);
          comp.Erase(p);
        }
      }
      comp.Commit();
      std::vector<tcam6::OptEntry> got;
      for (const auto& e : comp.entries()) {
        if (e.valid()) got.push_back({e.value, uint8_t(tcam6::MaskLen(e.mask)), e.code});
      }
      std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
        return std::tie(a.value, a.len, a.code) < std::tie(b.value, b.len, b.code);
      });
      tcam6::Optimizer fresh(cap);
      for (const auto& [p, r] : routes) fresh.Upsert(p, r.code, r.reason, r.weight);
      const std::string label = "seed " + std::to_string(seed) + " table " + std::to_string(table) + " round " +
                                std::to_string(round);
      // What reaches the device: the optimizer's choice without redundant entries.
      std::vector<regs::Tcam6Entry> chosen;
      for (const auto& e : fresh.Solve(prefer)) chosen.push_back({e.value, tcam6::Mask64(e.len), e.code, regs::kTcamValid});
      DropRedundantEntries(chosen);
      std::vector<tcam6::OptEntry> want;
      for (const auto& e : chosen) want.push_back({e.value, uint8_t(tcam6::MaskLen(e.mask)), e.code});
      std::sort(want.begin(), want.end(), [](const auto& a, const auto& b) {
        return std::tie(a.value, a.len, a.code) < std::tie(b.value, b.len, b.code);
      });
      ASSERT_EQ(got, want) << label;
      EXPECT_EQ(comp.covered_weight(), fresh.covered_weight()) << label;
      EXPECT_EQ(comp.covered_routes(), fresh.covered_routes()) << label;
      for (const auto& [p, r] : routes) {
        const auto a = comp.StateOf(p);
        const auto b = fresh.StateOf(p);
        ASSERT_TRUE(a.state == b.state && a.reason == b.reason) << label << " " << p.ToString();
      }
    }
  }
}

// Next-hop slots changing owner: every route of some codes moves to another
// code (codes merge, swap or are new), upserted in prefix order as
// Fib::Commit does — the walks reuse the previous route's path — with now and
// then a new route, an erase or a re-upsert of an unchanged route in between
// (the trie changes shape mid-walk) and a Solve() after each round.
TEST(Tcam6Incremental, RecolourInPrefixOrderMatchesFresh) {
  const uint64_t seed = std::random_device{}();
  std::printf("RecolourInPrefixOrderMatchesFresh seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int table = 0; table < 40; ++table) {
    const uint32_t budget = 1 + uint32_t(rng() % 32);
    tcam6::Optimizer inc(budget);
    Routes routes;
    std::vector<Prefix> known;
    const int n = 1 + int(rng() % 200);
    for (int i = 0; i < n; ++i) {
      known.push_back(RandomPrefix(rng, known));
      routes[known.back()] = RandomRoute(rng, 4);
      inc.Upsert(known.back(), routes[known.back()].code, routes[known.back()].reason, routes[known.back()].weight);
    }
    std::vector<tcam6::OptEntry> prefer = inc.Solve({});
    for (int round = 0; round < 8; ++round) {
      const std::string label = "seed " + std::to_string(seed) + " table " + std::to_string(table) + " round " +
                                std::to_string(round) + " budget " + std::to_string(budget);
      std::array<uint8_t, 7> to{};  // new code by old code
      for (int c = 1; c < 7; ++c) to[c] = uint8_t(rng() % 3 == 0 ? c : 1 + rng() % 6);
      // (prefix, route) in prefix order; no route: erase.
      std::vector<std::pair<Prefix, std::optional<Tcam6Route>>> ops;
      for (const auto& [p, r] : routes) {
        if (r.code != 0) ops.emplace_back(p, Tcam6Route{to[r.code], r.reason, r.weight});
        const int extra = int(rng() % 40);
        if (extra == 0) ops.emplace_back(RandomPrefix(rng, known), RandomRoute(rng, 6));
        if (extra == 1) ops.emplace_back(p, std::nullopt);
        if (extra == 2) ops.emplace_back(p, r);  // unchanged (or back to what it was)
      }
      for (const auto& [p, r] : ops) {
        if (r) {
          known.push_back(p);
          routes[p] = *r;
          inc.Upsert(p, r->code, r->reason, r->weight);
        } else {
          EXPECT_EQ(inc.Erase(p), routes.erase(p) == 1) << label << " erase " << p.ToString();
        }
      }
      const auto entries = inc.Solve(prefer);
      ExpectSameAsFresh(inc, entries, routes, budget, prefer, rng, label);
      if (HasFailure()) return;
      prefer = entries;
    }
  }
}

// The real table: single-route changes (and one batch), each checked
// against a from-scratch solve.
TEST(Tcam6Incremental, RealTableChangesMatchFresh) {
  auto loaded = LoadSharedTable(FIBNIC_SOURCE_DIR, TCAM6_REAL_TABLE_LIMIT);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  Routes routes = ToCodes(*loaded);
  ASSERT_GT(routes.size(), 30000u);
  const uint64_t seed = std::random_device{}();
  std::printf("RealTableChangesMatchFresh seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  tcam6::Optimizer inc(32);
  for (const auto& [p, r] : routes) inc.Upsert(p, r.code, r.reason, r.weight);
  std::vector<tcam6::OptEntry> prefer = inc.Solve({});
  std::vector<Prefix> keys;
  for (const auto& [p, r] : routes) keys.push_back(p);
  for (int step = 0; step < 5; ++step) {
    // Mostly a route under a chosen entry (so the answer moves), else anywhere.
    std::vector<Prefix> near;
    for (const auto& e : prefer) {
      auto it = routes.lower_bound(Prefix::V6(U128{e.value} << 64, 0));
      if (it != routes.end()) near.push_back(it->first);
    }
    const int changes = step == 4 ? 200 : 1;
    for (int c = 0; c < changes; ++c) {
      const Prefix p = !near.empty() && rng() % 2 ? near[rng() % near.size()] : keys[rng() % keys.size()];
      if (rng() % 3 == 0) {
        routes.erase(p);
        inc.Erase(p);
      } else {
        routes[p] = RandomRoute(rng, 3);
        inc.Upsert(p, routes[p].code, routes[p].reason, routes[p].weight);
      }
    }
    const auto entries = inc.Solve(prefer);
    ExpectSameAsFresh(inc, entries, routes, 32, prefer, rng,
                      "real table seed " + std::to_string(seed) + " step " + std::to_string(step));
    if (HasFailure()) return;
    prefer = entries;
  }
  // Every route's code moves (1 -> 2 -> 3 -> 1), in prefix order.
  for (auto& [p, r] : routes) {
    if (r.code != 0) r.code = uint8_t(r.code % 3 + 1);
    inc.Upsert(p, r.code, r.reason, r.weight);
  }
  ExpectSameAsFresh(inc, inc.Solve(prefer), routes, 32, prefer, rng, "real table seed " + std::to_string(seed) +
                    " recolour");
}

}  // namespace
}  // namespace fibnic::tcam6test
