#include "common/mapped_region.h"

#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace fibnic {
namespace {

bool OnBpfFs(const std::string& path) {
  struct statfs sf {};
  return ::statfs(path.c_str(), &sf) == 0 && static_cast<uint64_t>(sf.f_type) == BPF_FS_MAGIC;
}

}  // namespace

bool IsBpfFsPath(const std::string& path) {
  if (::access(path.c_str(), F_OK) == 0) return OnBpfFs(path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  return OnBpfFs(dir.empty() ? "." : dir);
}

StatusOr<PinnedMap> OpenPinnedMap(const std::string& path) {
  bpf_attr attr{};
  attr.pathname = reinterpret_cast<uint64_t>(path.c_str());
  const long fd = ::syscall(__NR_bpf, BPF_OBJ_GET, &attr, sizeof attr);
  if (fd < 0) {
    const int err = errno;
    std::string why = "cannot open the BPF map pinned at " + path + ": " + std::strerror(err);
    // A bpffs refuses every name with a dot (EPERM, even for root): say so,
    // or "Operation not permitted" sends one looking at privileges.
    if (err == EPERM && std::filesystem::path(path).filename().string().find('.') != std::string::npos) {
      why += " (a bpffs refuses names with a '.')";
    }
    return err == ENOENT ? NotFound(why) : IoError(why);
  }
  bpf_map_info info{};
  bpf_attr q{};
  q.info.bpf_fd = static_cast<uint32_t>(fd);
  q.info.info_len = sizeof info;
  q.info.info = reinterpret_cast<uint64_t>(&info);
  if (::syscall(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &q, sizeof q) != 0) {
    const std::string why = "cannot query the BPF object pinned at " + path + ": " + std::strerror(errno);
    ::close(static_cast<int>(fd));
    return IoError(why);
  }
  return PinnedMap{static_cast<int>(fd), info.type, info.key_size, info.value_size, info.max_entries, info.map_flags};
}

StatusOr<MappedRegion> MappedRegion::Open(const std::string& path) {
  MappedRegion r;
  int fd = -1;
  if (IsBpfFsPath(path)) {
    ASSIGN_OR_RETURN(PinnedMap m, OpenPinnedMap(path));
    fd = m.fd;
    if (m.type != BPF_MAP_TYPE_ARRAY || !(m.flags & BPF_F_MMAPABLE) || m.value_size % 8 != 0) {
      ::close(fd);
      return FailedPrecondition("BPF map " + path + " is not an mmapable array of whole 8-byte values");
    }
    r.size_ = size_t{m.value_size} * m.max_entries;
  } else {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return IoError("cannot open '" + path + "': " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) == 0) r.size_ = static_cast<size_t>(st.st_size);
  }
  void* map = r.size_ > 0 ? ::mmap(nullptr, r.size_, PROT_READ, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED) return IoError("cannot map '" + path + "'");
  r.data_ = static_cast<const uint8_t*>(map);
  return r;
}

MappedRegion::MappedRegion(MappedRegion&& o) noexcept : data_(o.data_), size_(o.size_) {
  o.data_ = nullptr;
  o.size_ = 0;
}

MappedRegion::~MappedRegion() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

uint32_t MappedRegion::Read32(size_t offset) const {
  if (offset % 4 != 0 || offset + 4 > size_) return 0;
  return *reinterpret_cast<const volatile uint32_t*>(data_ + offset);
}

}  // namespace fibnic
