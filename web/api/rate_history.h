// Per-second rates of a few monotonic counters (routes applied, BAR bytes
// written, commits), kept for the dashboard's plot and the status endpoint.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>

namespace fibnic::web {

struct RatePoint {
  int64_t unix_ms = 0;
  double routes_per_s = 0;
  double bar_bytes_per_s = 0;
  double commits_per_s = 0;
};

class RateHistory {
 public:
  explicit RateHistory(size_t capacity = 300) : capacity_(capacity) {}

  // Feeds the counters' current totals; the first call only sets the baseline.
  // A counter that went backwards (restart) yields a rate of 0 for that step.
  void Sample(int64_t unix_ms, uint64_t route_updates, uint64_t bar_bytes, uint64_t commits);

  const std::deque<RatePoint>& points() const { return points_; }
  // Mean over the last n points (or fewer if the history is shorter).
  RatePoint Recent(size_t n) const;

 private:
  size_t capacity_;
  std::deque<RatePoint> points_;
  bool have_last_ = false;
  int64_t last_ms_ = 0;
  std::array<uint64_t, 3> last_{};
};

}  // namespace fibnic::web
