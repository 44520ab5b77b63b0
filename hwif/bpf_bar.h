// The file backend's twin for a BAR that an XDP program must read live: the
// BAR held in a BPF array map (BPF_F_MMAPABLE, one page per element, so the
// map's values are one contiguous region that mmaps like the file), pinned
// in a bpffs. fibnicd, the emulator's user-space path and its XDP program
// all see the same bytes: a host write is visible to the next frame, as on
// the dual-ported SRAM. No copy of the BAR is ever made.
//
// The backend is chosen by the path: a path on a bpffs (IsBpfFsPath) is a
// pinned map, any other path a regular file (FileBar).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/mapped_region.h"
#include "hwif/mapped_bar.h"

namespace fibnic {

// Bytes per map element: the kernel caps an array map's value size far below
// a BAR's, and page-sized values are laid end to end in the mmapable area.
inline constexpr size_t kBpfBarPage = 4096;

class BpfBar : public MappedBar {
 public:
  // The map pinned at path; it must be a BAR map (array, mmapable, page-sized
  // values) of exactly `size` bytes.
  static StatusOr<std::unique_ptr<BpfBar>> Open(const std::string& path, size_t size);
  // As Open; when nothing is pinned at path, a zeroed map of `size` bytes
  // (a multiple of kBpfBarPage) is made, `preset` written at offset 0, then
  // pinned. Someone else's pin made meanwhile wins and is opened instead.
  static StatusOr<std::unique_ptr<BpfBar>> OpenOrCreate(const std::string& path, size_t size,
                                                         const std::vector<uint8_t>& preset);
  // The map at path at its own size (for tools that decode whatever is there).
  static StatusOr<std::unique_ptr<BpfBar>> OpenAnySize(const std::string& path);

  ~BpfBar() override;
  BpfBar(const BpfBar&) = delete;
  BpfBar& operator=(const BpfBar&) = delete;

  // The map is memory: every store is visible at once; nothing to flush.
  Status Flush() override { return OkStatus(); }
  const std::string& path() const { return path_; }
  // The map's file descriptor, for a BPF program that reads the BAR.
  int map_fd() const { return fd_; }

 private:
  BpfBar(std::string path, int fd, uint8_t* map, size_t size);
  // Maps the map fd refers to (taking the fd; closed on failure).
  static StatusOr<std::unique_ptr<BpfBar>> Adopt(const std::string& path, int fd, size_t size);
  std::string path_;
  int fd_ = -1;
  uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
};

}  // namespace fibnic
