#include "hwif/mapped_bar.h"

#include <cstring>

#include "hwif/bar_words.h"

namespace fibnic {

Status MappedBar::Read(uint64_t offset, void* dst, size_t len) {
  RETURN_IF_ERROR(CheckRange("read", offset, len, size_));
  auto* out = static_cast<uint8_t*>(dst);
  // Whole aligned words covering [offset, offset+len), each one 32-bit load.
  uint64_t word = offset & ~uint64_t{3};
  while (word < offset + len) {
    uint32_t v = 0;
    if (word + 4 <= size_) {
      v = *reinterpret_cast<volatile const uint32_t*>(base_ + word);
    } else {  // a BAR whose size is not a multiple of 4 (only files can be)
      for (uint64_t b = word; b < size_; ++b) v |= uint32_t{base_[b]} << (8 * (b - word));
    }
    uint8_t bytes[4];
    std::memcpy(bytes, &v, 4);
    for (int i = 0; i < 4; ++i) {
      const uint64_t at = word + i;
      if (at >= offset && at < offset + len) out[at - offset] = bytes[i];
    }
    word += 4;
  }
  return OkStatus();
}

Status MappedBar::Write32(uint64_t offset, uint32_t value) {
  if (offset % 4 != 0) return InvalidArgument("bus write at " + HexOffset(offset) + " is not 4-byte aligned");
  RETURN_IF_ERROR(CheckRange("write", offset, 4, size_));
  *reinterpret_cast<volatile uint32_t*>(base_ + offset) = value;
  return OkStatus();
}

Status MappedBar::Write(uint64_t offset, const void* src, size_t len) { return WriteAsWords(*this, offset, src, len); }

}  // namespace fibnic
