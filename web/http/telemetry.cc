#include "web/http/telemetry.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace fibnic::web {

const char* EventLevelName(EventLevel l) {
  switch (l) {
    case EventLevel::kDebug: return "debug";
    case EventLevel::kInfo: return "info";
    case EventLevel::kWarning: return "warning";
    case EventLevel::kError: return "error";
  }
  return "info";
}

bool ParseEventLevel(std::string_view s, EventLevel* out) {
  for (auto l : {EventLevel::kDebug, EventLevel::kInfo, EventLevel::kWarning, EventLevel::kError}) {
    if (s == EventLevelName(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

HistogramMetric::HistogramMetric(std::vector<double> upper_bounds) : bounds_(std::move(upper_bounds)) {
  std::sort(bounds_.begin(), bounds_.end());
  bounds_.erase(std::unique(bounds_.begin(), bounds_.end()), bounds_.end());
  counts_.assign(bounds_.size() + 1, 0);
}

void HistogramMetric::Observe(double v) {
  size_t i = std::lower_bound(bounds_.begin(), bounds_.end(), v) - bounds_.begin();
  std::lock_guard lock(mu_);
  ++counts_[i];
  sum_ += v;
  ++count_;
}

HistogramMetric::Snapshot HistogramMetric::Snap() const {
  std::lock_guard lock(mu_);
  Snapshot s;
  uint64_t acc = 0;
  for (uint64_t c : counts_) {
    acc += c;
    s.cumulative.push_back(acc);
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

double HistogramMetric::Quantile(double q) const {
  Snapshot s = Snap();
  if (s.count == 0 || bounds_.empty()) return 0;
  const double want = q * static_cast<double>(s.count);
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (static_cast<double>(s.cumulative[i]) >= want) return bounds_[i];
  }
  return bounds_.back();
}

Telemetry::Telemetry(size_t event_capacity) : capacity_(std::max<size_t>(1, event_capacity)) {}

void Telemetry::Record(EventLevel level, std::string category, std::string message) {
  Event e;
  e.time = std::chrono::system_clock::now();
  e.level = level;
  e.category = std::move(category);
  e.message = std::move(message);
  std::lock_guard lock(events_mu_);
  e.seq = next_seq_++;
  if (events_.size() == capacity_) events_.pop_front();
  events_.push_back(std::move(e));
}

std::vector<Event> Telemetry::EventsSince(uint64_t since, size_t limit, EventLevel min_level) const {
  std::vector<Event> out;
  std::lock_guard lock(events_mu_);
  // seq is dense inside the ring, so the first wanted event is found by offset.
  auto it = events_.begin();
  if (!events_.empty() && since >= events_.front().seq) {
    it += static_cast<std::ptrdiff_t>(std::min<uint64_t>(since - events_.front().seq + 1, events_.size()));
  }
  for (; it != events_.end() && out.size() < limit; ++it) {
    if (it->level >= min_level) out.push_back(*it);
  }
  return out;
}

uint64_t Telemetry::last_seq() const {
  std::lock_guard lock(events_mu_);
  return next_seq_ - 1;
}

Telemetry::Series* Telemetry::FindOrAdd(std::string_view name, std::string_view help, Kind kind,
                                        const Labels& labels) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    it = families_.emplace(std::string(name), Family{kind, std::string(help), {}}).first;
  }
  Family& f = it->second;
  if (f.kind != kind) {
    // A programming error (two parts disagree on a metric's type): fail loudly
    // at registration rather than export a malformed scrape.
    throw std::logic_error("telemetry: metric '" + std::string(name) + "' registered with two types");
  }
  for (auto& s : f.series) {
    if (s->labels == labels) return s.get();
  }
  f.series.push_back(std::make_unique<Series>());
  f.series.back()->labels = labels;
  return f.series.back().get();
}

CounterMetric* Telemetry::Counter(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(metrics_mu_);
  Series* s = FindOrAdd(name, help, Kind::kCounter, labels);
  if (!s->counter) s->counter = std::make_unique<CounterMetric>();
  return s->counter.get();
}

GaugeMetric* Telemetry::Gauge(std::string_view name, std::string_view help, const Labels& labels) {
  std::lock_guard lock(metrics_mu_);
  Series* s = FindOrAdd(name, help, Kind::kGauge, labels);
  if (!s->gauge) s->gauge = std::make_unique<GaugeMetric>();
  return s->gauge.get();
}

HistogramMetric* Telemetry::Histogram(std::string_view name, std::string_view help, std::vector<double> bounds,
                                      const Labels& labels) {
  std::lock_guard lock(metrics_mu_);
  Series* s = FindOrAdd(name, help, Kind::kHistogram, labels);
  if (!s->histogram) s->histogram = std::make_unique<HistogramMetric>(std::move(bounds));
  return s->histogram.get();
}

uint64_t Telemetry::CounterValue(std::string_view name, const Labels& labels) const {
  std::lock_guard lock(metrics_mu_);
  auto it = families_.find(name);
  if (it == families_.end() || it->second.kind != Kind::kCounter) return 0;
  for (const auto& s : it->second.series) {
    if (s->labels == labels && s->counter) return s->counter->value();
  }
  return 0;
}

std::string PrometheusEscapeLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string PrometheusLabels(const Labels& labels) {
  if (labels.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < labels.size(); ++i) {
    if (i) out += ',';
    out += labels[i].first + "=\"" + PrometheusEscapeLabel(labels[i].second) + "\"";
  }
  return out + "}";
}

std::string PrometheusNumber(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string Telemetry::PrometheusText() const {
  std::lock_guard lock(metrics_mu_);
  std::string out;
  for (const auto& [name, f] : families_) {
    const char* type = f.kind == Kind::kCounter ? "counter" : f.kind == Kind::kGauge ? "gauge" : "histogram";
    out += "# HELP " + name + " " + f.help + "\n# TYPE " + name + " " + type + "\n";
    for (const auto& s : f.series) {
      if (s->counter) out += name + PrometheusLabels(s->labels) + " " + std::to_string(s->counter->value()) + "\n";
      if (s->gauge) out += name + PrometheusLabels(s->labels) + " " + PrometheusNumber(s->gauge->value()) + "\n";
      if (s->histogram) {
        auto snap = s->histogram->Snap();
        const auto& b = s->histogram->bounds();
        for (size_t i = 0; i <= b.size(); ++i) {
          Labels l = s->labels;
          l.emplace_back("le", i < b.size() ? PrometheusNumber(b[i]) : "+Inf");
          out += name + "_bucket" + PrometheusLabels(l) + " " + std::to_string(snap.cumulative[i]) + "\n";
        }
        out += name + "_sum" + PrometheusLabels(s->labels) + " " + PrometheusNumber(snap.sum) + "\n";
        out += name + "_count" + PrometheusLabels(s->labels) + " " + std::to_string(snap.count) + "\n";
      }
    }
  }
  return out;
}

}  // namespace fibnic::web
