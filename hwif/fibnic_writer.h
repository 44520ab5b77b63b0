// DeviceWriter over a FIBNIC BAR: FibnicPusher's ordered, coalesced writes
// (its shadow is the writer's), readback Sync for start-up and recovery, and
// Verify by reading the tables back.
#pragma once

#include "hwif/bar.h"
#include "hwif/device_writer.h"
#include "hwif/fibnic_pusher.h"

namespace fibnic {

class FibnicWriter : public DeviceWriter {
 public:
  explicit FibnicWriter(Bar& bar, PushOptions options = {}) : bar_(bar), pusher_(bar, options) {}

  StatusOr<FibnicReadback> ReadBack() override { return ReadFibnic(bar_); }
  Status Sync(const DeviceImage& image, const FibnicReadback* held = nullptr) override {
    return held ? pusher_.SyncFrom(*held, image) : pusher_.Sync(image);
  }
  Status Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& image) override {
    return pusher_.Push(deltas, image);
  }
  StatusOr<VerifyReport> Verify(const DeviceImage& want) override {
    ASSIGN_OR_RETURN(FibnicReadback held, ReadFibnic(bar_));
    return CompareImages(want, held.image, held.generation);
  }

  const DeviceImage& shadow() const override { return pusher_.device(); }
  bool in_sync() const override { return pusher_.in_sync(); }
  uint32_t generation() const override { return pusher_.generation(); }
  uint64_t bus_writes() const override { return pusher_.total().bus_writes; }
  uint64_t changed_bytes() const override { return pusher_.total().changed_bytes; }
  const FibnicPusher& pusher() const { return pusher_; }

 private:
  Bar& bar_;
  FibnicPusher pusher_;
};

}  // namespace fibnic
