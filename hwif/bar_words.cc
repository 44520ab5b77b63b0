#include "hwif/bar_words.h"

#include <cstdio>
#include <cstring>

namespace fibnic {

std::string HexOffset(uint64_t offset) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%06llx", static_cast<unsigned long long>(offset));
  return buf;
}

Status CheckRange(const char* what, uint64_t offset, size_t len, size_t bar_size) {
  if (offset > bar_size || len > bar_size - offset) {
    return OutOfRange(std::string(what) + " of " + std::to_string(len) + " bytes at " + HexOffset(offset) +
                      " is outside the BAR (" + std::to_string(bar_size) + " bytes)");
  }
  return OkStatus();
}

Status WriteAsWords(Bar& bar, uint64_t offset, const void* src, size_t len) {
  if (offset % 4 != 0) return InvalidArgument("bus write at " + HexOffset(offset) + " is not 4-byte aligned");
  RETURN_IF_ERROR(CheckRange("write", offset, len, bar.size()));
  const auto* p = static_cast<const uint8_t*>(src);
  size_t done = 0;
  for (; done + 4 <= len; done += 4) {
    uint32_t v;
    std::memcpy(&v, p + done, 4);
    RETURN_IF_ERROR(bar.Write32(offset + done, v));
  }
  if (done < len) {
    ASSIGN_OR_RETURN(uint32_t v, bar.Read32(offset + done));
    std::memcpy(&v, p + done, len - done);  // little-endian: low bytes first, as on the bus
    RETURN_IF_ERROR(bar.Write32(offset + done, v));
  }
  return OkStatus();
}

}  // namespace fibnic
