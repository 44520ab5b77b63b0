// A DeviceWriter whose "device" is a DeviceImage in memory: for tests of the
// pipeline and of what reads the writer. It applies deltas as the device
// would end up (entries replaced, SRAM words set), counts every call and
// write, and fails on request: the next N pushes or syncs, or a read back.
// device() is mutable so a test can make the device drift from the shadow.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hwif/device_writer.h"

namespace fibnic {

class FakeDeviceWriter : public DeviceWriter {
 public:
  explicit FakeDeviceWriter(const regs::Caps& caps = regs::Caps::Model2Bit()) : device_(caps), shadow_(caps) {}

  StatusOr<FibnicReadback> ReadBack() override {
    ++readbacks;
    if (fail_readback) return IoError("fake device: read back refused");
    return FibnicReadback{device_, generation_};
  }
  Status Sync(const DeviceImage& image, const FibnicReadback* = nullptr) override {
    ++syncs;
    if (fail_syncs > 0) {
      --fail_syncs;
      in_sync_ = false;
      return IoError("fake device: injected sync failure");
    }
    Write(image);
    return OkStatus();
  }
  Status Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& image) override {
    ++pushes;
    if (!in_sync_) return FailedPrecondition("fake device: push without a successful Sync");
    if (fail_pushes > 0) {
      --fail_pushes;
      in_sync_ = false;
      return IoError("fake device: injected push failure");
    }
    for (const DeviceDelta& d : deltas) delta_sram_words += d.sram_words.size();
    Write(image);
    return OkStatus();
  }
  StatusOr<VerifyReport> Verify(const DeviceImage& want) override {
    ++verifies;
    return CompareImages(want, device_, generation_);
  }

  const DeviceImage& shadow() const override { return shadow_; }
  bool in_sync() const override { return in_sync_; }
  uint32_t generation() const override { return generation_; }
  uint64_t bus_writes() const override { return bus_writes_; }
  uint64_t changed_bytes() const override { return 0; }

  // What the "device" holds; tests may change it behind the writer's back.
  DeviceImage& device() { return device_; }

  // Injected failures (each consumed as it fires) and call counts.
  int fail_pushes = 0;
  int fail_syncs = 0;
  bool fail_readback = false;
  uint64_t readbacks = 0, syncs = 0, pushes = 0, verifies = 0;
  uint64_t delta_sram_words = 0;  // SRAM words named by pushed deltas
  // Called with every image a push or sync leaves on the "device".
  std::function<void(const DeviceImage&)> on_write;

 private:
  void Write(const DeviceImage& image) {
    device_ = image;
    shadow_ = image;
    if (on_write) on_write(image);
    ++generation_;
    ++bus_writes_;  // one per successful call: the fake has no bus
    in_sync_ = true;
  }

  DeviceImage device_, shadow_;
  uint32_t generation_ = 0;
  uint64_t bus_writes_ = 0;
  bool in_sync_ = false;
};

}  // namespace fibnic
