#include "hwif/file_bar.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fibnic {
namespace {

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Writes the whole buffer at offset, retrying short writes.
Status PwriteAll(int fd, const std::vector<uint8_t>& bytes, const std::string& path) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return IoError(Errno("writing the initial contents of", path));
    done += static_cast<size_t>(n);
  }
  return OkStatus();
}

// Builds the file under a temporary name and links it into place, so a crash
// or a concurrent creator never leaves a half-initialised BAR under path.
Status CreateBarFile(const std::string& path, size_t size, const std::vector<uint8_t>& preset) {
  if (preset.size() > size) {
    return InvalidArgument("initial contents of " + path + " (" + std::to_string(preset.size()) +
                           " bytes) do not fit a BAR of " + std::to_string(size) + " bytes");
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return IoError(Errno("cannot create", tmp));
  Status st;
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) st = IoError(Errno("cannot size", tmp));
  if (st.ok()) st = PwriteAll(fd, preset, tmp);
  if (st.ok() && ::fsync(fd) != 0) st = IoError(Errno("cannot sync", tmp));
  ::close(fd);
  // link() fails with EEXIST if another process created path meanwhile; its
  // file wins and is opened (and size-checked) by the caller.
  if (st.ok() && ::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
    st = IoError(Errno("cannot create", path));
  }
  ::unlink(tmp.c_str());
  return st;
}

}  // namespace

FileBar::FileBar(std::string path, int fd, uint8_t* map, size_t size)
    : path_(std::move(path)), fd_(fd), map_(map), map_size_(size) {
  set_mapping(map, size);
}

FileBar::~FileBar() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::unique_ptr<FileBar>> FileBar::Open(const std::string& path, size_t size) {
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return IoError(Errno("cannot open BAR file", path));
  struct stat sb {};
  if (::fstat(fd, &sb) != 0) {
    Status st = IoError(Errno("cannot stat BAR file", path));
    ::close(fd);
    return st;
  }
  if (!S_ISREG(sb.st_mode)) {
    ::close(fd);
    return FailedPrecondition("BAR file " + path + " is not a regular file");
  }
  if (static_cast<uint64_t>(sb.st_size) != size) {
    ::close(fd);
    return FailedPrecondition("BAR file " + path + " is " + std::to_string(sb.st_size) + " bytes, expected " +
                              std::to_string(size) +
                              " for the configured device model; refusing to use or resize it (remove it to "
                              "start from an empty device, or configure the model it was made for)");
  }
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    Status st = IoError(Errno("cannot mmap BAR file", path));
    ::close(fd);
    return st;
  }
  return std::unique_ptr<FileBar>(new FileBar(path, fd, static_cast<uint8_t*>(map), size));
}

StatusOr<std::unique_ptr<FileBar>> FileBar::OpenOrCreate(const std::string& path, size_t size,
                                                         const std::vector<uint8_t>& preset) {
  if (size == 0) return InvalidArgument("BAR file " + path + ": size must be positive");
  struct stat sb {};
  if (::stat(path.c_str(), &sb) != 0) {
    if (errno != ENOENT) return IoError(Errno("cannot stat BAR file", path));
    RETURN_IF_ERROR(CreateBarFile(path, size, preset));
  }
  return Open(path, size);
}

// Other processes mapping or reading the file see every store at once (one
// page cache); Flush only starts write-back, like a device whose SRAM is not
// durable either. A synchronous msync per batch would cost milliseconds.
Status FileBar::Flush() {
  if (::msync(map_, map_size_, MS_ASYNC) != 0) return IoError(Errno("msync of BAR file", path_));
  return OkStatus();
}

}  // namespace fibnic
