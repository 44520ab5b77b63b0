// The entry choice in steps (Optimizer::Solve and Tcam6Compiler::Commit with
// a deadline, as the pipeline runs it so that batches go out between steps).
// The optimizer: route changes between steps must neither be lost under
// tables a step has already redone nor change the answer — the step that
// finishes gives what a fresh optimizer gives for the routes as they are then.
// The compiler (whose choice keeps the routes it began with; later changes
// wait for the next): every state the TCAM passes through, punts pushed
// between steps included, must be safe for the routes of its time (reference
// LPM), and the last choice offloads what a fresh one does.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "fib/tcam6/tcam6_compiler.h"
#include "fib/tcam6/tcam6_optimizer.h"
#include "fib/tcam6/tcam6_sequencer.h"
#include "tests/fib/tcam6/tcam6_checks.h"
#include "tests/fib/tcam6/tcam6_fresh.h"
#include "tests/fib/tcam6/tcam6_oracle.h"
#include "tests/fib/tcam6/tcam6_random.h"
#include "tests/support/test_seed.h"

namespace fibnic::tcam6test {
namespace {

// A deadline already passed: each step redoes one table, then stops.
constexpr auto kOneTable = tcam6::Optimizer::Clock::time_point::min();

// A random change to `routes` (a new route near the known ones, an erase, a
// new code or weight) through `set` / `erase`.
template <typename Set, typename Erase>
void RandomChange(std::mt19937_64& rng, std::vector<Prefix>& known, int codes, Set&& set, Erase&& erase) {
  const int kind = int(rng() % 3);
  if (kind == 0 || known.empty()) {
    known.push_back(RandomPrefix(rng, known));
    set(known.back(), RandomRoute(rng, codes));
  } else if (kind == 1) {
    erase(known[rng() % known.size()]);
  } else {
    set(known[rng() % known.size()], RandomRoute(rng, codes));
  }
}

TEST(Tcam6Stepped, ChangesBetweenStepsMatchFresh) {
  const uint64_t seed = fibnic::testing::TestSeed("Tcam6Stepped.ChangesBetweenStepsMatchFresh");
  std::mt19937_64 rng(seed);
  int stepped = 0, changed_between = 0;
  for (int table = 0; table < 40; ++table) {
    // Every table stored (light 0: one step per node), a few, or most recomputed.
    RandomOptimizer t(rng);
    auto set = [&](const Prefix& p, const Tcam6Route& r) { t.Set(p, r); };
    auto erase = [&](const Prefix& p) { EXPECT_EQ(t.inc.Erase(p), t.routes.erase(p) == 1) << p.ToString(); };
    const int n = 1 + int(rng() % 200);
    for (int i = 0; i < n; ++i) RandomChange(rng, t.known, t.codes, set, erase);
    std::vector<tcam6::OptEntry> prefer;
    for (int round = 0; round < 15; ++round) {
      const std::string label = "seed " + std::to_string(seed) + " table " + std::to_string(table) + " round " +
                                std::to_string(round) + " budget " + std::to_string(t.budget) + " light " +
                                std::to_string(t.light);
      int steps = 0;
      // Later steps keep the preference the solve began with, whatever they are given.
      while (!t.inc.Solve(steps == 0 ? prefer : std::vector<tcam6::OptEntry>{}, kOneTable)) {
        ++steps;
        ASSERT_LT(steps, 100000) << label << ": the steps get nowhere";
        // A change stales a path of tables, a step redoes one: changes stop
        // after a while, so the solve can finish (the pipeline bounds it by time).
        if (steps < 30 && rng() % 3 == 0) {
          if (rng() % 10 == 0) ++t.codes;  // a new colour: every table is redone
          RandomChange(rng, t.known, t.codes, set, erase);
          ++changed_between;
        }
      }
      stepped += steps > 0;
      ExpectSameAsFresh(t.inc, t.inc.entries(), t.routes, t.budget, prefer, rng, label);
      if (HasFailure()) return;
      prefer = rng() % 4 ? t.inc.entries() : std::vector<tcam6::OptEntry>{};
      const int changes = 1 + int(rng() % (rng() % 5 == 0 ? 40 : 4));
      for (int c = 0; c < changes; ++c) RandomChange(rng, t.known, t.codes, set, erase);
    }
  }
  // The test is only worth its name if solves did stop and routes changed meanwhile.
  EXPECT_GT(stepped, 100);
  EXPECT_GT(changed_between, 100);
}

// The compiler, as the Fib drives it: changes, Protect() (pushed), a step of
// Commit(); while it is unfinished, more changes and Protect()s — they wait
// for the next choice, and the step that finishes punts the entries they make
// wrong. Every state on the way answers each destination with punt or the
// code of the routes of that moment (or of the moment before, while a delta
// is half applied); once every change is in a finished choice the entries
// offload as much as a fresh optimizer's, and StateOf tells the truth.
TEST(Tcam6Stepped, CompilerStepsStaySafeAndMatchFresh) {
  const uint64_t seed = fibnic::testing::TestSeed("Tcam6Stepped.CompilerStepsStaySafeAndMatchFresh");
  std::mt19937_64 rng(seed);
  int stepped = 0, deferred = 0;
  for (int table = 0; table < 12; ++table) {
    const uint32_t cap = 1 + uint32_t(rng() % 32);
    Tcam6Compiler comp(cap);
    Routes routes;
    std::vector<Prefix> known;
    auto set = [&](const Prefix& p, const Tcam6Route& r) {
      routes[p] = r;
      comp.Upsert(p, r);
    };
    auto erase = [&](const Prefix& p) {
      routes.erase(p);
      comp.Erase(p);
    };
    // Enough routes for heavy subtrees (light ones are redone in one piece).
    const int n = 300 + int(rng() % 500);
    for (int i = 0; i < n; ++i) RandomChange(rng, known, 3, set, erase);
    comp.Commit();
    // Applies `writes` to the TCAM as it was, judging every state against
    // the routes before and after.
    auto push = [&](const Routes& before, const std::vector<regs::Tcam6Entry>& old_slots,
                    const std::vector<TcamWrite>& writes, const std::string& label) {
      const auto dests = Destinations(routes, {&old_slots, &comp.entries()}, rng, 2);
      CheckWriteStates({&before, &routes, old_slots, writes, label}, comp, dests, Reference(before).JudgeAll(dests),
                       Reference(routes).JudgeAll(dests));
    };
    for (int round = 0; round < 8; ++round) {
      const std::string label = "seed " + std::to_string(seed) + " table " + std::to_string(table) + " round " +
                                std::to_string(round) + " cap " + std::to_string(cap);
      std::vector<tcam6::OptEntry> prefer;
      for (const auto& e : comp.entries()) {
        if (e.valid()) prefer.push_back({e.value, uint8_t(tcam6::MaskLen(e.mask)), e.code});
      }
      int steps = 0, choices = 0;
      while (!comp.settled() || steps == 0) {
        // Changes and their punts: the pipeline's CommitSafe.
        const Routes before = routes;
        const int changes = steps == 0 ? 1 + int(rng() % 20) : steps < 10 ? int(rng() % 3) : 0;
        for (int c = 0; c < changes; ++c) RandomChange(rng, known, 3, set, erase);
        auto old_slots = comp.entries();
        push(before, old_slots, comp.Protect(), label + " protect after step " + std::to_string(steps));
        // A step of the choice: the pipeline's CommitBest.
        old_slots = comp.entries();
        const bool was_choosing = comp.choosing();
        auto best = comp.Commit(kOneTable);
        ++steps;
        ASSERT_LT(steps, 100000) << label << ": the steps get nowhere";
        if (!best) {
          EXPECT_EQ(comp.entries(), old_slots) << label << ": an unfinished step wrote";
          continue;
        }
        choices += was_choosing || !comp.settled();
        deferred += was_choosing && !comp.settled();
        push(routes, old_slots, *best, label + " best after " + std::to_string(steps) + " steps");
        if (HasFailure()) return;
      }
      stepped += steps > 1;
      tcam6::Optimizer fresh(cap);
      for (const auto& [p, r] : routes) fresh.Upsert(p, r.code, r.reason, r.weight);
      if (choices <= 1) {
        // One choice, for the routes it began with: exactly the fresh answer.
        std::vector<tcam6::OptEntry> got;
        for (const auto& e : comp.entries()) {
          if (e.valid()) got.push_back({e.value, uint8_t(tcam6::MaskLen(e.mask)), e.code});
        }
        std::sort(got.begin(), got.end(), [](const auto& a, const auto& b) {
          return std::tie(a.value, a.len, a.code) < std::tie(b.value, b.len, b.code);
        });
        ASSERT_EQ(got, fresh.Solve(prefer)) << label << "\ngot:\n" << Show(got) << "fresh:\n" << Show(fresh.entries());
      } else {
        // Several (changes waited for the next): what they held before differs,
        // the weight they offload does not.
        fresh.Solve({});
      }
      EXPECT_EQ(comp.covered_weight(), fresh.covered_weight()) << label;
      const auto dests = Destinations(routes, {&comp.entries()}, rng, 2);
      CheckStates(comp, dests, Reference(routes).JudgeAll(dests), label);
      if (HasFailure()) return;
    }
  }
  EXPECT_GT(stepped, 20);
  EXPECT_GT(deferred, 10);
}

}  // namespace
}  // namespace fibnic::tcam6test
