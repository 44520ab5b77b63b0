// The one narrow interface to device memory. Implementations: pci (sysfs
// resource0 mmap), file (a regular file laid out as the BAR), recording (logs
// every bus write, for tests). Everything that touches a device goes through it.
//
// Bus model: the device sees aligned 32-bit accesses only; a Write of n bytes
// is performed as ceil(n/4) aligned 32-bit writes in ascending address order,
// each atomic for the device. Callers that need a particular order (VALID last)
// issue separate writes in that order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace fibnic {

class Bar {
 public:
  virtual ~Bar() = default;
  virtual size_t size() const = 0;
  // Reads len bytes at offset (any alignment; performed as 32-bit reads).
  virtual Status Read(uint64_t offset, void* dst, size_t len) = 0;
  // One 32-bit bus write; offset must be 4-aligned.
  virtual Status Write32(uint64_t offset, uint32_t value) = 0;
  // Writes len bytes at a 4-aligned offset as successive 32-bit writes
  // (a trailing partial word is read-modify-written).
  virtual Status Write(uint64_t offset, const void* src, size_t len) = 0;
  // Makes prior writes durable/visible (msync for files; a read-back fence on PCI).
  virtual Status Flush() = 0;

  StatusOr<uint32_t> Read32(uint64_t offset) {
    uint32_t v = 0;
    Status st = Read(offset, &v, sizeof v);  // little-endian host, as the BAR
    if (!st.ok()) return st;
    return v;
  }
};

}  // namespace fibnic
