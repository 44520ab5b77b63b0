// A Bar that forwards to another Bar and logs every 32-bit bus write in
// order — for tests that check the device's view after each single write, and
// for counting what a push costs (bench). Multi-byte writes are split into the
// word writes the bus model defines, so the log is exactly what the device sees.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "hwif/bar.h"

namespace fibnic {

struct BusWrite {
  uint64_t offset = 0;
  uint32_t value = 0;
  bool operator==(const BusWrite&) const = default;
};

class RecordingBar : public Bar {
 public:
  // inner must outlive this. observer (optional) runs after each write has
  // reached inner, with the write and its index in the log; a non-OK status
  // from it fails that write (a test stops at the first misforward).
  using Observer = std::function<Status(const BusWrite&, size_t index)>;
  explicit RecordingBar(Bar& inner, Observer observer = nullptr) : inner_(inner), observer_(std::move(observer)) {}

  size_t size() const override { return inner_.size(); }
  Status Read(uint64_t offset, void* dst, size_t len) override { return inner_.Read(offset, dst, len); }
  Status Write32(uint64_t offset, uint32_t value) override;
  Status Write(uint64_t offset, const void* src, size_t len) override;
  Status Flush() override {
    ++flushes_;
    return inner_.Flush();
  }

  const std::vector<BusWrite>& writes() const { return writes_; }
  size_t flushes() const { return flushes_; }
  void Clear() {
    writes_.clear();
    flushes_ = 0;
  }
  void set_observer(Observer observer) { observer_ = std::move(observer); }

  // Applies writes [0, k) of the log to a byte image of the BAR (e.g. a copy
  // of the bytes before recording began) — the device's view after k writes.
  Status Replay(size_t k, std::vector<uint8_t>& image) const;

 private:
  Bar& inner_;
  Observer observer_;
  std::vector<BusWrite> writes_;
  size_t flushes_ = 0;
};

}  // namespace fibnic
