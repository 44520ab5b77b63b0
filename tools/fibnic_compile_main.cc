// fibnic-compile: the offline compiler. Reads a route file (and neighbours),
// compiles them exactly as fibnicd would, and writes the whole BAR0 image plus
// a JSON report of what was offloaded and why the rest punts.
//
//   fibnic-compile --routes FILE [--neighbors FILE] [--code-bits 2|4]
//                  [--ecmp first|punt] --out BAR.img [--report FILE.json]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "fib/fib.h"
#include "tools/route_file_loader.h"
#include "device/fibnic_image_codec.h"

namespace fibnic {
namespace {

struct Args {
  std::string routes, neighbors, out, report;
  int code_bits = 2;
  EcmpPolicy ecmp = EcmpPolicy::kFirst;
};

constexpr const char* kUsage =
    "usage: fibnic-compile --routes FILE [--neighbors FILE] [--code-bits 2|4] [--ecmp first|punt]\n"
    "                      --out BAR.img [--report FILE.json]\n";

StatusOr<Args> ParseArgs(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") return InvalidArgument("help");
    if (i + 1 >= argc) return InvalidArgument("option " + flag + " needs a value");
    const std::string v = argv[++i];
    if (flag == "--routes") {
      a.routes = v;
    } else if (flag == "--neighbors") {
      a.neighbors = v;
    } else if (flag == "--out") {
      a.out = v;
    } else if (flag == "--report") {
      a.report = v;
    } else if (flag == "--code-bits") {
      if (v != "2" && v != "4") return InvalidArgument("--code-bits must be 2 or 4, not '" + v + "'");
      a.code_bits = v == "4" ? 4 : 2;
    } else if (flag == "--ecmp") {
      if (v != "first" && v != "punt") return InvalidArgument("--ecmp must be first or punt, not '" + v + "'");
      a.ecmp = v == "punt" ? EcmpPolicy::kPunt : EcmpPolicy::kFirst;
    } else {
      return InvalidArgument("unknown option " + flag);
    }
  }
  if (a.routes.empty()) return InvalidArgument("--routes is required");
  if (a.out.empty()) return InvalidArgument("--out is required");
  return a;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

long PeakRssKb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

Status WriteFile(const std::string& path, const void* data, size_t len) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError("cannot create " + path);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(len));
  out.close();
  if (!out) return IoError("write to " + path + " failed");
  return OkStatus();
}

Status Run(const Args& a) {
  using Clock = std::chrono::steady_clock;
  FibConfig cfg;
  cfg.caps = a.code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  cfg.ecmp = a.ecmp;
  Fib fib(cfg);
  nlohmann::ordered_json report;
  RouteFileStats stats;

  auto t = Clock::now();
  RETURN_IF_ERROR(LoadRouteFileInto(fib, a.routes, &stats));
  report["time_s"]["load_routes"] = Seconds(t);
  t = Clock::now();
  if (!a.neighbors.empty()) RETURN_IF_ERROR(LoadNeighborFileInto(fib, a.neighbors, &stats));
  report["time_s"]["load_neighbors"] = Seconds(t);
  t = Clock::now();
  fib.Commit();
  report["time_s"]["compile"] = Seconds(t);

  t = Clock::now();
  const auto bar = EncodeBar(fib.image());
  RETURN_IF_ERROR(WriteFile(a.out, bar.data(), bar.size()));
  report["time_s"]["write_image"] = Seconds(t);

  t = Clock::now();
  report["input"] = {{"routes_file", a.routes},
                     {"neighbors_file", a.neighbors},
                     {"route_lines", {{"ipv4", stats.lines[0]}, {"ipv6", stats.lines[1]}}},
                     {"ecmp_lines", stats.ecmp_lines},
                     {"neighbors", stats.neighbors}};
  report["device"] = {{"code_bits", a.code_bits},
                      {"slots", cfg.caps.slots()},
                      {"ecmp", a.ecmp == EcmpPolicy::kFirst ? "first" : "punt"},
                      {"image", a.out},
                      {"image_bytes", bar.size()}};
  std::map<std::string, uint64_t> states[2], reasons[2];
  uint64_t v4_24s = 0, v4_24s_punted = 0;
  for (Family f : {Family::kV4, Family::kV6}) {
    const int k = f == Family::kV4 ? 0 : 1;
    fib.ForEachRoute(f, [&](const RouteInfo& r) {
      ++states[k][OffloadStateName(r.state)];
      if (r.reason != PuntReason::kNone) ++reasons[k][PuntReasonName(r.reason)];
      v4_24s += r.slash24_total;
      v4_24s_punted += r.slash24_punted;
      return true;
    });
    auto& fam = report["routes"][FamilyName(f)];
    fam["best_routes"] = 0;
    for (const auto& [name, n] : states[k]) fam["best_routes"] = fam["best_routes"].get<uint64_t>() + n;
    fam["by_state"] = states[k];
    fam["by_reason"] = reasons[k];
  }
  report["routes"]["ipv4"]["slash24s"] = {{"covered", v4_24s}, {"punted", v4_24s_punted}};
  uint32_t tcam_used = 0;
  for (const auto& e : fib.image().tcam) tcam_used += e.valid();
  report["routes"]["ipv6"]["tcam_entries"] = {{"used", tcam_used}, {"capacity", cfg.caps.tcam_entries}};
  nlohmann::ordered_json slots = nlohmann::ordered_json::array();
  for (const auto& s : fib.Slots()) {
    nlohmann::ordered_json next_hops = nlohmann::ordered_json::array();
    for (const NextHop& nh : s.next_hops) next_hops.push_back(nh.ToString());
    slots.push_back({{"code", s.code},
                     {"next_hop", s.owner ? s.owner->ToString() : "free"},
                     {"adjacency", s.adjacency ? s.adjacency->ToString() : "free"},
                     {"next_hops", std::move(next_hops)},
                     {"mac", s.entry.dst_mac.ToString()},
                     {"valid", s.entry.valid()},
                     {"weight", s.weight}});
  }
  report["slots"] = slots;
  report["time_s"]["report"] = Seconds(t);
  report["peak_rss_mb"] = static_cast<double>(PeakRssKb()) / 1024.0;

  if (!a.report.empty()) {
    const std::string text = report.dump(2) + "\n";
    RETURN_IF_ERROR(WriteFile(a.report, text.data(), text.size()));
  }
  std::printf("fibnic-compile: %lu IPv4 + %lu IPv6 routes, %lu neighbours -> %s (%zu bytes, %d-bit codes)\n",
              static_cast<unsigned long>(stats.lines[0]), static_cast<unsigned long>(stats.lines[1]),
              static_cast<unsigned long>(stats.neighbors), a.out.c_str(), bar.size(), a.code_bits);
  for (Family f : {Family::kV4, Family::kV6}) {
    const int k = f == Family::kV4 ? 0 : 1;
    std::printf("  %s:", FamilyName(f));
    for (const auto& [name, n] : states[k]) std::printf(" %s %lu", name.c_str(), static_cast<unsigned long>(n));
    if (!reasons[k].empty()) std::printf("  (punt reasons:");
    for (const auto& [name, n] : reasons[k]) std::printf(" %s %lu", name.c_str(), static_cast<unsigned long>(n));
    std::printf("%s\n", reasons[k].empty() ? "" : ")");
  }
  std::printf("  IPv4 /24s covered %lu, punted %lu; IPv6 TCAM entries %u of %u\n", static_cast<unsigned long>(v4_24s),
              static_cast<unsigned long>(v4_24s_punted), tcam_used, unsigned{cfg.caps.tcam_entries});
  for (const auto& s : fib.Slots()) {
    std::string nhs;
    for (const NextHop& nh : s.next_hops) nhs += (nhs.empty() ? " (" : ", ") + nh.ToString();
    if (!nhs.empty()) nhs += ")";
    std::printf("  code %d: %s%s%s weight %lu\n", s.code, s.adjacency ? s.adjacency->ToString().c_str() : "free",
                nhs.c_str(), s.adjacency && !s.entry.valid() ? " (not valid)" : "", static_cast<unsigned long>(s.weight));
  }
  std::printf("  time: load %.3f s, compile %.3f s; peak RSS %.1f MB\n",
              report["time_s"]["load_routes"].get<double>(), report["time_s"]["compile"].get<double>(),
              report["peak_rss_mb"].get<double>());
  return OkStatus();
}

}  // namespace
}  // namespace fibnic

int main(int argc, char** argv) {
  auto args = fibnic::ParseArgs(argc, argv);
  if (!args.ok()) {
    if (args.status().message() != "help") std::fprintf(stderr, "fibnic-compile: %s\n", args.status().message().c_str());
    std::fputs(fibnic::kUsage, stderr);
    return 2;
  }
  const fibnic::Status st = fibnic::Run(*args);
  if (!st.ok()) {
    std::fprintf(stderr, "fibnic-compile: %s\n", st.ToString().c_str());
    return 1;
  }
  return 0;
}
