// DeviceSink over hwif's FibnicPusher (ordered, coalesced writes; readback
// Sync for start-up and recovery).
#pragma once

#include "hwif/device_sink.h"
#include "hwif/fibnic_pusher.h"
#include "hwif/fibnic_readback.h"

namespace fibnic {

class PusherSink : public DeviceSink {
 public:
  PusherSink(FibnicPusher& pusher, Bar& bar) : pusher_(pusher), bar_(bar) {}
  Status Sync(const DeviceImage& image) override { return pusher_.Sync(image); }
  StatusOr<FibnicReadback> ReadBack() override { return ReadFibnic(bar_); }
  Status SyncFrom(const FibnicReadback& held, const DeviceImage& image) override {
    return pusher_.SyncFrom(held, image);
  }
  Status Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& image) override {
    return pusher_.Push(deltas, image);
  }
  uint32_t generation() const override { return pusher_.generation(); }
  uint64_t bus_writes() const override { return pusher_.total().bus_writes; }
  uint64_t changed_bytes() const override { return pusher_.total().changed_bytes; }

 private:
  FibnicPusher& pusher_;
  Bar& bar_;
};

}  // namespace fibnic
