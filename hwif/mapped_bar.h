// A Bar over memory the process can address directly (an mmap of a file or of
// a PCI resource, or a heap buffer). Every access is a single volatile 32-bit
// load or store, so an uncached PCI mapping sees exactly the bus accesses the
// bus model promises and a concurrent reader of a shared file mapping (the RTL
// testbench, an emulator) never sees a torn word.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hwif/bar.h"

namespace fibnic {

class MappedBar : public Bar {
 public:
  size_t size() const override { return size_; }
  Status Read(uint64_t offset, void* dst, size_t len) override;
  Status Write32(uint64_t offset, uint32_t value) override;
  Status Write(uint64_t offset, const void* src, size_t len) override;
  // The mapped bytes, for decoders that read a whole BAR (HwLookup, codecs).
  const uint8_t* data() const { return const_cast<const uint8_t*>(base_); }

 protected:
  MappedBar() = default;
  void set_mapping(volatile uint8_t* base, size_t size) {
    base_ = base;
    size_ = size;
  }

 private:
  volatile uint8_t* base_ = nullptr;
  size_t size_ = 0;
};

}  // namespace fibnic
