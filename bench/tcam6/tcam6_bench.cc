// IPv6 TCAM compiler bench: how many routes the 32 entries fully offload on
// the real table and on a 1,000-route table, against a naive baseline measured
// in the same run (one entry per route, longest prefixes first, no
// aggregation); how long a full compile takes, the latency of a Commit() after
// one route change (p50/p99 over random single changes: code changes, new
// more-specifics, deletes) and after batches of 10 to 10,000 code changes
// (a peer's return), the compiler's memory: both its own estimate
// and the heap it really holds (malloc's count, so allocator overhead and
// capacity slack show), and what a commit that moves every route's code costs
// against the full compile (routes in prefix order, as Fib::Commit gives
// them, and in a hashed RIB's order).
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <vector>

#include "fib/tcam6/tcam6_compiler.h"
#include "tests/fib/tcam6/route_file.h"

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double, std::milli>(b - a).count(); }
// This thread's CPU time in ms: on a shared machine wall-clock percentiles
// mostly measure the scheduler, so both are printed.
double CpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}
// Bytes the process holds from malloc (small blocks and mmapped ones).
size_t HeapBytes() {
  const struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}
double Mb(size_t bytes) { return double(bytes) / (1 << 20); }
double Pct(std::vector<double> v, int pct) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, v.size() * size_t(pct) / 100)];
}

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
  auto loaded = tcam6test::LoadSharedTable(FIBNIC_SOURCE_DIR, limit);
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

  std::vector<Prefix> keys;  // for the single changes below
  for (const auto& [p, r] : routes) keys.push_back(p);
  const size_t heap0 = HeapBytes();
  auto owned = std::make_unique<Tcam6Compiler>(capacity);  // on the heap, so counted too
  Tcam6Compiler& comp = *owned;
  t0 = Clock::now();
  for (const auto& [p, r] : routes) comp.Upsert(p, r);
  comp.Commit();
  t1 = Clock::now();
  const double full_ms = Ms(t0, t1);
  const uint64_t covered = comp.covered_routes();
  const tcam6::Optimizer::Memory mem = comp.memory();
  const double heap_mb = Mb(HeapBytes() - heap0);

  // Single changes, one Commit() each, as the daemon sees them: a route's
  // code changes, a new more-specific appears, a route goes (and comes back).
  std::mt19937_64 rng(7);
  std::vector<double> wall, cpu;
  size_t writes = 0;
  const int changes = 400;
  for (int i = 0; i < changes; ++i) {
    const Prefix p = keys[rng() % keys.size()];
    const Tcam6Route r = routes.at(p);
    const double c0 = CpuMs();
    t0 = Clock::now();
    switch (i % 4) {
      case 0: comp.Upsert(p, Tcam6Route{uint8_t(r.code % 3 + 1), PuntReason::kNone, 1}); break;
      case 1: comp.Upsert(p, r); break;
      case 2:
        comp.Upsert(Prefix::V6(p.addr().v6() | (U128{rng() & 0xffff} << 64), 64), Tcam6Route{2, PuntReason::kNone, 1});
        break;
      default: comp.Erase(p);
    }
    writes += comp.Commit().size();
    t1 = Clock::now();
    cpu.push_back(CpuMs() - c0);
    wall.push_back(Ms(t0, t1));
    if (i % 4 == 3) comp.Upsert(p, r);  // back, uncounted
    if (i % 4 == 3) writes += comp.Commit().size();
  }
  const double heap_after_mb = Mb(HeapBytes() - heap0);

  // Batches, as a peer's return hands them over: n random routes change code
  // (in prefix order), one Commit() for the lot.
  struct Batch {
    size_t n;
    double ms;
  };
  std::vector<Batch> batches;
  for (size_t n : {size_t{10}, size_t{100}, size_t{1000}, size_t{10000}}) {
    if (n * 4 > keys.size()) break;
    std::map<Prefix, Tcam6Route> pick;
    while (pick.size() < n) {
      const Prefix& p = keys[rng() % keys.size()];
      Tcam6Route r = routes.at(p);
      if (r.code != 0) r.code = uint8_t(r.code % 3 + 1);
      pick[p] = r;
    }
    t0 = Clock::now();
    for (const auto& [p, r] : pick) comp.Upsert(p, r);
    comp.Commit();
    batches.push_back({n, Ms(t0, Clock::now())});
    for (const auto& [p, r] : pick) comp.Upsert(p, routes.at(p));  // back, uncounted
    comp.Commit();
  }

  // Every route's code moves, as when next-hop slots change owner: upserted
  // in prefix order (as Fib::Commit does) and, for comparison, in the order a
  // hashed RIB would hand them over; each timed with its Commit().
  std::vector<std::pair<Prefix, Tcam6Route>> moved(routes.begin(), routes.end());
  struct Recolour {
    const char* order;
    double total, upserts;
  };
  std::vector<Recolour> recolours;
  auto recolour = [&](const char* order) {
    for (auto& [p, r] : moved) r.code = r.code == 0 ? 0 : uint8_t(r.code % 3 + 1);
    t0 = Clock::now();
    for (const auto& [p, r] : moved) comp.Upsert(p, r);
    const auto t_up = Clock::now();
    comp.Commit();
    recolours.push_back({order, Ms(t0, Clock::now()), Ms(t0, t_up)});
  };
  recolour("prefix");
  std::shuffle(moved.begin(), moved.end(), rng);
  recolour("hash");

  const double p50 = Pct(cpu, 50);
  std::printf("%s, %zu routes\n"
              "  offloaded:      compiler %llu routes, baseline %llu (x%.2f)\n"
              "  full compile:   %.1f ms (baseline sort %.1f ms)\n"
              "  one change:     cpu p50 %.3f ms, p99 %.3f ms; wall p50 %.3f ms, p99 %.3f ms "
              "(%d commits, %.2f writes each; full compile / p50 = x%.0f)\n"
              "  memory:         heap %.1f MB after the full compile, %.1f MB after the changes; estimated "
              "%.1f MB (trie %.1f, routes %.1f, DP tables %.1f)\n",
              name, routes.size(), static_cast<unsigned long long>(covered), static_cast<unsigned long long>(base),
              base ? double(covered) / double(base) : 0.0, full_ms, base_ms, p50, Pct(cpu, 99), Pct(wall, 50),
              Pct(wall, 99), changes, double(writes) / changes, p50 > 0 ? full_ms / p50 : 0.0, heap_mb, heap_after_mb,
              Mb(mem.total()), Mb(mem.trie), Mb(mem.routes), Mb(mem.tables));
  for (const auto& b : batches) {
    std::printf("  batch:          %zu routes change code: %.1f ms (x%.2f of a full compile)\n", b.n, b.ms,
                b.ms / full_ms);
  }
  for (const auto& r : recolours) {
    std::printf("  recolour all:   %.1f ms with the routes in %s order (upserts %.1f ms, commit %.1f ms) "
                "= x%.2f of a full compile\n",
                r.total, r.order, r.upserts, r.total - r.upserts, r.total / full_ms);
  }
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
