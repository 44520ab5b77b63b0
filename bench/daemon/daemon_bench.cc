// fibnicd end to end, on the running daemon with a file-backed BAR:
//  1. full-table convergence: the shared real table through the file source —
//     from the first route handed to the pipeline to READY=1 (sent once the
//     last word is written), next to the peer measured in the same run: the
//     offline compiler (fibnic-compile) building and writing the same image;
//  2. warm restart on the same table: time to READY and device writes (goal 0);
//  3. fibnicd's resident memory with the table (and its peak);
//  4. single-update latency p50/p99: a static route PUT over the REST API until
//     its /24 is decoded as forwarded from the BAR file (HwLookup, polled),
//     against the configured batch delay — idle, then (same daemon, same run)
//     while wrk hammers GET /api/v1/status and GET /api/v1/sram: no web
//     request may stall a commit, so the two should agree within noise;
//     next to each, fibnicd's own install-latency histogram over the same
//     updates (/metrics fibnic_route_install_seconds, p50/p99 from buckets).
//
// daemon_bench --fibnicd BIN --compile BIN --routes R --neigh N --dir DIR [--updates K] [--wrk BIN]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/http_client.h"
#include "device/fibnic_lookup.h"
#include "tests/fibnicd/daemon_harness.h"

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr const char* kToken = "bench-token-0123456789";

// A /proc/PID/status field in MB ("VmRSS:", "VmHWM:"), 0 if absent.
double StatusMb(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size())) / 1024.0;  // kB
  }
  return 0;
}

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

std::string Arg(int argc, char** argv, const std::string& name, const std::string& def = "") {
  for (int i = 1; i + 1 < argc; ++i) {
    if (argv[i] == name) return argv[i + 1];
  }
  if (def.empty()) {
    std::fprintf(stderr, "daemon_bench: missing %s\n", name.c_str());
    std::exit(2);
  }
  return def;
}

// "HH:MM:SS.mmm" of the first log line containing needle, as ms of the day.
double LogTimeMs(const std::string& log, const std::string& needle) {
  std::istringstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(needle) == std::string::npos) continue;
    int h = 0, m = 0, s = 0, ms = 0;
    if (std::sscanf(line.c_str(), "%d:%d:%d.%d", &h, &m, &s, &ms) == 4) return ((h * 60 + m) * 60 + s) * 1000.0 + ms;
  }
  return -1;
}

std::string Slurp(const std::string& path) {
  auto v = testing::ReadFile(path);
  return std::string(v.begin(), v.end());
}

struct Run {
  double start_to_ready_ms = 0;
  double first_route_to_ready_ms = 0;
  uint16_t port = 0;
};

// Starts fibnicd; returns once READY=1 arrived (or exits the bench).
Run StartDaemon(testing::Child** out, testing::NotifySocket& notify, const std::string& bin, const std::string& cfg,
                const std::string& log_path) {
  std::vector<std::string> log;
  auto t0 = Clock::now();
  *out = new testing::Child({"/bin/sh", "-c", "exec " + bin + " --config " + cfg + " 2>" + log_path},
                            {"NOTIFY_SOCKET=" + notify.path()});
  if (!notify.WaitFor("READY=1", 600s, &log)) {
    std::fprintf(stderr, "daemon_bench: fibnicd never became ready; log:\n%s\n", Slurp(log_path).c_str());
    std::exit(1);
  }
  Run r;
  r.start_to_ready_ms = Ms(Clock::now() - t0);
  std::string text = Slurp(log_path);
  double first = LogTimeMs(text, "file source:");
  double ready = LogTimeMs(text, "ready:");
  r.first_route_to_ready_ms = ready - first;
  std::smatch m;
  if (std::regex_search(text, m, std::regex("REST API at http://127\\.0\\.0\\.1:(\\d+)/"))) r.port = std::stoi(m[1]);
  return r;
}

void Stop(testing::Child* c) {
  c->Signal(SIGTERM);
  c->Wait(30s);
  delete c;
}

// A web client hammering one URL until stopped (wrk, two connections).
struct Hammer {
  Hammer(const std::string& wrk, uint16_t port, const std::string& path, const std::string& out)
      : out_(out),
        child_({"/bin/sh", "-c",
                "exec " + wrk + " -t1 -c2 -d600s http://127.0.0.1:" + std::to_string(port) + path + " >" + out + " 2>&1"},
               {}) {}
  // Stops wrk (SIGINT: it prints its summary) and returns its requests/s.
  double Stop() {
    child_.Signal(SIGINT);
    child_.Wait(10s);
    std::smatch m;
    std::string text = Slurp(out_);
    if (std::regex_search(text, m, std::regex("Requests/sec:\\s+([0-9.]+)"))) return std::stod(m[1]);
    std::fprintf(stderr, "daemon_bench: wrk said:\n%s\n", text.c_str());
    return 0;
  }
  std::string out_;
  testing::Child child_;
};

// fibnicd's own route-install latency histogram (GET /metrics): cumulative
// count per upper bound in seconds (+Inf as infinity).
std::map<double, double> InstallBuckets(uint16_t port) {
  std::map<double, double> out;
  HttpRequestSpec get;
  get.server = Endpoint{IpAddr::V4(0x7F000001), port};
  get.target = "/metrics";
  auto r = HttpCall(get);
  if (!r.ok() || r->status != 200) return out;
  static const std::regex kBucket("^fibnic_route_install_seconds_bucket\\{le=\"([^\"]+)\"\\} ([0-9.e+]+)$");
  std::istringstream in(r->body);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_match(line, m, kBucket)) continue;
    out[m[1] == "+Inf" ? INFINITY : std::stod(m[1])] = std::stod(m[2]);
  }
  return out;
}

// The q-quantile in ms of what was observed between two scrapes, as
// Prometheus's histogram_quantile computes it: linear within the bucket it
// falls in (the largest finite bound when it falls above them all).
// Returns -1 when nothing was observed.
double HistogramQuantileMs(const std::map<double, double>& before, const std::map<double, double>& after, double q,
                           double* count) {
  std::vector<std::pair<double, double>> b;  // (le, cumulative count in the round)
  for (const auto& [le, n] : after) b.push_back({le, n - (before.count(le) ? before.at(le) : 0)});
  *count = b.empty() ? 0 : b.back().second;
  if (*count <= 0) return -1;
  const double rank = q * *count;
  double lower = 0, below = 0;
  for (const auto& [le, n] : b) {
    if (n >= rank) {
      if (std::isinf(le)) return lower * 1e3;
      return (lower + (le - lower) * (rank - below) / std::max(1.0, n - below)) * 1e3;
    }
    lower = le;
    below = n;
  }
  return lower * 1e3;
}

double Percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
}

int Main(int argc, char** argv) {
  std::string fibnicd = Arg(argc, argv, "--fibnicd");
  std::string compile = Arg(argc, argv, "--compile");
  std::string routes = Arg(argc, argv, "--routes");
  std::string neigh = Arg(argc, argv, "--neigh");
  std::string dir = Arg(argc, argv, "--dir");
  int updates = std::stoi(Arg(argc, argv, "--updates", "200"));
  std::string wrk = Arg(argc, argv, "--wrk", "none");
  if (wrk == "none") wrk.clear();

  // Peer: the offline compiler on the same table, same machine, same run.
  auto c0 = Clock::now();
  std::string cmd = compile + " --routes " + routes + " --neighbors " + neigh + " --out " + dir +
                    "/offline.img --report " + dir + "/offline.json >/dev/null";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "daemon_bench: %s failed\n", cmd.c_str());
    return 1;
  }
  double offline_ms = Ms(Clock::now() - c0);

  std::string bar = dir + "/bar0.img";
  std::remove(bar.c_str());
  std::string cfg = dir + "/fibnicd.yaml";
  testing::WriteFile(cfg, "device: {backend: file, path: " + bar +
                              "}\n"
                              "sources:\n"
                              "  kernel: {enabled: false}\n"
                              "  file: {routes: " + routes + ", neighbors: " + neigh +
                              "}\n"
                              "web: {listen: 127.0.0.1:0, token: " + kToken + "}\n");
  testing::NotifySocket notify(dir + "/notify");

  testing::Child* d = nullptr;
  Run cold = StartDaemon(&d, notify, fibnicd, cfg, dir + "/cold.log");
  Stop(d);
  std::vector<char> before = testing::ReadFile(bar);
  Run warm = StartDaemon(&d, notify, fibnicd, cfg, dir + "/warm.log");
  bool unchanged = testing::ReadFile(bar) == before;

  // Single updates: /24s in 100.64.0.0/10 (shared address space, not in the
  // global table) alternately via two gateways of the neighbour file.
  int fd = open(bar.c_str(), O_RDONLY);
  struct stat st;
  fstat(fd, &st);
  auto* map = static_cast<const uint8_t*>(mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0));
  // One round of single updates; base keeps the rounds' /24s apart.
  // lat: PUT sent → forwarded in the BAR; after: PUT answered → forwarded
  // (fibnicd answers once the route is queued: the pipeline's part alone).
  // Each round's part of fibnicd's install-latency histogram: (before, after).
  using Buckets = std::map<double, double>;
  std::vector<std::pair<Buckets, Buckets>> hist;
  auto round = [&](uint32_t base, std::vector<double>* lat, std::vector<double>* after, int* timeouts) -> bool {
    hist.push_back({InstallBuckets(warm.port), {}});
    for (int i = 0; i < updates; ++i) {
      uint32_t net = base + (static_cast<uint32_t>(i) << 8);
      IpAddr dst = IpAddr::V4(net + 7);
      int port = i % 2;
      HttpRequestSpec put;
      put.server = Endpoint{IpAddr::V4(0x7F000001), warm.port};
      put.method = "PUT";
      put.target = "/api/v1/routes/static/" + IpAddr::V4(net).ToString() + "/24";
      put.token = kToken;
      put.body = std::string("{\"paths\":[{\"gateway\":\"") + (port == 0 ? "10.0.0.1" : "10.1.0.1") +
                 "\",\"port\":" + std::to_string(port) + "}]}";
      auto t0 = Clock::now();
      auto r = HttpCall(put);
      const auto answered = Clock::now();
      if (!r.ok() || r->status >= 300) {
        std::fprintf(stderr, "daemon_bench: PUT failed: %s\n", r.ok() ? r->body.c_str() : r.status().ToString().c_str());
        return false;
      }
      bool seen = false;
      while (Clock::now() - t0 < 2s) {
        HwDecision h = HwLookup(map, static_cast<size_t>(st.st_size), dst);
        if (h.forward && h.port == port) {
          seen = true;
          break;
        }
        std::this_thread::sleep_for(20us);
      }
      if (seen) {
        const auto seen_at = Clock::now();
        lat->push_back(Ms(seen_at - t0));
        after->push_back(Ms(seen_at - answered));
      } else {
        ++*timeouts;
      }
    }
    hist.back().second = InstallBuckets(warm.port);
    return true;
  };
  std::vector<double> lat, lat_load, after, after_load;
  int timeouts = 0, timeouts_load = 0;
  if (!round(0x64400000u, &lat, &after, &timeouts)) return 1;
  double status_rps = 0, sram_rps = 0;
  if (!wrk.empty()) {
    Hammer status(wrk, warm.port, "/api/v1/status", dir + "/wrk-status.txt");
    Hammer sram(wrk, warm.port, "/api/v1/sram", dir + "/wrk-sram.txt");
    std::this_thread::sleep_for(1s);  // let both reach their pace
    bool ok = round(0x64600000u, &lat_load, &after_load, &timeouts_load);
    status_rps = status.Stop();
    sram_rps = sram.Stop();
    if (!ok) return 1;
  }
  const double rss_mb = StatusMb(d->pid(), "VmRSS:"), peak_mb = StatusMb(d->pid(), "VmHWM:");
  Stop(d);

  std::printf("full table through fibnicd (%s)\n", routes.c_str());
  std::printf("  cold start → READY:                 %9.1f ms\n", cold.start_to_ready_ms);
  std::printf("  first route in → last word written: %9.1f ms\n", cold.first_route_to_ready_ms);
  std::printf("  peer: fibnic-compile, same table:   %9.1f ms   ratio daemon/offline %.2f\n", offline_ms,
              cold.first_route_to_ready_ms / offline_ms);
  std::printf("  warm restart → READY:               %9.1f ms   BAR unchanged: %s\n", warm.start_to_ready_ms,
              unchanged ? "yes" : "NO");
  std::printf("  fibnicd resident after the updates:  %9.1f MB   peak %.1f MB\n", rss_mb, peak_mb);
  std::printf("single update (REST PUT → forwarded in the BAR), batch_delay 1 ms\n");
  auto line = [](const char* what, const std::vector<double>& l, int timeouts) {
    if (l.empty()) return;
    std::printf("  %-34s %4zu updates  p50 %7.3f ms  p99 %7.3f ms  max %7.3f ms  timeouts %d\n", what, l.size(),
                Percentile(l, 0.5), Percentile(l, 0.99), *std::max_element(l.begin(), l.end()), timeouts);
  };
  // fibnicd's own histogram (update queued → its batch's push done): the
  // pipeline's part alone, what /metrics gives an operator; bucket bounds, so
  // interpolated as Prometheus's histogram_quantile does.
  auto hline = [&](const char* what, size_t i) {
    if (i >= hist.size()) return;
    double n = 0;
    const double p50 = HistogramQuantileMs(hist[i].first, hist[i].second, 0.5, &n);
    const double p99 = HistogramQuantileMs(hist[i].first, hist[i].second, 0.99, &n);
    std::printf("  %-34s %4.0f updates  p50 %7.3f ms  p99 %7.3f ms  (fibnic_route_install_seconds)\n", what, n, p50, p99);
  };
  line("idle: PUT sent → in the BAR", lat, timeouts);
  line("idle: PUT answered → in the BAR", after, 0);
  hline("idle: queued → pushed (histogram)", 0);
  if (!wrk.empty()) {
    std::printf("  while wrk hammers /api/v1/status + /api/v1/sram:\n");
    line("loaded: PUT sent → in the BAR", lat_load, timeouts_load);
    line("loaded: PUT answered → in the BAR", after_load, 0);
    hline("loaded: queued → pushed (histogram)", 1);
    std::printf("  (wrk, 2 connections each: status %.0f req/s, sram %.0f req/s)\n", status_rps, sram_rps);
    if (!after.empty() && !after_load.empty()) {
      std::printf("  ratio loaded/idle, PUT answered → in the BAR: p50 %.2f  p99 %.2f\n",
                  Percentile(after_load, 0.5) / Percentile(after, 0.5), Percentile(after_load, 0.99) / Percentile(after, 0.99));
    }
  }
  return unchanged && timeouts == 0 && timeouts_load == 0 ? 0 : 1;
}

}  // namespace
}  // namespace fibnic

int main(int argc, char** argv) { return fibnic::Main(argc, argv); }
