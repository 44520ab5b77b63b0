// What fibnicd reports for /metrics beyond the Fib and its sources: the
// route-install latency histogram (fibnicd/pipeline.h InstallLatency) and
// the periodic readback audit (fibnicd/device_audit.h). Plain numbers, so
// the API depends on neither.
#pragma once

#include <cstdint>
#include <vector>

namespace fibnic::web {

struct LatencyBuckets {
  std::vector<double> bounds_s;   // upper bounds, ascending
  std::vector<uint64_t> counts;   // per bucket (not cumulative); bounds_s.size() + 1, the last above them all
  double sum_s = 0;
  uint64_t count = 0;
};

struct AuditReport {
  bool enabled = false;
  bool repair = false;
  double interval_s = 0;
  uint64_t runs = 0;              // passes that compared the whole device
  uint64_t inconclusive = 0;      // passes a push overlapped (retried later)
  uint64_t errors = 0;            // passes that could not read the device
  uint64_t drift_entries = 0;     // entries that differed in the last conclusive pass
  uint64_t drifted_total = 0;     // differing entries found, summed over passes
  uint64_t repairs = 0;           // passes that rewrote drifted entries
  double last_run_unix = 0;       // wall time of the last conclusive pass (0 = none yet)
};

struct HealthReport {
  LatencyBuckets install_latency;
  AuditReport audit;
};

}  // namespace fibnic::web
