// Helpers shared by every Bar backend: bounds checks with a clear message and
// the bus model's "n bytes = ceil(n/4) aligned 32-bit writes, ascending" rule,
// expressed through Write32 so a wrapping backend (recording) sees each word.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hwif/bar.h"

namespace fibnic {

// "0x001000" style offsets in messages.
std::string HexOffset(uint64_t offset);

// OK if [offset, offset+len) lies inside a BAR of bar_size bytes; else an
// OUT_OF_RANGE naming the access, the range and what (e.g. "write").
Status CheckRange(const char* what, uint64_t offset, size_t len, size_t bar_size);

// Writes len bytes at a 4-aligned offset as successive bar.Write32 calls; a
// trailing partial word is read (Read32) and merged so its other bytes keep
// their value.
Status WriteAsWords(Bar& bar, uint64_t offset, const void* src, size_t len);

}  // namespace fibnic
