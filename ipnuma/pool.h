// The physically contiguous memory ipnumad may export: a u-dma-buf device
// (sysfs phys_addr/size), a reserved physical range (memmap=/reserved-memory),
// or, for tests and emulation, a file whose size is the pool size at a stated
// base. On a bpffs that file is a pinned BPF array map (mmapable, 4 KiB
// values), the memory an XDP receive path can write into. Exports are checked
// against the pool: memory outside it is never offered to a peer.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace fibnic::ipnuma {

struct BufferPool {
  uint64_t phys_base = 0;
  uint64_t size = 0;
  std::string source;  // where the numbers came from, for messages and the API

  bool Contains(uint64_t base, uint64_t length) const {
    return base >= phys_base && length <= size && base - phys_base <= size - length;
  }
  std::string Describe() const;  // "[0x1800000000, +0x100000) from u-dma-buf /sys/..."

  // sysfs_dir holds phys_addr ("0x...") and size (decimal bytes), as
  // /sys/class/u-dma-buf/<name>/ does.
  static StatusOr<BufferPool> FromUdmabuf(const std::string& sysfs_dir);
  static StatusOr<BufferPool> Reserved(uint64_t phys_base, uint64_t size);
  // A regular file, or a BPF map pinned at a path on a bpffs, stands for the
  // buffer memory; its size is the pool size. size (0: not given) must equal
  // it; when nothing is pinned at a bpffs path, a zeroed map of size bytes (a
  // multiple of 4096) is made and pinned there. The errors name pool.size.
  static StatusOr<BufferPool> FromFile(const std::string& path, uint64_t phys_base, uint64_t size = 0);
};

}  // namespace fibnic::ipnuma
