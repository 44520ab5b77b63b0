#include "emu/device_bar.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "device/fibnic_image_codec.h"
#include "hwif/bpf_bar.h"
#include "hwif/file_bar.h"

namespace fibnic::emu {
namespace {

// The file's CSR block, checked by the codec every reader of a BAR uses (ID,
// VERSION major, CAPS, a file holding the whole layout), from a read-only map
// of the file at its own size.
StatusOr<BarHeader> ReadHeader(const std::string& path) {
  if (IsBpfFsPath(path)) {
    ASSIGN_OR_RETURN(auto map, BpfBar::OpenAnySize(path));
    auto header = DecodeBarHeader(map->data(), map->size());
    if (!header.ok()) return header.status().WithContext("BAR map " + path);
    return header;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open BAR file " + path + ": " + std::strerror(errno));
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) {
    const int err = errno;
    ::close(fd);
    return IoError("cannot stat BAR file " + path + ": " + std::strerror(err));
  }
  const size_t size = static_cast<size_t>(sb.st_size);
  void* map = size == 0 ? nullptr : ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) return IoError("cannot map BAR file " + path + ": " + std::strerror(err));
  auto header = DecodeBarHeader(static_cast<const uint8_t*>(map), size);
  if (map != nullptr) ::munmap(map, size);
  if (!header.ok()) return header.status().WithContext("BAR file " + path);
  return header;
}

}  // namespace

StatusOr<DeviceBar> OpenDeviceBar(const std::string& path) {
  ASSIGN_OR_RETURN(BarHeader header, ReadHeader(path));
  // The emulator's own rules on top of the codec's: it implements exactly
  // this VERSION and the two device models, nothing else the CAPS could say.
  if (header.version != regs::kVersion) {
    return FailedPrecondition("BAR file " + path + ": VERSION minor " + std::to_string(header.version & 0xffff) +
                              ", this emulator implements minor " + std::to_string(regs::kVersion & 0xffff));
  }
  DeviceBar bar;
  bar.caps = header.caps;
  if (!bar.caps.SameModel(regs::Caps::Model2Bit()) && !bar.caps.SameModel(regs::Caps::Model4Bit()))
    return FailedPrecondition("BAR file " + path + ": CAPS describe neither device model (2- or 4-bit codes)");
  // The codec accepts a file longer than the layout; the mapping refuses it.
  if (IsBpfFsPath(path)) {
    auto map = BpfBar::Open(path, bar.caps.bar_bytes());
    if (!map.ok()) return map.status();
    bar.map_fd = (*map)->map_fd();
    bar.bar = std::move(*map);
  } else {
    auto file = FileBar::Open(path, bar.caps.bar_bytes());
    if (!file.ok()) return file.status();
    bar.bar = std::move(*file);
  }
  return bar;
}

}  // namespace fibnic::emu
