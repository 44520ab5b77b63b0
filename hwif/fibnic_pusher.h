// Writes compiled FIBNIC tables to a device: once with Sync (start, warm
// restart, recovery after a failed write — reads the device and writes only
// the differences, safely), then one Push per Fib::Commit() (the ordered
// DeviceDeltas of device/fibnic_image.h).
//
// The pusher keeps a shadow of the device's tables (NEXTHOP, TCAM, NEIGH,
// CONTROL, PORT_MAC), so it writes only words whose value changes. Of the
// SRAM (4 or 8 MiB) it keeps no copy: after a successful Sync or Push the
// device holds the target's SRAM, so for the bytes of a 32-bit bus write that
// a delta does not name (each bus write is atomic for the device, and those
// bytes keep the device's value) it reads the target, or the value a delta of
// the same commit wrote or found there (DeviceDelta::sram_before). The caller
// keeps the target alive and unchanged between pushes (the Fib's own image).
// A failed write leaves the device in a safe but unknown intermediate state:
// the pusher then refuses further pushes until Sync has read the device again.
#pragma once

#include <cstdint>
#include <vector>

#include "hwif/bar.h"
#include "device/fibnic_image.h"
#include "hwif/fibnic_readback.h"
#include "hwif/write_plan.h"

namespace fibnic {

struct PushOptions {
  bool verify = false;  // read back every written word after each batch
};

class FibnicPusher {
 public:
  explicit FibnicPusher(Bar& bar, PushOptions options = {}) : bar_(bar), options_(options) {
    shadow_.sram = {};
  }

  // Reads the device's tables (probing it first) and takes it to `target`
  // by the safe transition of fibnic_transition.h. Writes nothing when the
  // device already holds target (a restart with an unchanged table).
  Status Sync(const DeviceImage& target);
  // Sync from a readback the caller already holds (warm start reads the
  // device once: the Fib adopts its slots, then this plans from the same
  // bytes). Nothing may write the device between that read and this call.
  Status SyncFrom(const FibnicReadback& held, const DeviceImage& target);

  // Pushes one commit's deltas in order, each as one batch ending with
  // GENERATION; `target` is the image after the last delta (Fib::image()),
  // the source of CONTROL and PORT_MAC. Needs a prior successful Sync. A
  // malformed delta (index out of range, sram_values not parallel to
  // sram_words) is refused before anything is written.
  Status Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& target);

  bool in_sync() const { return in_sync_; }
  uint32_t generation() const { return generation_; }
  // What the device holds, as far as the pusher knows (valid while in_sync):
  // the target of the last Sync or Push (the device holds its SRAM and
  // tables then); before any, the tables alone.
  const DeviceImage& device() const { return last_target_ ? *last_target_ : shadow_; }
  // Counts of the last Sync/Push, and since construction.
  const PushStats& last() const { return last_; }
  const PushStats& total() const { return total_; }

 private:
  Status CheckDelta(const DeviceDelta& delta) const;
  void PlanDelta(const std::vector<DeviceDelta>& deltas, size_t i, const DeviceImage& target, WritePlan& plan);
  void PlanSramWords(const std::vector<DeviceDelta>& deltas, size_t i, const DeviceImage& target, WritePlan& plan);
  void KeepTables(const DeviceImage& target);
  Status RunBatch(WritePlan& plan);

  Bar& bar_;
  PushOptions options_;
  DeviceImage shadow_;  // tables only: its sram is empty
  const DeviceImage* last_target_ = nullptr;
  uint32_t generation_ = 0;
  bool in_sync_ = false;
  PushStats last_, total_;
};

}  // namespace fibnic
