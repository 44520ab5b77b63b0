// What the pipeline needs from the device: bring it to a compiled image at
// start (warm restart: read back, write only the differences) and push the
// ordered deltas of each commit. PusherSink (daemon/pusher_sink.h) is the
// hwif-backed implementation; the seam lets tests inject device failures.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "device/fibnic_image.h"
#include "hwif/fibnic_readback.h"

namespace fibnic {

class DeviceSink {
 public:
  virtual ~DeviceSink() = default;
  // Makes the device hold image, writing only what differs from what it holds
  // now, in an order that never misforwards.
  virtual Status Sync(const DeviceImage& image) = 0;
  // What the device holds now (warm restart: the Fib adopts its slot
  // numbering before the first compile) ...
  virtual StatusOr<FibnicReadback> ReadBack() = 0;
  // ... and Sync from that same readback, so start-up reads the device once.
  // Nothing may write the device between ReadBack and SyncFrom.
  virtual Status SyncFrom(const FibnicReadback& held, const DeviceImage& image) = 0;
  // Applies the deltas of one commit in order; image is the state after them.
  virtual Status Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& image) = 0;
  // GENERATION as last written.
  virtual uint32_t generation() const = 0;
  // Since start: 32-bit bus writes issued, and bytes whose value changed.
  virtual uint64_t bus_writes() const = 0;
  virtual uint64_t changed_bytes() const = 0;
};

}  // namespace fibnic
