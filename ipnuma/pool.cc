#include "ipnuma/pool.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/mapped_region.h"
#include "device/ipnuma_regs.h"
#include "hwif/bpf_bar.h"

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

// The pool as a BPF map pinned at path: the map's size (the values lie end to
// end in its mmap), or a zeroed one of `size` bytes made when none is pinned.
StatusOr<BufferPool> FromMap(const std::string& path, uint64_t phys_base, uint64_t size) {
  auto pinned = BpfBar::OpenAnySize(path);  // a map's shape checked as for a BAR
  if (pinned.status().code() == StatusCode::kFailedPrecondition) {
    return FailedPrecondition("BPF map " + path + " cannot be the buffer pool: it is not an mmapable array of " +
                              std::to_string(kBpfBarPage) + "-byte values");
  }
  if (!pinned.ok() && pinned.status().code() != StatusCode::kNotFound) return pinned.status();
  if (pinned.ok()) {
    const uint64_t have = (*pinned)->size();
    if (size != 0 && size != have) {
      return InvalidArgument("pool.size " + Hex(size) + " differs from the size of the BPF map pinned at " + path +
                             " (" + Hex(have) + "); leave it out or make them equal");
    }
    size = have;
  } else {
    if (size == 0) {
      return NotFound("no BPF map is pinned at " + path + " and pool.size is not set: give pool.size to have one "
                      "made there");
    }
    if (size % kBpfBarPage != 0) {
      return InvalidArgument("pool.size " + Hex(size) + " for the BPF map at " + path + " is not a multiple of " +
                             std::to_string(kBpfBarPage) + " (the map's value size)");
    }
    if (size / kBpfBarPage > UINT32_MAX) {
      return InvalidArgument("pool.size " + Hex(size) + " for the BPF map at " + path + " is more than 2^32 values");
    }
    // A map's memory is zeroed when it is made; nothing to preset.
    RETURN_IF_ERROR(BpfBar::OpenOrCreate(path, size, {}).status());
  }
  BufferPool p{phys_base, size, "BPF map " + path};
  RETURN_IF_ERROR(CheckPool(p));
  return p;
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

StatusOr<BufferPool> BufferPool::FromFile(const std::string& path, uint64_t phys_base, uint64_t size) {
  if (IsBpfFsPath(path)) return FromMap(path, phys_base, size);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError(path + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  BufferPool p{phys_base, static_cast<uint64_t>(st.st_size), "file " + path};
  if (size != 0 && size != p.size) {
    return InvalidArgument("pool.size " + Hex(size) + " differs from the size of " + path + " (" + Hex(p.size) +
                           "); leave it out or make them equal");
  }
  RETURN_IF_ERROR(CheckPool(p));
  return p;
}

}  // namespace fibnic::ipnuma
