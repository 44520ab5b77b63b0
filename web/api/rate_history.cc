#include "web/api/rate_history.h"

namespace fibnic::web {

void RateHistory::Sample(int64_t unix_ms, uint64_t route_updates, uint64_t bar_bytes, uint64_t commits) {
  const std::array<uint64_t, 3> now = {route_updates, bar_bytes, commits};
  if (have_last_ && unix_ms > last_ms_) {
    const double dt = static_cast<double>(unix_ms - last_ms_) / 1000.0;
    auto rate = [&](int i) { return now[i] >= last_[i] ? static_cast<double>(now[i] - last_[i]) / dt : 0.0; };
    points_.push_back({unix_ms, rate(0), rate(1), rate(2)});
    if (points_.size() > capacity_) points_.pop_front();
  }
  have_last_ = true;
  last_ms_ = unix_ms;
  last_ = now;
}

RatePoint RateHistory::Recent(size_t n) const {
  RatePoint r;
  if (points_.empty() || n == 0) return r;
  size_t k = 0;
  for (auto it = points_.rbegin(); it != points_.rend() && k < n; ++it, ++k) {
    r.routes_per_s += it->routes_per_s;
    r.bar_bytes_per_s += it->bar_bytes_per_s;
    r.commits_per_s += it->commits_per_s;
  }
  r.unix_ms = points_.back().unix_ms;
  r.routes_per_s /= static_cast<double>(k);
  r.bar_bytes_per_s /= static_cast<double>(k);
  r.commits_per_s /= static_cast<double>(k);
  return r;
}

}  // namespace fibnic::web
