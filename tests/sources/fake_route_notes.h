// The kernel's routes as the FPM offload replies see them (RouteNotes), for
// tests without a kernel: a plain map the test fills as the kernel would
// hold routes. Thread-safe (the test's thread adds, the source's loop reads).
#pragma once

#include <iterator>
#include <map>
#include <mutex>

#include "sources/route_notes.h"

namespace fibnic::testing {

class FakeRouteNotes : public RouteNotes {
 public:
  // The kernel holds p in `table` with `protocol` (a new route: note 0).
  void Add(const Prefix& p, uint8_t protocol, uint32_t table = 254) {
    std::lock_guard<std::mutex> l(mu_);
    routes_[p] = {table, {protocol, 0}};
  }
  void Remove(const Prefix& p) {
    std::lock_guard<std::mutex> l(mu_);
    routes_.erase(p);
  }
  uint8_t note(const Prefix& p) {
    std::lock_guard<std::mutex> l(mu_);
    auto it = routes_.find(p);
    return it == routes_.end() ? 0 : it->second.second.note;
  }

  std::optional<Held> Find(const Prefix& p, uint32_t table) const override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = routes_.find(p);
    if (it == routes_.end() || it->second.first != table) return std::nullopt;
    return it->second.second;
  }
  void SetNote(const Prefix& p, uint8_t note) override {
    std::lock_guard<std::mutex> l(mu_);
    auto it = routes_.find(p);
    if (it != routes_.end()) it->second.second.note = note;
  }
  void ClearNotes() override {
    std::lock_guard<std::mutex> l(mu_);
    for (auto& [p, r] : routes_) r.second.note = 0;
  }
  size_t Walk(size_t cursor, size_t max, uint32_t table,
              const std::function<void(const Prefix&, Held&)>& fn) override {
    std::lock_guard<std::mutex> l(mu_);
    if (cursor >= routes_.size()) return 0;
    auto it = std::next(routes_.begin(), static_cast<std::ptrdiff_t>(cursor));
    for (; it != routes_.end() && max != 0; ++it, --max, ++cursor) {
      if (it->second.first == table) fn(it->first, it->second.second);
    }
    return it == routes_.end() ? 0 : cursor;
  }

 private:
  mutable std::mutex mu_;
  std::map<Prefix, std::pair<uint32_t, Held>> routes_;  // prefix → (table, held)
};

}  // namespace fibnic::testing
