// fibnicd's health as an operator's Prometheus sees it, on the real daemon
// (file BAR, kernel + FPM + file + api sources, no root): /metrics read by a
// strict text-format reader, the families the docs promise present with a
// series per source, the install-latency histogram counting a route put over
// the API, and every metric the Grafana dashboard queries exported. The
// readback audit: a BAR word changed behind fibnicd's back shows as drift (a
// gauge and an event naming the entry); with repair on, fibnicd puts the word
// back by itself.
#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "common/http_client.h"
#include "device/fibnic_regs.h"
#include "tests/fibnicd/daemon_harness.h"
#include "tests/fibnicd/prometheus_text.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr const char* kToken = "health-test-token-0123";

std::string Slurp(const std::string& path) {
  auto v = testing::ReadFile(path);
  return std::string(v.begin(), v.end());
}

class Daemon {
 public:
  Daemon(const std::string& name, const std::string& audit) : dir_(::testing::TempDir() + "/" + name) {
    std::system(("rm -rf " + dir_ + " && mkdir -p " + dir_).c_str());
    testing::WriteFile(dir_ + "/routes.txt", "198.51.100.0/24 192.0.2.1 0\n");
    testing::WriteFile(dir_ + "/neigh.txt", "192.0.2.1 52:54:00:00:00:01 0\n");
    testing::WriteFile(dir_ + "/fibnicd.yaml", "device: {backend: file, path: " + bar() +
                                                   "}\n"
                                                   "sources:\n"
                                                   "  kernel: {enabled: true}\n"
                                                   "  fpm: {enabled: true, listen: 127.0.0.1:0}\n"
                                                   "  file: {routes: " + dir_ + "/routes.txt, neighbors: " + dir_ +
                                                   "/neigh.txt}\n"
                                                   "web: {listen: 127.0.0.1:0, token: " + kToken + "}\n" + audit);
    notify_ = std::make_unique<testing::NotifySocket>(dir_ + "/notify");
    child_ = testing::StartDaemon(FIBNICD_BIN, dir_ + "/fibnicd.yaml", dir_ + "/log", {"NOTIFY_SOCKET=" + notify_->path()});
    std::vector<std::string> log;
    ready_ = notify_->WaitFor("READY=1", 60s, &log);
    std::smatch m;
    const std::string text = Slurp(dir_ + "/log");
    if (std::regex_search(text, m, std::regex("REST API at http://127\\.0\\.0\\.1:(\\d+)/"))) port_ = std::stoi(m[1]);
  }
  ~Daemon() {
    child_->Signal(SIGTERM);
    child_->Wait(20s, [this] { notify_->Drain(0ms); });
  }
  bool ready() const { return ready_ && port_ != 0; }
  std::string bar() const { return dir_ + "/bar0.img"; }
  std::string log() const { return Slurp(dir_ + "/log"); }

  HttpResult Call(const std::string& method, const std::string& target, const std::string& body = "") {
    notify_->Drain(0ms);  // read what the daemon sent, as systemd would (unread, its notifications are dropped)
    HttpRequestSpec r;
    r.server = Endpoint{IpAddr::V4(0x7F000001), port_};
    r.method = method;
    r.target = target;
    r.body = body;
    if (method != "GET") r.token = kToken;
    auto got = HttpCall(r);
    return got.ok() ? *got : HttpResult{0, "", got.status().ToString()};
  }
  testing::PromText Metrics(std::vector<std::string>* problems) {
    const HttpResult r = Call("GET", "/metrics");
    testing::PromText t;
    *problems = r.status == 200 ? t.Parse(r.body) : std::vector<std::string>{"GET /metrics: " + r.body};
    return t;
  }

 private:
  std::string dir_;
  std::unique_ptr<testing::NotifySocket> notify_;
  std::unique_ptr<testing::Child> child_;
  bool ready_ = false;
  uint16_t port_ = 0;
};

uint32_t ReadWord(const std::string& path, uint64_t off) {
  uint32_t v = 0;
  const int fd = open(path.c_str(), O_RDONLY);
  EXPECT_EQ(pread(fd, &v, 4, static_cast<off_t>(off)), 4);
  close(fd);
  return v;
}

void WriteWord(const std::string& path, uint64_t off, uint32_t v) {
  const int fd = open(path.c_str(), O_WRONLY);
  EXPECT_EQ(pwrite(fd, &v, 4, static_cast<off_t>(off)), 4);
  close(fd);
}

// Every fibnic_* name a dashboard query mentions.
std::set<std::string> DashboardMetrics(const json& j) {
  std::set<std::string> out;
  static const std::regex kMetric("fibnic_[a-z0-9_]+");
  auto scan = [&](const std::string& text) {
    for (std::sregex_iterator it(text.begin(), text.end(), kMetric), end; it != end; ++it) out.insert(it->str());
  };
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      if ((k == "expr" || k == "definition") && v.is_string()) scan(v.get<std::string>());
      if (k == "query" && v.is_string()) scan(v.get<std::string>());
      if (v.is_structured()) out.merge(DashboardMetrics(v));
    }
  } else if (j.is_array()) {
    for (const auto& v : j) out.merge(DashboardMetrics(v));
  }
  return out;
}

TEST(FibnicdHealth, MetricsAreValidCoverEverySourceAndTheDashboard) {
  Daemon d("fibnicd_health_metrics", "audit: {interval: 1s}\n");
  ASSERT_TRUE(d.ready()) << d.log();
  // One route through the API: one observation of the install latency.
  const HttpResult put = d.Call("PUT", "/api/v1/routes/static/203.0.113.0/24",
                                R"({"paths":[{"gateway":"192.0.2.1","port":0}]})");
  ASSERT_LT(put.status, 300) << put.body;
  // Wait for the route to be installed and an audit pass to be done.
  std::vector<std::string> problems;
  testing::PromText m;
  const auto deadline = Clock::now() + 60s;
  do {
    std::this_thread::sleep_for(200ms);
    m = d.Metrics(&problems);
  } while (Clock::now() < deadline && !(m.Value("fibnic_route_install_seconds_count") >= 1 &&
                                        m.Value("fibnic_audit_runs_total") >= 1));
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);

  for (const char* source : {"kernel", "fpm", "file", "api"}) {
    EXPECT_EQ(m.Value("fibnic_source_up", {{"source", source}}), 1) << source;
    EXPECT_FALSE(std::isnan(m.Value("fibnic_source_connected", {{"source", source}}))) << source;
  }
  EXPECT_EQ(m.Value("fibnic_source_connected", {{"source", "fpm"}}), 0);  // no zebra in this test
  for (const char* f : {"fibnic_source_reconnects_total", "fibnic_source_replays_total", "fibnic_source_resyncs_total"}) {
    EXPECT_EQ(m.Value(f, {{"source", "fpm"}}), 0) << f;
  }
  for (const char* f : {"fibnic_source_overruns_total", "fibnic_source_replays_total", "fibnic_source_refusing",
                        "fibnic_source_stale_swept_total"}) {
    EXPECT_FALSE(std::isnan(m.Value(f, {{"source", "kernel"}}))) << f;
  }
  EXPECT_EQ(m.types["fibnic_route_install_seconds"], "histogram");
  EXPECT_GE(m.Value("fibnic_route_install_seconds_count"), 1);
  EXPECT_GT(m.Value("fibnic_route_install_seconds_sum"), 0);
  EXPECT_EQ(m.Value("fibnic_build_info", {{"version", FIBNIC_PROJECT_VERSION}}), 1);
  EXPECT_EQ(m.Value("fibnic_audit_enabled"), 1);
  EXPECT_GE(m.Value("fibnic_audit_runs_total"), 1);
  EXPECT_EQ(m.Value("fibnic_audit_drift_entries"), 0);
  // PORT_COUNTERS split by unit: six packet counters and two byte counters per port.
  EXPECT_EQ(m.Value("fibnic_device_port_packets_total", {{"port", "0"}, {"counter", "forwarded"}}), 0);
  EXPECT_EQ(m.Value("fibnic_device_port_bytes_total", {{"port", "0"}, {"direction", "tx"}}), 0);
  EXPECT_TRUE(std::isnan(m.Value("fibnic_device_port_packets_total", {{"counter", "rx_bytes"}})));
  // The counts catch up with the API route's commit by themselves (within
  // the recount's cost bound: 20x its cost, well under a second here, up to
  // a minute under ASan on a loaded machine).
  json st;
  for (const auto until = Clock::now() + 150s; Clock::now() < until; std::this_thread::sleep_for(100ms)) {
    st = json::parse(d.Call("GET", "/api/v1/status").body, nullptr, false);
    if (!st.is_discarded() && st["counts_commits"] == st["commits"]) break;
  }
  EXPECT_EQ(st["counts_commits"], st["commits"]) << st.dump();

  std::ifstream in(std::string(FIBNIC_SOURCE_DIR) + "/configs/grafana/fibnic-dashboard.json");
  const json dash = json::parse(in, nullptr, false);
  ASSERT_FALSE(dash.is_discarded()) << "configs/grafana/fibnic-dashboard.json is not valid JSON";
  std::set<std::string> exported;
  for (const auto& s : m.samples) exported.insert(s.name);
  const std::set<std::string> used = DashboardMetrics(dash);
  EXPECT_GE(used.size(), 20u);
  for (const std::string& name : used) EXPECT_TRUE(exported.count(name)) << "the dashboard queries " << name << ", which /metrics does not export";
}

TEST(FibnicdHealth, TheAuditReportsABarWordChangedBehindItsBack) {
  Daemon d("fibnicd_health_drift", "audit: {interval: 1s, max_events: 5}\n");
  ASSERT_TRUE(d.ready()) << d.log();
  const uint64_t off = regs::NexthopOffset(1) + 4;  // the MAC of the slot the routes use
  const uint32_t was = ReadWord(d.bar(), off);
  WriteWord(d.bar(), off, ~was);
  std::vector<std::string> problems;
  testing::PromText m;
  const auto deadline = Clock::now() + 20s;
  do {
    std::this_thread::sleep_for(200ms);
    m = d.Metrics(&problems);
  } while (Clock::now() < deadline && !(m.Value("fibnic_audit_drift_entries") >= 1));
  EXPECT_EQ(m.Value("fibnic_audit_drift_entries"), 1);
  const json events = json::parse(d.Call("GET", "/api/v1/events?level=warning").body);
  std::string all;
  for (const auto& e : events["events"]) all += e["message"].get<std::string>() + "\n";
  EXPECT_NE(all.find("audit: device nexthop[1] differs from what fibnicd wrote"), std::string::npos) << all;
  EXPECT_EQ(ReadWord(d.bar(), off), ~was) << "repair is off, yet the word changed";
}

TEST(FibnicdHealth, TheAuditWithRepairPutsTheWordBack) {
  Daemon d("fibnicd_health_repair", "audit: {interval: 1s, repair: true}\n");
  ASSERT_TRUE(d.ready()) << d.log();
  const uint64_t off = regs::NexthopOffset(1) + 4;
  const uint32_t was = ReadWord(d.bar(), off);
  WriteWord(d.bar(), off, ~was);
  const auto deadline = Clock::now() + 20s;
  while (Clock::now() < deadline && ReadWord(d.bar(), off) != was) std::this_thread::sleep_for(100ms);
  EXPECT_EQ(ReadWord(d.bar(), off), was) << d.log();
  std::vector<std::string> problems;
  const testing::PromText m = d.Metrics(&problems);
  EXPECT_GE(m.Value("fibnic_audit_repairs_total"), 1);
  EXPECT_NE(d.log().find("rewritten through the writer"), std::string::npos) << d.log();
}

}  // namespace
}  // namespace fibnic
