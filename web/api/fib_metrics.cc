// GET /metrics: the telemetry's own metrics, then the families computed at
// scrape time — the Fib's counts, the sources' health, the install-latency
// histogram, the readback audit, build info and the device's port counters.
// Every family is one HELP/TYPE block with its series (text format 0.0.4);
// docs/web.md lists them and configs/grafana/fibnic-dashboard.json uses them.
#include <string>
#include <utility>
#include <vector>

#include "web/api/fib_api_impl.h"

namespace fibnic::web {
namespace {

using nlohmann::json;
using Series = std::vector<std::pair<Labels, double>>;

class MetricsText {
 public:
  explicit MetricsText(std::string start) : out_(std::move(start)) {}
  void Family(const std::string& name, const char* type, const std::string& help, const Series& series) {
    if (series.empty()) return;  // no HELP/TYPE without a sample
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& [labels, v] : series) out_ += name + PrometheusLabels(labels) + " " + PrometheusNumber(v) + "\n";
  }
  void Gauge(const std::string& name, const std::string& help, const Series& series) {
    Family(name, "gauge", help, series);
  }
  void Counter(const std::string& name, const std::string& help, const Series& series) {
    Family(name, "counter", help, series);
  }
  void Histogram(const std::string& name, const std::string& help, const LatencyBuckets& h) {
    out_ += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
    uint64_t acc = 0;
    for (size_t i = 0; i < h.counts.size(); ++i) {
      acc += h.counts[i];
      const std::string le = i < h.bounds_s.size() ? PrometheusNumber(h.bounds_s[i]) : "+Inf";
      out_ += name + "_bucket{le=\"" + le + "\"} " + std::to_string(acc) + "\n";
    }
    out_ += name + "_sum " + PrometheusNumber(h.sum_s) + "\n";
    out_ += name + "_count " + std::to_string(h.count) + "\n";
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

double Num(const json& stats, const char* key) {
  const auto it = stats.find(key);
  if (it == stats.end()) return 0;
  if (it->is_boolean()) return it->get<bool>() ? 1 : 0;
  return it->is_number() ? it->get<double>() : 0;
}

// The sources' health as named families, from their stats objects
// (sources/*: kernel, fpm, file, api); only the sources that have a stat get
// its series.
void SourceFamilies(MetricsText& m, const json& sources) {
  Series up, connected, routes, reconnects, replays, swept, overruns, resyncs, errors, refusing;
  for (const auto& [name, stats] : sources.items()) {
    if (name == "pipeline" || name == "error" || !stats.is_object()) continue;
    const Labels l = {{"source", name}};
    // Present in the registry and answering; a failed start stops fibnicd.
    up.push_back({l, 1});
    // The FPM source has a peer (zebra) to lose; the others read the kernel,
    // files or the REST API and are connected while they run.
    connected.push_back({l, stats.contains("connected") ? Num(stats, "connected") : 1});
    if (stats.contains("routes")) routes.push_back({l, Num(stats, "routes")});
    if (name == "fpm") {
      reconnects.push_back({l, Num(stats, "resyncs")});   // connections after the first
      replays.push_back({l, Num(stats, "connections")});  // zebra replays its table on every connection
      resyncs.push_back({l, Num(stats, "resyncs")});
    }
    if (name == "kernel") {
      replays.push_back({l, Num(stats, "resyncs")});  // dumps after the first
      swept.push_back({l, Num(stats, "swept")});
      overruns.push_back({l, Num(stats, "overruns")});
      resyncs.push_back({l, Num(stats, "resyncs")});
      const auto r = stats.find("refusing");
      refusing.push_back({l, r != stats.end() && r->is_string() && !r->get<std::string>().empty() ? 1.0 : 0.0});
    }
    if (stats.contains("errors")) errors.push_back({l, Num(stats, "errors")});
  }
  m.Gauge("fibnic_source_up", "1 for each source fibnicd runs (kernel, fpm, file, api)", up);
  m.Gauge("fibnic_source_connected", "1 while the source has its peer (fpm: zebra connected; others: running)",
          connected);
  m.Gauge("fibnic_source_routes", "Routes the source holds now", routes);
  m.Counter("fibnic_source_reconnects_total", "Peer connections after the first (fpm: zebra reconnected)", reconnects);
  m.Counter("fibnic_source_replays_total",
            "Full-table replays received (fpm: one per zebra connection; kernel: dumps after the first)", replays);
  m.Counter("fibnic_source_stale_swept_total", "Routes removed because a re-dump no longer had them (kernel)", swept);
  m.Counter("fibnic_source_overruns_total", "Event-socket overruns (ENOBUFS): each one costs a resync", overruns);
  m.Counter("fibnic_source_resyncs_total", "Resynchronisations of the source's table", resyncs);
  m.Counter("fibnic_source_errors_total", "Malformed messages and socket errors", errors);
  m.Gauge("fibnic_source_refusing",
          "1 while the kernel source refuses to follow the table (FIBNIC ports split over VRFs, ...): everything punts",
          refusing);
}

void AuditFamilies(MetricsText& m, const AuditReport& a) {
  m.Gauge("fibnic_audit_enabled", "1 if the periodic readback audit runs", {{{}, a.enabled ? 1.0 : 0.0}});
  if (!a.enabled) return;
  m.Gauge("fibnic_audit_interval_seconds", "Configured time between audit passes", {{{}, a.interval_s}});
  m.Gauge("fibnic_audit_repair", "1 if drifted entries are rewritten", {{{}, a.repair ? 1.0 : 0.0}});
  m.Counter("fibnic_audit_runs_total", "Audit passes that compared the whole device", {{{}, double(a.runs)}});
  m.Counter("fibnic_audit_inconclusive_total", "Audit passes a push overlapped (retried)", {{{}, double(a.inconclusive)}});
  m.Counter("fibnic_audit_errors_total", "Audit passes that could not read the device", {{{}, double(a.errors)}});
  m.Gauge("fibnic_audit_drift_entries", "Device entries that differed from what was written, last pass",
          {{{}, double(a.drift_entries)}});
  m.Counter("fibnic_audit_drifted_entries_total", "Differing entries found, over all passes", {{{}, double(a.drifted_total)}});
  m.Counter("fibnic_audit_repairs_total", "Passes that rewrote drifted entries", {{{}, double(a.repairs)}});
  m.Gauge("fibnic_audit_last_run_timestamp_seconds", "Unix time of the last conclusive pass (0: none yet)",
          {{{}, a.last_run_unix}});
}

}  // namespace

StatusOr<HttpReply> FibApi::Impl::GetMetrics(const HttpRequest&) {
  MetricsText m(ctx.telemetry ? ctx.telemetry->PrometheusText() : "");
  ASSIGN_OR_RETURN(std::shared_ptr<const FibSnapshot> snap, view.SnapshotWithCounts());
  const FibCounts& c = *snap->counts;
  Series routes, shadowed;
  for (int f = 0; f < 2; ++f) {
    const std::string family = f == 0 ? "ipv4" : "ipv6";
    for (auto s : {OffloadState::kOffloaded, OffloadState::kPartial, OffloadState::kPunted}) {
      // Shadowed routes punt no traffic: their own series, not "punted".
      const uint64_t n = c.routes[f][static_cast<int>(s)] - (s == OffloadState::kPunted ? c.shadowed[f] : 0);
      routes.push_back({{{"family", family}, {"state", OffloadStateName(s)}}, double(n)});
    }
    routes.push_back({{{"family", family}, {"state", "shadowed"}}, double(c.shadowed[f])});
    shadowed.push_back({{{"family", family}}, double(c.shadowed[f])});
  }
  m.Gauge("fibnic_fib_routes", "Best routes by family and offload state (shadowed: more-specifics answer all their traffic)", routes);
  m.Gauge("fibnic_fib_routes_shadowed",
          "Routes more-specifics cover entirely (none of their traffic punts; not in state=punted)", shadowed);
  m.Gauge("fibnic_fib_route_candidates", "Routes of every source", {{{}, double(c.candidates)}});
  m.Gauge("fibnic_fib_neighbors", "Neighbours known to the Fib", {{{}, double(c.neighbors)}});
  m.Gauge("fibnic_fib_slots_used", "Next-hop codes in use", {{{}, double(c.slots_used)}});
  m.Gauge("fibnic_fib_slots", "Next-hop codes the device has", {{{}, double(view.config().caps.slots())}});
  m.Counter("fibnic_fib_commits_total", "Fib::Commit() calls", {{{}, double(snap->commits)}});
  m.Gauge("fibnic_fib_counts_age_seconds", "Age of the route counts above (they follow every commit within a bound)",
          {{{}, std::chrono::duration<double>(std::chrono::steady_clock::now() - snap->counts_at).count()}});
  if (ctx.sources) {
    const json sources = ctx.sources();
    // Every number (and flag) each source reports, as one family.
    Series stats;
    for (const auto& [source, fields] : sources.items()) {
      for (const auto& [stat, v] : fields.items()) {
        if (v.is_boolean() || v.is_number()) stats.push_back({{{"source", source}, {"stat", stat}}, Num(fields, stat.c_str())});
      }
    }
    m.Gauge("fibnic_source_stat", "What each source reports (/api/v1/status sources), by source and stat", stats);
    SourceFamilies(m, sources);
    if (const auto p = sources.find("pipeline"); p != sources.end() && p->is_object()) {
      m.Counter("fibnic_device_resyncs_total", "Full device Syncs after a failed push", {{{}, Num(*p, "resyncs")}});
    }
  }
  if (ctx.health) {
    const HealthReport h = ctx.health();
    m.Histogram("fibnic_route_install_seconds",
                "Source arrival (update queued) to its batch's push completing, per update", h.install_latency);
    AuditFamilies(m, h.audit);
  }
  m.Gauge("fibnic_build_info", "Build of this fibnicd (value 1)",
          {{{{"version", FIBNIC_VERSION}, {"commit", FIBNIC_COMMIT}, {"cxx", __VERSION__}}, 1}});
  m.Gauge("fibnic_uptime_seconds", "Seconds since the API started",
          {{{}, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()}});
  if (device) {
    auto t = device->Tables();
    if (t.ok()) {
      m.Gauge("fibnic_device_generation", "GENERATION register of the device", {{{}, double(t->header.generation)}});
      Series all, packets, bytes;
      for (size_t p = 0; p < t->port_counters.size(); ++p) {
        const std::string port = std::to_string(p);
        for (int i = 0; i < regs::kPortCounterCount; ++i) {
          const std::string name = regs::kPortCounterNames[i];
          const double v = static_cast<double>(t->port_counters[p][i]);
          all.push_back({{{"port", port}, {"counter", name}}, v});
          if (name.size() > 6 && name.compare(name.size() - 6, 6, "_bytes") == 0) {
            bytes.push_back({{{"port", port}, {"direction", name.substr(0, name.size() - 6)}}, v});
          } else {
            packets.push_back({{{"port", port}, {"counter", name}}, v});
          }
        }
      }
      for (size_t p = 0; p < t->drop_counters.size(); ++p) {
        const double v = static_cast<double>(t->drop_counters[p]);
        all.push_back({{{"port", std::to_string(p)}, {"counter", "drop_route"}}, v});
        packets.push_back({{{"port", std::to_string(p)}, {"counter", "drop_route"}}, v});
      }
      m.Counter("fibnic_device_port_counter_total",
                "PORT_COUNTERS of the device (packets; *_bytes in bytes), and drop_route: DROP_COUNTERS", all);
      m.Counter("fibnic_device_port_packets_total",
                "PORT_COUNTERS packet counters: rx, forwarded, punted, drop_ttl, drop_fifo, tx; drop_route (DROP_COUNTERS: "
                "dropped by a blackhole)", packets);
      m.Counter("fibnic_device_port_bytes_total", "PORT_COUNTERS byte counters, by direction (rx, tx)", bytes);
    }
    m.Gauge("fibnic_device_readable", "1 if the BAR decodes as a FIBNIC v1", {{{}, t.ok() ? 1.0 : 0.0}});
  }
  HttpReply rep;
  rep.content_type = "text/plain; version=0.0.4; charset=utf-8";
  rep.body = m.Take();
  return rep;
}

}  // namespace fibnic::web
