#include "hwif/bpf_bar.h"

#include <linux/bpf.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fibnic {
namespace {

long Bpf(int cmd, bpf_attr& attr) { return ::syscall(__NR_bpf, cmd, &attr, sizeof attr); }

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// The map's shape must be a BAR's: anything else pinned there is refused
// before it is mapped.
StatusOr<size_t> CheckMap(const PinnedMap& m, const std::string& path) {
  if (m.type != BPF_MAP_TYPE_ARRAY || m.value_size != kBpfBarPage || !(m.flags & BPF_F_MMAPABLE) || m.key_size != 4) {
    return FailedPrecondition("BPF map " + path + " is not an mmapable array of " + std::to_string(kBpfBarPage) +
                              "-byte values, so it is not a BAR map");
  }
  return size_t{m.max_entries} * kBpfBarPage;
}

}  // namespace

BpfBar::BpfBar(std::string path, int fd, uint8_t* map, size_t size)
    : path_(std::move(path)), fd_(fd), map_(map), map_size_(size) {
  set_mapping(map, size);
}

BpfBar::~BpfBar() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::unique_ptr<BpfBar>> BpfBar::Adopt(const std::string& path, int fd, size_t size) {
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    Status st = IoError(Errno("cannot mmap BPF map", path));
    ::close(fd);
    return st;
  }
  return std::unique_ptr<BpfBar>(new BpfBar(path, fd, static_cast<uint8_t*>(map), size));
}

StatusOr<std::unique_ptr<BpfBar>> BpfBar::OpenAnySize(const std::string& path) {
  ASSIGN_OR_RETURN(PinnedMap m, OpenPinnedMap(path));
  auto size = CheckMap(m, path);
  if (!size.ok()) {
    ::close(m.fd);
    return size.status();
  }
  return Adopt(path, m.fd, *size);
}

StatusOr<std::unique_ptr<BpfBar>> BpfBar::Open(const std::string& path, size_t size) {
  ASSIGN_OR_RETURN(auto bar, OpenAnySize(path));
  if (bar->size() != size) {
    return FailedPrecondition("BAR map " + path + " is " + std::to_string(bar->size()) + " bytes, expected " +
                              std::to_string(size) +
                              " for the configured device model; refusing to use it (remove the pin to start "
                              "from an empty device, or configure the model it was made for)");
  }
  return bar;
}

StatusOr<std::unique_ptr<BpfBar>> BpfBar::OpenOrCreate(const std::string& path, size_t size,
                                                        const std::vector<uint8_t>& preset) {
  if (size == 0 || size % kBpfBarPage != 0)
    return InvalidArgument("BAR map " + path + ": size must be a positive multiple of " + std::to_string(kBpfBarPage));
  if (preset.size() > size)
    return InvalidArgument("initial contents of " + path + " do not fit a BAR of " + std::to_string(size) + " bytes");
  auto existing = OpenPinnedMap(path);
  if (existing.ok()) {
    ::close(existing->fd);
    return Open(path, size);
  }
  if (existing.status().code() != StatusCode::kNotFound) return existing.status();

  bpf_attr attr{};
  attr.map_type = BPF_MAP_TYPE_ARRAY;
  attr.key_size = 4;
  attr.value_size = kBpfBarPage;
  attr.max_entries = static_cast<uint32_t>(size / kBpfBarPage);
  attr.map_flags = BPF_F_MMAPABLE;
  std::strncpy(attr.map_name, "fibnic_bar", sizeof attr.map_name - 1);
  const long fd = Bpf(BPF_MAP_CREATE, attr);
  if (fd < 0) return IoError(Errno("cannot create the BPF map (root or CAP_BPF needed) for", path));
  // The preset is written before the pin makes the map visible, so nobody
  // opens a half-initialised BAR.
  auto bar = Adopt(path, static_cast<int>(fd), size);
  if (!bar.ok()) return bar.status();
  RETURN_IF_ERROR((*bar)->Write(0, preset.data(), preset.size()));
  bpf_attr pin{};
  pin.pathname = reinterpret_cast<uint64_t>(path.c_str());
  pin.bpf_fd = static_cast<uint32_t>((*bar)->map_fd());
  if (Bpf(BPF_OBJ_PIN, pin) != 0) {
    if (errno == EEXIST) return Open(path, size);  // another creator's pin wins
    return IoError(Errno("cannot pin the BAR map at", path));
  }
  return bar;
}

}  // namespace fibnic
