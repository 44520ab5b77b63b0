// Telemetry: what the daemon and its sources report for operators — a bounded
// ring of recent events (route changes, errors) and Prometheus-style metrics
// (counters, gauges, histograms). Beast-free and thread-safe, so a source on
// another thread can report too; the web layer only reads it.
//
// Metric handles returned by Counter()/Gauge()/Histogram() are stable for the
// Telemetry's lifetime: fetch once, then update without lookups.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fibnic::web {

// Well-known counters the dashboard plots as rates (the daemon adds to them).
inline constexpr const char* kRouteUpdatesTotal = "fibnic_route_updates_total";      // routes upserted/deleted into the Fib
inline constexpr const char* kBarBytesWrittenTotal = "fibnic_bar_bytes_written_total";  // bytes pushed to BAR0
inline constexpr const char* kCommitsTotal = "fibnic_commits_total";                  // Fib::Commit() batches pushed

using Labels = std::vector<std::pair<std::string, std::string>>;

enum class EventLevel : uint8_t { kDebug, kInfo, kWarning, kError };
const char* EventLevelName(EventLevel l);  // "debug", "info", "warning", "error"
bool ParseEventLevel(std::string_view s, EventLevel* out);

struct Event {
  uint64_t seq = 0;  // 1, 2, ... in order of recording; never reused
  std::chrono::system_clock::time_point time;
  EventLevel level = EventLevel::kInfo;
  std::string category;  // "route", "neighbor", "push", "source", "config", "web", ...
  std::string message;
};

class CounterMetric {
 public:
  void Add(uint64_t n = 1) { v_.fetch_add(n, std::memory_order_relaxed); }
  uint64_t value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

class GaugeMetric {
 public:
  void Set(double v) { v_.store(v, std::memory_order_relaxed); }
  void Add(double d) { v_.fetch_add(d, std::memory_order_relaxed); }
  double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0};
};

class HistogramMetric {
 public:
  explicit HistogramMetric(std::vector<double> upper_bounds);
  void Observe(double v);
  const std::vector<double>& bounds() const { return bounds_; }
  // Cumulative counts per bound plus +Inf (bounds().size() + 1 entries), sum, count.
  struct Snapshot {
    std::vector<uint64_t> cumulative;
    double sum = 0;
    uint64_t count = 0;
  };
  Snapshot Snap() const;
  // Smallest bound below which at least q of the observations fall (q in (0,1]);
  // +Inf is reported as the largest finite bound.
  double Quantile(double q) const;

 private:
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  std::vector<uint64_t> counts_;  // per bucket (not cumulative), last = +Inf
  double sum_ = 0;
  uint64_t count_ = 0;
};

class Telemetry {
 public:
  explicit Telemetry(size_t event_capacity = 2048);

  // --- events ---------------------------------------------------------------
  void Record(EventLevel level, std::string category, std::string message);
  // Events with seq > since (oldest first), at most limit, at or above min_level.
  std::vector<Event> EventsSince(uint64_t since, size_t limit, EventLevel min_level = EventLevel::kDebug) const;
  uint64_t last_seq() const;
  size_t event_capacity() const { return capacity_; }

  // --- metrics --------------------------------------------------------------
  // Same (name, labels) → same handle. A name keeps the type and help it was
  // first registered with.
  CounterMetric* Counter(std::string_view name, std::string_view help, const Labels& labels = {});
  GaugeMetric* Gauge(std::string_view name, std::string_view help, const Labels& labels = {});
  HistogramMetric* Histogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                             const Labels& labels = {});
  // Value of a counter series, 0 if it was never registered.
  uint64_t CounterValue(std::string_view name, const Labels& labels = {}) const;

  // Prometheus text exposition format 0.0.4 of every registered metric.
  std::string PrometheusText() const;

 private:
  enum class Kind : uint8_t { kCounter, kGauge, kHistogram };
  struct Series {
    Labels labels;
    std::unique_ptr<CounterMetric> counter;
    std::unique_ptr<GaugeMetric> gauge;
    std::unique_ptr<HistogramMetric> histogram;
  };
  struct Family {
    Kind kind;
    std::string help;
    std::vector<std::unique_ptr<Series>> series;
  };
  Series* FindOrAdd(std::string_view name, std::string_view help, Kind kind, const Labels& labels);

  const size_t capacity_;
  mutable std::mutex events_mu_;
  std::deque<Event> events_;
  uint64_t next_seq_ = 1;

  mutable std::mutex metrics_mu_;
  std::map<std::string, Family, std::less<>> families_;
};

// Prometheus helpers shared with the API's scrape-time metrics.
std::string PrometheusEscapeLabel(std::string_view v);
std::string PrometheusLabels(const Labels& labels);
std::string PrometheusNumber(double v);

}  // namespace fibnic::web
