// An ordered list of 32-bit bus writes computed without touching a device
// (the planners are pure functions of "what the device holds" and "what it
// must hold"), executed afterwards through a Bar, with the counts the daemon's
// metrics and the bench report.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hwif/bar.h"
#include "hwif/recording_bar.h"

namespace fibnic {

// Where a FIBNIC BAR offset lies (for per-table counts).
enum class BarRegion : uint8_t { kCsr, kNexthop, kTcam, kNeigh, kSram, kCount };
BarRegion RegionOf(uint64_t offset);
const char* BarRegionName(BarRegion r);

struct PushStats {
  uint64_t batches = 0;
  uint64_t bus_writes = 0;
  std::array<uint64_t, static_cast<size_t>(BarRegion::kCount)> writes_by_region{};
  // Bytes whose value differs between the device before and after: the
  // physical minimum any push must move (the bench's yardstick).
  uint64_t changed_bytes = 0;
  uint64_t bytes_written() const { return 4 * bus_writes; }
  uint64_t writes_in(BarRegion r) const { return writes_by_region[static_cast<size_t>(r)]; }
  void Add(const PushStats& o);
};

// Held as runs of consecutive bus words: a table load's Sync writes most of
// the SRAM in address order, one 4-byte value per word (a list of (offset,
// value) pairs was 16 bytes a write, 25 MB of peak for a full table).
class WritePlan {
 public:
  void Add(uint64_t offset, uint32_t value) {
    if (runs_.empty() || runs_.back().offset + 4 * uint64_t{runs_.back().count} != offset) runs_.push_back({offset, 0});
    ++runs_.back().count;
    values_.push_back(value);
  }
  // Room for `more` further writes' values.
  void Reserve(size_t more) { values_.reserve(values_.size() + more); }
  void AddChangedBytes(uint64_t n) { changed_bytes_ += n; }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  // fn(index, offset, value) for every write in order; stops at the first
  // call that returns false.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    size_t i = 0;
    for (const Run& r : runs_) {
      for (uint32_t k = 0; k < r.count; ++k, ++i) {
        if (!fn(i, r.offset + 4 * uint64_t{k}, values_[i])) return;
      }
    }
  }
  std::vector<BusWrite> writes() const;  // a copy, in order (tests, reports)
  uint64_t changed_bytes() const { return changed_bytes_; }
  // The counts this plan adds when executed.
  PushStats Stats() const;

 private:
  struct Run {
    uint64_t offset = 0;
    uint32_t count = 0;
  };
  std::vector<Run> runs_;
  std::vector<uint32_t> values_;
  uint64_t changed_bytes_ = 0;
};

// Performs the plan's writes in order. Stops at the first failed write and
// returns its error with the write's index and offset (the device then holds a
// prefix of the plan — every prefix is a safe state by construction).
Status ExecutePlan(Bar& bar, const WritePlan& plan);
// Reads back every offset the plan wrote and checks it holds the last value
// written there (verify-after-write).
Status VerifyPlan(Bar& bar, const WritePlan& plan);

}  // namespace fibnic
