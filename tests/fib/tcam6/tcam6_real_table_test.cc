// The shared real table (160k IPv6 routes via make-routes): the compiled TCAM
// is checked exactly against the reference LPM, then a batch of route changes
// is checked write by write.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>

#include "fib/tcam6/tcam6_compiler.h"
#include "tests/fib/tcam6/route_file.h"
#include "tests/fib/tcam6/tcam6_checks.h"
#include "tests/fib/tcam6/tcam6_oracle.h"

namespace fibnic::tcam6test {
namespace {

#ifndef TCAM6_REAL_TABLE_LIMIT
#define TCAM6_REAL_TABLE_LIMIT 0  // all of it
#endif

const Routes& RealTable() {
  static const Routes* table = [] {
    auto loaded = LoadSharedTable(FIBNIC_SOURCE_DIR, TCAM6_REAL_TABLE_LIMIT);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return new Routes(loaded.ok() ? ToCodes(*loaded) : Routes{});
  }();
  return *table;
}

int MaskLen64(const regs::Tcam6Entry& e) { return e.valid() ? std::countl_one(e.mask) : 0; }

TEST(Tcam6RealTable, CompiledTableNeverMisforwards) {
  const Routes& routes = RealTable();
  ASSERT_GT(routes.size(), 30000u);
  const uint64_t seed = std::random_device{}();
  std::printf("CompiledTableNeverMisforwards seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);

  Tcam6Compiler comp(32);
  for (const auto& [p, r] : routes) comp.Upsert(p, r);
  const Routes empty;
  CommitCheck c{&empty, &routes, comp.entries(), {}, "real table, seed " + std::to_string(seed)};
  c.writes = comp.Commit();
  CheckCommit(c, comp, rng, 2000);
  std::printf("real table: %llu of %zu routes offloaded with %zu writes\n",
              static_cast<unsigned long long>(comp.covered_routes()), routes.size(), c.writes.size());
  EXPECT_GT(comp.covered_routes(), 32u);  // aggregation beats one route per entry

  // A batch of changes: new routes near entries, punts, code changes, deletes.
  Routes after = routes;
  // Mostly routes the TCAM answers for (so the entries must change), some anywhere.
  std::vector<Prefix> offloaded, keys;
  for (const auto& [p, r] : routes) {
    keys.push_back(p);
    if (comp.StateOf(p).state != OffloadState::kPunted) offloaded.push_back(p);
  }
  ASSERT_FALSE(offloaded.empty());
  std::vector<Prefix> touched;
  for (int i = 0; i < 40; ++i) {
    const auto& e = comp.entries()[rng() % comp.entries().size()];
    const Prefix p = rng() % 4 == 0 ? keys[rng() % keys.size()] : offloaded[rng() % offloaded.size()];
    switch (i % 4) {
      case 0:
        after[p] = Tcam6Route{uint8_t(1 + rng() % 3), PuntReason::kNone, 1};
        touched.push_back(p);
        break;
      case 1:
        after.erase(p);
        touched.push_back(p);
        break;
      case 2: {  // a new more-specific under an entry
        const U128 base = e.valid() ? (U128{e.value} << 64) : p.addr().v6();
        const int len = 40 + int(rng() % 89);
        const Prefix q = Prefix::V6(base | (Random128(rng) & (~U128{0} >> std::max(0, MaskLen64(e) ))), len);
        after[q] = Tcam6Route{uint8_t(rng() % 4), PuntReason::kUnresolved, 1};
        touched.push_back(q);
        break;
      }
      default:
        after[p] = Tcam6Route{0, PuntReason::kNoSlot, 1};
        touched.push_back(p);
    }
  }
  const auto old_slots = comp.entries();
  for (const auto& p : touched) {
    auto it = after.find(p);
    if (it == after.end()) comp.Erase(p);
    else comp.Upsert(p, it->second);
  }
  CommitCheck c2{&routes, &after, old_slots, comp.Commit(), "real table change, seed " + std::to_string(seed)};
  EXPECT_FALSE(c2.writes.empty());
  std::printf("change: %zu writes\n", c2.writes.size());
  CheckCommit(c2, comp, rng, 2000);
}

}  // namespace
}  // namespace fibnic::tcam6test
