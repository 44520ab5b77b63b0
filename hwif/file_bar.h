// A regular file laid out as a BAR, mapped shared: the embedded default
// backend, and what the RTL testbench and emulators read and write. Several
// processes may map the same file; each 32-bit access is one aligned
// load/store on the shared mapping, so nobody sees a torn word.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hwif/mapped_bar.h"

namespace fibnic {

class FileBar : public MappedBar {
 public:
  // Opens the BAR file at path, which must be exactly `size` bytes. When the
  // file does not exist it is created with that size, zero-filled, with
  // `preset` (e.g. the device's read-only CSR block: ID/VERSION/CAPS) written
  // at offset 0. Creation is atomic: a half-written file is never visible
  // under path. An existing file of another size is refused, never resized.
  static StatusOr<std::unique_ptr<FileBar>> OpenOrCreate(const std::string& path, size_t size,
                                                          const std::vector<uint8_t>& preset);
  // Opens an existing BAR file; its size must be `size` bytes.
  static StatusOr<std::unique_ptr<FileBar>> Open(const std::string& path, size_t size);

  ~FileBar() override;
  FileBar(const FileBar&) = delete;
  FileBar& operator=(const FileBar&) = delete;

  // Starts write-back of the mapping (msync MS_ASYNC); readers of the file
  // already see every write.
  Status Flush() override;
  const std::string& path() const { return path_; }

 private:
  FileBar(std::string path, int fd, uint8_t* map, size_t size);
  std::string path_;
  int fd_ = -1;
  uint8_t* map_ = nullptr;
  size_t map_size_ = 0;
};

}  // namespace fibnic
