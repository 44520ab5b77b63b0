// Listing bench: route pages and Counts() on a full table, against the way
// both were answered before seekable listings (the peer, same run): a page
// walked every best route in prefix order with its RouteInfo and filtered in
// the callback; Counts() took every route's RouteInfo.
//   listing_bench ROUTES NEIGHBORS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "fib/fib.h"
#include "tools/route_file_loader.h"

namespace fibnic::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kPage = 100;

double Ms(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// Best of a few runs: the page is what an operator waits for, not the noise.
template <typename F>
double BestMs(int runs, F f) {
  double best = 1e18;
  for (int i = 0; i < runs; ++i) {
    const auto t = Clock::now();
    f();
    best = std::min(best, Ms(t));
  }
  return best;
}

std::vector<Prefix> NewPage(const Fib& fib, const RouteQuery& q) {
  std::vector<Prefix> out;
  fib.ForEachRoute(q, [&](const RouteInfo& r) {
    out.push_back(r.route.prefix);
    return out.size() < kPage;
  });
  return out;
}

// The peer: the whole family's walk, filtered as the REST handler used to.
std::vector<Prefix> OldPage(const Fib& fib, const RouteQuery& q) {
  std::vector<Prefix> out;
  fib.ForEachRoute(q.family, [&](const RouteInfo& r) {
    const Prefix& p = r.route.prefix;
    if (q.after && !(*q.after < p)) return true;
    if (q.within && p.addr() > q.within->Last()) return false;
    if (q.within && !q.within->Contains(p)) return true;
    out.push_back(p);
    return out.size() < kPage;
  });
  return out;
}

FibCounts OldCounts(const Fib& fib) {
  FibCounts c;
  for (Family f : {Family::kV4, Family::kV6}) {
    fib.ForEachRoute(f, [&](const RouteInfo& r) {
      ++c.routes[f == Family::kV4 ? 0 : 1][static_cast<int>(r.state)];
      return true;
    });
  }
  return c;
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: listing_bench ROUTES NEIGHBORS\n");
    return 2;
  }
  Fib fib{FibConfig{}};
  RouteFileStats stats;
  Status st = LoadNeighborFileInto(fib, argv[2], &stats);
  if (st.ok()) st = LoadRouteFileInto(fib, argv[1], &stats);
  if (!st.ok()) {
    std::fprintf(stderr, "listing_bench: %s\n", st.ToString().c_str());
    return 1;
  }
  fib.Commit();
  std::vector<Prefix> all[2];
  for (int k = 0; k < 2; ++k) {
    fib.ForEachRoute(k == 0 ? Family::kV4 : Family::kV6, [&](const RouteInfo& r) {
      all[k].push_back(r.route.prefix);
      return true;
    });
  }
  std::printf("listing bench: %zu IPv4 + %zu IPv6 best routes, pages of %zu, best of runs (ms)\n", all[0].size(),
              all[1].size(), kPage);

  // Cursors as a client holds them: the last prefix of the previous page.
  const Prefix mid4 = all[0][all[0].size() / 2], last4 = all[0][all[0].size() - kPage / 2];
  const Prefix mid6 = all[1][all[1].size() / 2], last6 = all[1][all[1].size() - kPage / 2];
  const Prefix within4 = *Prefix::Make(mid4.addr(), 8), within6 = *Prefix::Make(mid6.addr(), 32);
  struct Case {
    const char* name;
    RouteQuery q;
  };
  auto query = [](Family f, std::optional<Prefix> after, std::optional<Prefix> within) {
    RouteQuery q;
    q.family = f;
    q.after = after;
    q.within = within;
    return q;
  };
  const std::vector<Case> cases = {
      {"ipv4 first page", query(Family::kV4, std::nullopt, std::nullopt)},
      {"ipv4 middle page", query(Family::kV4, mid4, std::nullopt)},
      {"ipv4 last page", query(Family::kV4, last4, std::nullopt)},
      {"ipv4 within /8, first", query(Family::kV4, std::nullopt, within4)},
      {"ipv4 within /8, middle", query(Family::kV4, mid4, within4)},
      {"ipv6 first page", query(Family::kV6, std::nullopt, std::nullopt)},
      {"ipv6 middle page", query(Family::kV6, mid6, std::nullopt)},
      {"ipv6 last page", query(Family::kV6, last6, std::nullopt)},
      {"ipv6 within /32, middle", query(Family::kV6, mid6, within6)},
  };
  std::printf("\n%-26s %12s %12s %10s\n", "page", "seek ms", "peer ms", "peer/seek");
  int failures = 0;
  for (const auto& c : cases) {
    std::vector<Prefix> got, want;
    const double seek = BestMs(5, [&] { got = NewPage(fib, c.q); });
    const double peer = BestMs(2, [&] { want = OldPage(fib, c.q); });
    const bool same = got == want && !got.empty();
    failures += !same;
    std::printf("%-26s %12.2f %12.2f %9.0fx%s\n", c.name, seek, peer, peer / seek, same ? "" : "  DIFFERENT PAGES");
  }

  FibCounts now, old;
  const double counts = BestMs(5, [&] { now = fib.Counts(); });
  const double peer = BestMs(2, [&] { old = OldCounts(fib); });
  const bool same = std::equal(&now.routes[0][0], &now.routes[0][0] + 6, &old.routes[0][0]);
  failures += !same;
  std::printf("%-26s %12.2f %12.2f %9.0fx%s\n", "Counts()", counts, peer, peer / counts,
              same ? "" : "  DIFFERENT COUNTS");
  return failures ? 1 : 0;
}

}  // namespace
}  // namespace fibnic::bench

int main(int argc, char** argv) { return fibnic::bench::Main(argc, argv); }
