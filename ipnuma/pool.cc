#include "ipnuma/pool.h"

#include <sys/stat.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "device/ipnuma_regs.h"

namespace fibnic::ipnuma {
namespace {

std::string Hex(uint64_t v) {
  std::ostringstream os;
  os << "0x" << std::hex << v;
  return os.str();
}

// Reads the one number a sysfs attribute file holds (base 16 with 0x, else 10).
StatusOr<uint64_t> ReadSysfsNumber(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError(path + ": cannot read (" + std::strerror(errno) + ")");
  std::string text;
  std::getline(in, text);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  int base = 10;
  std::string_view digits = text;
  if (digits.starts_with("0x") || digits.starts_with("0X")) {
    base = 16;
    digits.remove_prefix(2);
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return InvalidArgument(path + ": '" + text + "' is not a number");
  }
  return v;
}

Status CheckPool(const BufferPool& p) {
  if (p.size == 0) return InvalidArgument("buffer pool " + p.source + " is empty");
  if (p.phys_base % ipnuma_regs::kBufferAlign != 0) {
    return InvalidArgument("buffer pool " + p.source + ": base " + Hex(p.phys_base) +
                           " is not 64-byte aligned");
  }
  if (p.phys_base > ipnuma_regs::kPaMask || p.size - 1 > ipnuma_regs::kPaMask - p.phys_base) {
    return InvalidArgument("buffer pool " + p.source + " does not fit 48-bit physical addresses");
  }
  return OkStatus();
}

}  // namespace

std::string BufferPool::Describe() const {
  return "[" + Hex(phys_base) + ", +" + Hex(size) + ") from " + source;
}

StatusOr<BufferPool> BufferPool::FromUdmabuf(const std::string& sysfs_dir) {
  BufferPool p;
  p.source = "u-dma-buf " + sysfs_dir;
  ASSIGN_OR_RETURN(p.phys_base, ReadSysfsNumber(sysfs_dir + "/phys_addr"));
  ASSIGN_OR_RETURN(p.size, ReadSysfsNumber(sysfs_dir + "/size"));
  RETURN_IF_ERROR(CheckPool(p));
  return p;
}

StatusOr<BufferPool> BufferPool::Reserved(uint64_t phys_base, uint64_t size) {
  BufferPool p{phys_base, size, "reserved range"};
  RETURN_IF_ERROR(CheckPool(p));
  return p;
}

StatusOr<BufferPool> BufferPool::FromFile(const std::string& path, uint64_t phys_base) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError(path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  BufferPool p{phys_base, static_cast<uint64_t>(st.st_size), "file " + path};
  RETURN_IF_ERROR(CheckPool(p));
  return p;
}

}  // namespace fibnic::ipnuma
