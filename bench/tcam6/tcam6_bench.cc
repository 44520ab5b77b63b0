// IPv6 TCAM compiler bench: how many routes the 32 entries fully offload on
// the real table and on a 1,000-route table, against a naive baseline measured
// in the same run (one entry per route, longest prefixes first, no
// aggregation), and how long a full recompute and a one-route recompute take.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <vector>

#include "fibsync/tcam6_compiler.h"
#include "tests/tcam6/route_file.h"

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }

// Baseline: an entry per route (punt entries for code-0 routes and for the /64
// of every longer route), longest first, the first `capacity` of them. Taking
// the longest ones first keeps every taken route's more-specifics in the TCAM,
// so it never misforwards; a taken forwarding route is fully offloaded.
uint64_t Baseline(const std::map<Prefix, Tcam6Route>& routes, uint32_t capacity) {
  struct Cand {
    int len;
    bool route;  // a forwarding route (counts as offloaded when taken)
  };
  std::vector<Cand> cands;
  std::set<U128> long64;
  for (const auto& [p, r] : routes) {
    if (p.len() > 64) {
      long64.insert(p.addr().v6() >> 64);
    } else {
      cands.push_back({p.len(), r.code != 0});
    }
  }
  for (size_t i = 0; i < long64.size(); ++i) cands.push_back({64, false});
  std::stable_sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.len > b.len; });
  uint64_t covered = 0;
  for (size_t i = 0; i < cands.size() && i < capacity; ++i) covered += cands[i].route;
  return covered;
}

int Run(const char* name, int limit) {
  auto loaded = tcam6test::LoadSharedTable(FIBNIC_SHARED_DIR, limit);
  if (!loaded.ok()) {
    std::fprintf(stderr, "tcam6 bench: %s\n", loaded.status().ToString().c_str());
    return 1;
  }
  const auto routes = tcam6test::ToCodes(*loaded);
  const uint32_t capacity = 32;

  auto t0 = Clock::now();
  const uint64_t base = Baseline(routes, capacity);
  auto t1 = Clock::now();
  const double base_ms = Ms(t0, t1);

  Tcam6Compiler comp(capacity);
  for (const auto& [p, r] : routes) comp.Upsert(p, r);
  t0 = Clock::now();
  const auto writes = comp.Commit();
  t1 = Clock::now();
  const double full_ms = Ms(t0, t1);
  const uint64_t covered = comp.covered_routes();

  // One route flaps: its code changes, then changes back.
  const Prefix flap = routes.begin()->first;
  Tcam6Route changed = routes.begin()->second;
  changed.code = changed.code == 1 ? 2 : 1;
  comp.Upsert(flap, changed);
  t0 = Clock::now();
  const auto w1 = comp.Commit();
  comp.Upsert(flap, routes.begin()->second);
  const auto w2 = comp.Commit();
  t1 = Clock::now();
  const double flap_ms = Ms(t0, t1) / 2;

  std::printf("%-22s %7zu routes | offloaded: compiler %5llu, baseline %3llu (x%.2f) | "
              "recompute: full %8.1f ms (baseline sort %.1f ms, x%.0f), one-route %8.1f ms, %zu+%zu writes\n",
              name, routes.size(), static_cast<unsigned long long>(covered), static_cast<unsigned long long>(base),
              base ? double(covered) / double(base) : 0.0, full_ms, base_ms, base_ms > 0 ? full_ms / base_ms : 0.0,
              flap_ms, w1.size(), w2.size());
  (void)writes;
  return 0;
}

}  // namespace
}  // namespace fibnic

int main() {
  std::printf("tcam6: 32 TCAM entries; offloaded = routes whose every address the TCAM answers\n");
  int rc = fibnic::Run("1,000-route table", 1000);
  rc |= fibnic::Run("real table (IPv6)", 0);
  return rc;
}
