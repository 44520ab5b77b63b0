// `fibnicctl status`: who and where first (version, uptime, device,
// generation), then what an operator checks in order: are the routes on the
// device (per family), is there room (slots), are the sources up, is the
// pipeline keeping up.
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "tools/ctl_table.h"
#include "tools/ctl_views.h"

namespace fibnic {
namespace {

using nlohmann::json;

std::string Str(const json& v) { return v.is_string() && !v.get<std::string>().empty() ? v.get<std::string>() : "-"; }

// "2024-03-01T12:00:00Z" → Unix seconds; -1 when it is not that form.
double ParseIsoSeconds(const json& v) {
  if (!v.is_string()) return -1;
  std::tm tm{};
  const std::string s = v.get<std::string>();
  const char* end = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') return -1;
  return static_cast<double>(timegm(&tm));
}

// What the events say about each source and the pipeline. Ages are taken
// against the daemon's clock (its start plus its uptime), so a fibnicctl on
// another host with another clock still prints them right.
struct EventAges {
  std::map<std::string, double> source_ms;  // source name → newest event's unix_ms
  double push_error_ms = -1;                // newest push error
  bool complete = false;                    // every event since the start is in the answer
  double oldest_ms = -1;
};

EventAges ReadEvents(const json& events) {
  EventAges a;
  const json& list = At(events, "events");
  if (!list.is_array()) return a;
  const json& last = At(events, "last_seq");
  a.complete = last.is_number_unsigned() && last.get<uint64_t>() == list.size();
  for (const json& e : list) {
    const json& ms = At(e, "unix_ms");
    const json& cat = At(e, "category");
    const json& msg = At(e, "message");
    if (!ms.is_number() || !cat.is_string()) continue;
    const double t = ms.get<double>();
    if (a.oldest_ms < 0 || t < a.oldest_ms) a.oldest_ms = t;
    if (cat == "push") a.push_error_ms = std::max(a.push_error_ms, t);
    // Sources log as "NAME: what happened".
    if (cat == "source" && msg.is_string()) {
      const std::string m = msg.get<std::string>();
      const size_t colon = m.find(':');
      if (colon != std::string::npos) a.source_ms[m.substr(0, colon)] = std::max(a.source_ms[m.substr(0, colon)], t);
    }
  }
  return a;
}

std::string HeaderLine(const json& s) {
  std::string l = "fibnicd " + Str(At(s, "version"));
  const json& up = At(s, "uptime_s");
  l += ", up " + (up.is_number() ? FormatAge(up.get<double>()) : std::string("-"));
  const json& dev = At(s, "device");
  if (At(dev, "present") == false) {
    l += "; no device";
  } else {
    l += "; device " + Str(At(dev, "name"));
    if (At(dev, "version").is_string()) l += ", FIBNIC " + At(dev, "version").get<std::string>();
    l += ", generation " + FormatCount(At(dev, "generation"));
  }
  l += "; " + FormatCount(At(s, "commits")) + " commits\n";
  if (At(dev, "error").is_string()) l += "device error: " + At(dev, "error").get<std::string>() + "\n";
  return l;
}

std::string OnOff(const json& v) { return v.is_boolean() ? (v.get<bool>() ? "on" : "off") : "-"; }

std::string FamilyTable(const json& s) {
  const json& routes = At(s, "routes");
  std::vector<std::vector<std::string>> rows;
  if (routes.is_object()) {
    for (auto it = routes.begin(); it != routes.end(); ++it) {
      const json& f = it.value();
      rows.push_back({it.key(), OnOff(At(s, "device.control." + it.key())), FormatCount(At(f, "total")),
                      FormatCount(At(f, "offloaded")), FormatCount(At(f, "partial")), FormatCount(At(f, "punted")),
                      FormatCount(At(f, "shadowed"))});
    }
  }
  if (rows.empty()) return "routes: -\n";
  std::string out = RenderGrid({"family", "lookup", "total", "offloaded", "partial", "punted", "shadowed"}, rows,
                               {false, false, true, true, true, true, true});
  // The counts are recomputed after commits, paced by what a count costs: say
  // so when the table is behind the device.
  const json& commits = At(s, "commits");
  const json& counted = At(s, "counts_commits");
  if (commits.is_number_unsigned() && counted.is_number_unsigned() && commits != counted) {
    const json& age = At(s, "counts_age_s");
    out += "(counted " + FormatCount(json(commits.get<uint64_t>() - counted.get<uint64_t>())) + " commits ago, " +
           (age.is_number() ? FormatAge(age.get<double>()) : std::string("-")) + " old)\n";
  }
  return out;
}

std::string CapsText(const json& c) {
  if (!c.is_object()) return "-";
  const json& sram = At(c, "sram_addr_bits");
  std::string t = FormatCount(At(c, "code_bits")) + "-bit codes, " + FormatCount(At(c, "slots")) + " slots, " +
                  FormatCount(At(c, "ports")) + " ports, SRAM " +
                  (sram.is_number_unsigned() ? "2^" + FormatCount(sram) : std::string("-")) + " words, NEXTHOP " +
                  FormatCount(At(c, "nexthop_entries")) + ", TCAM6 " + FormatCount(At(c, "tcam_entries")) +
                  ", NEIGH " + FormatCount(At(c, "neigh_entries"));
  const json& drop = At(c, "drop");
  if (drop.is_boolean()) t += drop.get<bool>() ? ", drops in the card" : ", drops punted";
  return t;
}

std::string Summary(const json& s) {
  std::vector<std::pair<std::string, std::string>> kv;
  const json& used = At(s, "slots.used");
  const json& total = At(s, "slots.total");
  std::string slots = FormatCount(used) + "/" + FormatCount(total) + " used";
  if (At(s, "caps.code_bits").is_number()) slots += " (" + FormatCount(At(s, "caps.code_bits")) + "-bit codes)";
  kv.emplace_back("slots", slots);
  kv.emplace_back("neighbors", FormatCount(At(s, "neighbors")));
  kv.emplace_back("candidates", FormatCount(At(s, "candidates")) + " routes from every source, best or not");
  // The capabilities fibnicd compiles for; the device's header only when it
  // says something else.
  kv.emplace_back("caps", CapsText(At(s, "caps")));
  const json& dev_caps = At(s, "device.caps");
  if (dev_caps.is_object() && dev_caps != At(s, "caps")) kv.emplace_back("device caps", CapsText(dev_caps));
  const json& r = At(s, "rates");
  kv.emplace_back("rates", FormatRate(At(r, "routes_per_s")) + " routes/s, " + FormatBytes(At(r, "bar_bytes_per_s")) +
                               "/s to the device, " + FormatRate(At(r, "commits_per_s")) + " commits/s");
  const json& verify = At(s, "verify");
  if (verify.is_object()) {
    kv.emplace_back("verify", At(verify, "in_sync") == true
                                  ? "device in sync"
                                  : FormatCount(At(verify, "drift_total")) + " entries differ from what was written");
  }
  size_t w = 0;
  for (const auto& [k, v] : kv) w = std::max(w, k.size());
  std::string out;
  for (const auto& [k, v] : kv) out += k + std::string(w + 2 - k.size(), ' ') + v + "\n";
  return out;
}

std::string SourceNote(const json& src) {
  std::vector<std::string> notes;
  if (At(src, "refusing").is_string()) notes.push_back(At(src, "refusing").get<std::string>());
  if (At(src, "connected") == true && At(src, "peer").is_string()) notes.push_back("zebra " + Str(At(src, "peer")));
  if (At(src, "loads").is_number()) notes.push_back("loads: " + FormatCount(At(src, "loads")));
  if (At(src, "last_error").is_string() && !At(src, "last_error").get<std::string>().empty()) {
    notes.push_back("last error: " + At(src, "last_error").get<std::string>());
  }
  std::string t;
  for (const auto& n : notes) t += (t.empty() ? "" : "; ") + n;
  return t.empty() ? "-" : t;
}

std::string SourcesTable(const json& s, const EventAges& ev, double now_ms) {
  const json& sources = At(s, "sources");
  std::string out;
  if (At(sources, "error").is_string()) out += "sources: " + At(sources, "error").get<std::string>() + "\n";
  std::vector<std::vector<std::string>> rows;
  if (sources.is_object()) {
    for (auto it = sources.begin(); it != sources.end(); ++it) {
      if (it.key() == "pipeline" || !it.value().is_object()) continue;
      // SINCE: the source's last event; none while every event since the start
      // is at hand means it has been so since the start.
      std::string since = "-";
      if (auto e = ev.source_ms.find(it.key()); e != ev.source_ms.end() && now_ms >= 0) {
        since = FormatAge((now_ms - e->second) / 1000);
      } else if (ev.complete && At(s, "uptime_s").is_number()) {
        since = FormatAge(At(s, "uptime_s").get<double>());
      } else if (ev.oldest_ms >= 0 && now_ms >= 0) {
        since = ">" + FormatAge((now_ms - ev.oldest_ms) / 1000);
      }
      rows.push_back({it.key(), Str(At(it.value(), "state")), since, FormatCount(At(it.value(), "routes")),
                      FormatCount(At(it.value(), "errors")), SourceNote(it.value())});
    }
  }
  if (rows.empty()) return out;
  return out + RenderGrid({"source", "state", "since", "routes", "errors", "note"}, rows,
                          {false, false, false, true, true, false});
}

std::string Ms(const json& v) {
  if (!v.is_number()) return "-";
  const double d = v.get<double>();
  // A push of a few words takes microseconds: not "0.0 ms", which reads as none.
  if (d > 0 && d < 0.05) return "<0.1 ms";
  char buf[32];
  std::snprintf(buf, sizeof buf, d < 10 ? "%.1f ms" : "%.0f ms", d);
  return buf;
}

std::string PipelineLines(const json& s, const EventAges& ev, double now_ms) {
  const json& p = At(s, "sources.pipeline");
  if (!p.is_object()) return "";
  std::string out = "pipeline  queue " + FormatCount(At(p, "queue_depth")) + " (max " +
                    FormatCount(At(p, "queue_depth_max")) + "), " + FormatCount(At(p, "batches")) +
                    " batches; the last of " + FormatCount(At(p, "batch_size_last")) + " pushed in " +
                    Ms(At(p, "push_ms_last")) + ", " + Ms(At(p, "latency_ms_last")) + " from update to device\n";
  out += "          " + FormatCount(At(p, "push_errors")) + " push errors, " + FormatCount(At(p, "resyncs")) +
         " resyncs";
  const json& err = At(p, "last_error");
  if (err.is_string() && !err.get<std::string>().empty()) {
    out += "; last error";
    if (ev.push_error_ms >= 0 && now_ms >= 0) out += " " + FormatAge((now_ms - ev.push_error_ms) / 1000) + " ago";
    out += ": " + err.get<std::string>();
  }
  return out + "\n";
}

}  // namespace

std::string RenderStatus(const json& s, const json& events) {
  const EventAges ev = ReadEvents(events);
  double now_ms = -1;
  const double started = ParseIsoSeconds(At(s, "started_at"));
  if (started >= 0 && At(s, "uptime_s").is_number()) now_ms = (started + At(s, "uptime_s").get<double>()) * 1000;
  std::string out = HeaderLine(s) + "\n" + FamilyTable(s) + "\n" + Summary(s);
  const std::string sources = SourcesTable(s, ev, now_ms);
  if (!sources.empty()) out += "\n" + sources;
  const std::string pipeline = PipelineLines(s, ev, now_ms);
  if (!pipeline.empty()) out += "\n" + pipeline;
  return out;
}

}  // namespace fibnic
