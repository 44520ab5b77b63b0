// The narrow seam between the pipeline and the device (in the style of a
// HAL's ReadBack/Sync/Push/Verify): the pipeline compiles, the writer puts
// what was compiled on the device. FibnicWriter (hwif/fibnic_writer.h) is
// the BAR-backed implementation; FakeDeviceWriter (hwif/fake_device_writer.h)
// holds the device in memory, counts writes and injects failures for tests.
//
// Every call runs on the thread that owns the writer (the pipeline's strand);
// shadow() is what was written, for readers on that same thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "device/fibnic_image.h"
#include "hwif/fibnic_readback.h"

namespace fibnic {

// One entry where the device holds something other than the software image.
struct DeviceDrift {
  std::string table;   // "control", "port_mac", "nexthop", "tcam6", "neigh", "sram4"
  uint32_t index = 0;  // port, entry index, or SRAM4 bus word (32-bit) index
  bool operator==(const DeviceDrift&) const = default;
};

struct VerifyReport {
  uint32_t generation = 0;          // GENERATION the device reported
  std::vector<DeviceDrift> drift;   // in table order, at most kMaxListed
  uint64_t drift_total = 0;         // every differing entry, also those not listed
  static constexpr size_t kMaxListed = 1000;
  bool in_sync() const { return drift_total == 0; }
};

// Entry by entry, where held differs from want (caps must agree; a caps
// mismatch is one "caps" drift).
VerifyReport CompareImages(const DeviceImage& want, const DeviceImage& held, uint32_t held_generation);

class DeviceWriter {
 public:
  virtual ~DeviceWriter() = default;
  // What the device holds now (warm restart: the Fib adopts its slot
  // numbering before the first compile).
  virtual StatusOr<FibnicReadback> ReadBack() = 0;
  // Makes the device hold image, writing only what differs, in an order that
  // never misforwards. held: a ReadBack() the caller already has (start-up
  // reads the device once; nothing may write it in between); null = read now.
  virtual Status Sync(const DeviceImage& image, const FibnicReadback* held = nullptr) = 0;
  // Applies the ordered deltas of one commit; image is the state after them.
  virtual Status Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& image) = 0;
  // Reads the device back and compares it with want, entry by entry.
  virtual StatusOr<VerifyReport> Verify(const DeviceImage& want) = 0;

  // What the writer last put on the device (valid while in_sync()).
  virtual const DeviceImage& shadow() const = 0;
  virtual bool in_sync() const = 0;
  // GENERATION as last written.
  virtual uint32_t generation() const = 0;
  // Since start: 32-bit bus writes issued, and bytes whose value changed.
  virtual uint64_t bus_writes() const = 0;
  virtual uint64_t changed_bytes() const = 0;
};

}  // namespace fibnic
