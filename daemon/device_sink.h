// What the pipeline needs from the device: bring it to a compiled image at
// start (warm restart: read back, write only the differences) and push the
// ordered deltas of each commit. The hwif-backed implementation is
// HwifDeviceSink; tests may record instead.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"
#include "hwif/fibnic_image.h"

namespace fibnic {

struct PushStats {
  uint64_t bus_writes = 0;  // 32-bit writes issued
  uint64_t bytes = 0;       // bytes written
};

class DeviceSink {
 public:
  virtual ~DeviceSink() = default;
  // Makes the device hold image, writing only what differs from what it holds
  // now, in an order that never misforwards.
  virtual StatusOr<PushStats> Sync(const DeviceImage& image) = 0;
  // Applies the deltas of one commit in order; image is the state after them.
  virtual StatusOr<PushStats> Push(const DeviceImage& image, const std::vector<DeviceDelta>& deltas) = 0;
  // GENERATION as last written.
  virtual uint32_t generation() const = 0;
};

}  // namespace fibnic
