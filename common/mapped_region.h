// Memory shared with another process, named by a path: a regular file, or a
// BPF array map pinned on a bpffs that was made mmapable (BPF_F_MMAPABLE; its
// values, when page-sized, lie end to end in one region). The map is how a BAR
// reaches an XDP program (hwif/bpf_bar.h); this is the path-level part that
// tools use without a device backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace fibnic {

// True when path (or, for a path that does not exist yet, its directory)
// lies on a bpffs.
bool IsBpfFsPath(const std::string& path);

// A pinned BPF map opened by path (BPF_OBJ_GET) and what the kernel says it is.
struct PinnedMap {
  int fd = -1;
  uint32_t type = 0;
  uint32_t key_size = 0;
  uint32_t value_size = 0;
  uint32_t max_entries = 0;
  uint32_t flags = 0;
};
// NotFound when nothing is pinned at path. The caller owns fd.
StatusOr<PinnedMap> OpenPinnedMap(const std::string& path);

// A read-only shared view of the whole of what path names: a file at its own
// size, or a pinned mmapable array map (value_size x max_entries bytes).
class MappedRegion {
 public:
  static StatusOr<MappedRegion> Open(const std::string& path);
  MappedRegion(MappedRegion&& o) noexcept;
  MappedRegion& operator=(MappedRegion&&) = delete;
  MappedRegion(const MappedRegion&) = delete;
  ~MappedRegion();

  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // One aligned 32-bit load, as a bus reads a register (0 out of range).
  uint32_t Read32(size_t offset) const;

 private:
  MappedRegion() = default;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace fibnic
