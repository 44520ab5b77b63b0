// The periodic readback audit (as Stratum's VerifyState, SONiC's
// route_check): every interval, read the whole device back and compare it
// with what the writer last put there, entry by entry; report each drifted
// entry (a bounded number of events per pass), keep a drift gauge, and
// optionally repair by a Sync through the writer (only the drifted entries
// are written, in its safe order).
//
// Off the commit path: the audit has its own thread and timer. The strand
// is held only to copy the writer's shadow (a memcpy) and, at the end, to
// confirm — the device's GENERATION and the writer's are still those of the
// copy, so no push overlapped the read and every difference is drift, not a
// commit in flight. A pass a push overlapped is retried a few times, then
// counted inconclusive and left to the next interval.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "common/status.h"
#include "fibnicd/pipeline.h"
#include "hwif/fibnic_readback.h"

namespace fibnic {

struct AuditConfig {
  std::chrono::nanoseconds interval = std::chrono::seconds(300);  // > 0
  bool repair = false;
  uint32_t max_events = 20;  // drifted entries reported per pass; the rest in one summary
  int retries = 3;           // re-reads when a push overlapped a pass
  std::chrono::milliseconds retry_delay{200};
};

struct AuditStats {
  uint64_t runs = 0;           // conclusive passes
  uint64_t inconclusive = 0;   // passes given up on because pushes kept overlapping
  uint64_t errors = 0;         // passes that could not read the device
  uint64_t drift_entries = 0;  // differing entries in the last conclusive pass
  uint64_t drifted_total = 0;
  uint64_t repairs = 0;
  std::chrono::system_clock::time_point last_run{};  // of the last conclusive pass
};

class DeviceAudit {
 public:
  // Reads the whole device (any thread; it only reads the BAR).
  using ReadDevice = std::function<StatusOr<FibnicReadback>()>;
  // warning = a drifted entry or a failed repair; otherwise a pass's outcome.
  using Event = std::function<void(bool warning, const std::string& message)>;

  DeviceAudit(Pipeline& pipeline, ReadDevice read, AuditConfig config, Event event);
  ~DeviceAudit();  // Stop()
  DeviceAudit(const DeviceAudit&) = delete;
  DeviceAudit& operator=(const DeviceAudit&) = delete;

  // Starts the thread (any thread; not after Stop()).
  void Start();
  // Joins the thread; a pass under way stops at its next step. Idempotent.
  void Stop();
  // One pass now, on the caller's thread (tests; the thread runs the same).
  void RunPass();

  AuditStats stats() const;
  const AuditConfig& config() const { return config_; }

 private:
  void Loop();
  // One attempt: true when conclusive (or the device unreadable).
  bool Attempt();

  Pipeline& pipeline_;
  ReadDevice read_;
  const AuditConfig config_;
  Event event_;
  mutable std::mutex stats_mu_;
  AuditStats stats_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace fibnic
