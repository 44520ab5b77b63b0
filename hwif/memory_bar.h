// A BAR held in process memory: the backend of unit tests, benches and the
// offline compiler (fibnicctl builds an image without a device).
#pragma once

#include <cstdint>
#include <vector>

#include "hwif/mapped_bar.h"

namespace fibnic {

class MemoryBar : public MappedBar {
 public:
  explicit MemoryBar(size_t size) : bytes_(size, 0) { set_mapping(bytes_.data(), bytes_.size()); }
  explicit MemoryBar(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {
    set_mapping(bytes_.data(), bytes_.size());
  }
  MemoryBar(const MemoryBar&) = delete;
  MemoryBar& operator=(const MemoryBar&) = delete;

  Status Flush() override { return OkStatus(); }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

}  // namespace fibnic
