// A job that walks whole tables (counts, copies) on the thread that applies
// route updates: run again never sooner than `factor` x its last cost after
// it last ran, so it takes at most 1/(factor + 1) of that thread, however
// large the table grows and however often it is asked for.
#pragma once

#include <algorithm>
#include <chrono>

namespace fibnic {

struct CostBound {
  std::chrono::steady_clock::time_point at;
  std::chrono::steady_clock::duration cost{0};

  std::chrono::steady_clock::duration Wait(double factor) const {  // until Due (0 = now)
    const auto until = at + std::chrono::duration_cast<std::chrono::steady_clock::duration>(cost * factor);
    return std::max(std::chrono::steady_clock::duration::zero(), until - std::chrono::steady_clock::now());
  }
  bool Due(double factor) const { return Wait(factor) == std::chrono::steady_clock::duration::zero(); }
  // Runs fn and records when and how long.
  template <typename Fn>
  void Run(Fn&& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    at = std::chrono::steady_clock::now();
    cost = at - t0;
  }
};

}  // namespace fibnic
