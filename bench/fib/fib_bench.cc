// fib bench: the Fib (RIB + FIBNIC image, deltas) against DPDK rte_fib
// (DIR24_8) adding the same real table in the same run.
//   fib_bench ROUTES NEIGHBORS [code-bits]
// Prints build time (best of 3 runs per side, alternating), insert/delete
// rates, incremental update latency p50/p99, changed bytes per update, and
// memory (after the build and its peak), with Fib/rte_fib ratios.
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/fib/rte_fib_peer.h"
#include "fib/fib.h"
#include "sources/file/route_file.h"

namespace fibnic::bench {
namespace {

using Clock = std::chrono::steady_clock;

double Secs(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Current resident set in MB (/proc/self/statm).
double RssMb() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, resident = 0;
  in >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Peak resident set in MB since the last ResetPeak() (VmHWM; writing 5 to
// clear_refs sets it back to the current resident set).
void ResetPeak() { std::ofstream("/proc/self/clear_refs") << "5"; }
double PeakMb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  }
  return 0;
}

struct V4Route {
  uint32_t addr;
  uint8_t len;
  uint8_t gw;  // index into gateways
};

double Pct(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

size_t DeltaBytes(const std::vector<DeviceDelta>& ds, int code_bits) {
  size_t b = 0;
  for (const auto& d : ds) {
    b += d.sram_words.size() * regs::SramWordBytes(code_bits);
    b += (d.nexthop_activate.size() + d.nexthop_retire.size()) * regs::kNexthopStride;
    b += (d.neigh_activate.size() + d.neigh_retire.size()) * regs::kNeighStride;
    b += d.tcam.size() * regs::kTcam6Stride;
  }
  return b;
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: fib_bench ROUTES NEIGHBORS [code-bits]\n");
    return 2;
  }
  const int code_bits = argc > 3 && std::string(argv[3]) == "4" ? 4 : 2;
  FibConfig cfg;
  cfg.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();

  // Input, outside every timing.
  std::vector<Route> routes4, routes6;
  std::vector<NextHop> gateways;
  auto st = ReadRouteFile(argv[1], cfg.caps.ports, [&](const RouteLine& l) {
    (l.prefix.family() == Family::kV4 ? routes4 : routes6).push_back(Route{l.prefix, RouteSource::kStatic, 1, {l.path}});
    if (std::find(gateways.begin(), gateways.end(), l.path) == gateways.end()) gateways.push_back(l.path);
    return OkStatus();
  });
  auto neigh = ReadNeighborFile(argv[2], cfg.caps.ports);
  if (!st.ok() || !neigh.ok()) {
    std::fprintf(stderr, "fib_bench: %s\n", (!st.ok() ? st : neigh.status()).ToString().c_str());
    return 1;
  }
  std::vector<V4Route> v4;
  for (const auto& r : routes4) {
    const auto gw = std::find(gateways.begin(), gateways.end(), r.paths[0]) - gateways.begin();
    v4.push_back({r.prefix.addr().v4(), static_cast<uint8_t>(r.prefix.len()), static_cast<uint8_t>(gw)});
  }
  std::printf("fib bench: %zu IPv4 + %zu IPv6 routes, %zu gateways, %d-bit codes\n", routes4.size(),
              routes6.size(), gateways.size(), code_bits);

  std::string err;
  if (!RteFibPeer::InitEal(&err)) {
    std::fprintf(stderr, "fib_bench: %s\n", err.c_str());
    return 1;
  }
  // Both sides add from the same compact array; the Fib gets each route the
  // way a source hands one over (one Route object, refilled per message).
  Route msg{Prefix(), RouteSource::kStatic, 1, {NextHop{}}};
  auto load_fib = [&](Fib& fib) {
    for (const auto& n : *neigh) fib.UpsertNeighbor(n);
    for (const auto& r : v4) {
      msg.prefix = Prefix::V4(r.addr, r.len);
      msg.paths[0] = gateways[r.gw];
      fib.UpsertRoute(msg);
    }
  };
  int failures = 0;

  // --- build time: best of kRounds, the two sides alternating ----------------
  // (a machine busy with other work slows both alike; the best run of each is
  // what each costs).
  constexpr int kRounds = 3;
  double fib_insert = 1e9, fib_commit = 1e9, fib_build = 1e9, rte_build = 1e9, rte_mem = 0, rte_peak = 0;
  size_t full_bytes = 0;
  for (int round = 0; round < kRounds; ++round) {
    {
      Fib fib(cfg);
      auto t = Clock::now();
      load_fib(fib);
      const double insert = Secs(t);
      t = Clock::now();
      const auto deltas = fib.Commit();
      const double commit = Secs(t);
      full_bytes = DeltaBytes(deltas, code_bits);
      if (insert + commit < fib_build) {
        fib_build = insert + commit;
        fib_insert = insert;
        fib_commit = commit;
      }
    }
    {
      // DPDK keeps its heap once grown: its memory is what the first build takes.
      malloc_trim(0);
      ResetPeak();
      const double rss = RssMb();
      RteFibPeer peer(static_cast<uint32_t>(v4.size() + 1024));
      if (!peer.ok()) {
        std::fprintf(stderr, "fib_bench: rte_fib_create failed\n");
        return 1;
      }
      const auto t = Clock::now();
      for (const auto& r : v4) failures += peer.Add(r.addr, r.len, r.gw + 1u) != 0;
      rte_build = std::min(rte_build, Secs(t));
      if (round == 0) {
        rte_mem = RssMb() - rss;
        rte_peak = PeakMb() - rss;
      }
    }
  }

  // --- Fib: memory, updates, deletes ------------------------------------------
  // Baselines with the heap trimmed: memory the input parsing freed must not
  // count for (or against) either side when it is handed back later.
  malloc_trim(0);
  ResetPeak();
  const double rss0 = RssMb();
  auto fib = std::make_unique<Fib>(cfg);
  load_fib(*fib);
  fib->Commit();
  auto t = Clock::now();
  for (const auto& r : routes6) fib->UpsertRoute(r);
  fib->Commit();
  const double fib_v6 = Secs(t);
  const double fib_mem = RssMb() - rss0, fib_peak = PeakMb() - rss0;

  // Incremental updates: a route moves to another gateway, then back; each
  // change is committed on its own (the daemon's worst case).
  std::mt19937_64 rng(1);
  std::vector<double> fib_lat;
  std::vector<size_t> fib_bytes;
  std::vector<size_t> picks;
  for (int i = 0; i < 20000; ++i) picks.push_back(rng() % v4.size());
  for (size_t i : picks) {
    Route r = routes4[i];
    r.paths = {gateways[(v4[i].gw + 1) % gateways.size()]};
    if (r.paths[0].gateway->family() != Family::kV4) r.paths = routes4[i].paths;
    t = Clock::now();
    fib->UpsertRoute(r);
    auto d = fib->Commit();
    fib_lat.push_back(Secs(t) * 1e6);
    fib_bytes.push_back(DeltaBytes(d, code_bits));
    fib->UpsertRoute(routes4[i]);
    fib->Commit();
  }
  t = Clock::now();
  for (const auto& r : routes4) fib->DeleteRoute(r.prefix, RouteSource::kStatic);
  fib->Commit();
  const double fib_delete = Secs(t);
  fib.reset();

  // --- rte_fib: memory, updates, deletes --------------------------------------
  auto peer = std::make_unique<RteFibPeer>(static_cast<uint32_t>(v4.size() + 1024));
  if (!peer->ok()) {
    std::fprintf(stderr, "fib_bench: rte_fib_create failed\n");
    return 1;
  }
  for (const auto& r : v4) failures += peer->Add(r.addr, r.len, r.gw + 1u) != 0;
  std::vector<double> rte_lat;
  for (size_t i : picks) {
    t = Clock::now();
    failures += peer->Add(v4[i].addr, v4[i].len, (v4[i].gw + 1u) % gateways.size() + 1) != 0;
    rte_lat.push_back(Secs(t) * 1e6);
    failures += peer->Add(v4[i].addr, v4[i].len, v4[i].gw + 1u) != 0;
  }
  t = Clock::now();
  for (const auto& r : v4) failures += peer->Delete(r.addr, r.len) != 0;
  const double rte_delete = Secs(t);
  if (failures) std::printf("  (rte_fib reported %d failed operations)\n", failures);

  const double n = static_cast<double>(v4.size());
  std::vector<double> bytes_d(fib_bytes.begin(), fib_bytes.end());
  std::printf("\n%-34s %14s %14s %10s\n", "IPv4 full table", "Fib", "rte_fib", "Fib/rte");
  std::printf("%-34s %14.3f %14.3f %10.2f\n", "build time (s, best of 3, incl. image)", fib_build, rte_build, fib_build / rte_build);
  std::printf("%-34s %14.2f %14.2f %10.2f\n", "insert rate (M routes/s)", n / fib_build / 1e6, n / rte_build / 1e6,
              rte_build / fib_build);
  std::printf("%-34s %14.2f %14.2f %10.2f\n", "delete rate (M routes/s)", n / fib_delete / 1e6, n / rte_delete / 1e6,
              rte_delete / fib_delete);
  std::printf("%-34s %14.2f %14.2f %10.2f\n", "update latency p50 (us)", Pct(fib_lat, 0.5), Pct(rte_lat, 0.5),
              Pct(fib_lat, 0.5) / Pct(rte_lat, 0.5));
  std::printf("%-34s %14.2f %14.2f %10.2f\n", "update latency p99 (us)", Pct(fib_lat, 0.99), Pct(rte_lat, 0.99),
              Pct(fib_lat, 0.99) / Pct(rte_lat, 0.99));
  std::printf("%-34s %14.0f %14s\n", "changed bytes per update p50", Pct(bytes_d, 0.5), "-");
  std::printf("%-34s %14.0f %14s\n", "changed bytes per update p99", Pct(bytes_d, 0.99), "-");
  std::printf("%-34s %14zu %14s\n", "bytes written for the full table", full_bytes, "-");
  std::printf("%-34s %14.1f %14.1f %10.2f\n", "memory after build (MB, RSS delta)", fib_mem, rte_mem, fib_mem / rte_mem);
  std::printf("%-34s %14.1f %14.1f %10.2f\n", "peak memory during build (MB)", fib_peak, rte_peak, fib_peak / rte_peak);
  std::printf("\nFib: insert %.3f s + commit %.3f s; IPv6 %zu routes %.3f s; memory (v4+v6) %.1f MB, peak %.1f MB (goal < 100)\n",
              fib_insert, fib_commit, routes6.size(), fib_v6, fib_mem, fib_peak);
  std::printf("add-rate ratio Fib/rte_fib = %.2f (goal >= 1.00)\n", rte_build / fib_build);
  return 0;
}

}  // namespace
}  // namespace fibnic::bench

int main(int argc, char** argv) { return fibnic::bench::Main(argc, argv); }
