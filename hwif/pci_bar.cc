#include "hwif/pci_bar.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace fibnic {
namespace {

std::string Errno(const std::string& what, const std::string& path) {
  return what + " " + path + ": " + std::strerror(errno);
}

// Parses 1..max_digits hex digits; nullopt-like via bool.
bool ParseHex(std::string_view s, size_t max_digits, uint32_t& out) {
  if (s.empty() || s.size() > max_digits) return false;
  out = 0;
  for (char c : s) {
    int d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else return false;
    out = out * 16 + static_cast<uint32_t>(d);
  }
  return true;
}

// sysfs "vendor"/"device" files hold "0x10ee\n".
bool ReadSysfsHex(const std::string& path, uint32_t& out) {
  std::ifstream in(path);
  std::string s;
  if (!(in >> s)) return false;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s = s.substr(2);
  return ParseHex(s, 8, out);
}

}  // namespace

std::string PciId::ToString() const {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%04x", vendor, device);
  return buf;
}

StatusOr<std::string> NormalizeBdf(std::string_view text) {
  auto bad = [&](const char* why) {
    return InvalidArgument("bad PCI address '" + std::string(text) + "': " + why +
                           " (expected DDDD:BB:DD.F or BB:DD.F, hex)");
  };
  std::string_view rest = text;
  uint32_t domain = 0, bus, dev, fn;
  // Count colons: two means a domain is present.
  const auto colons = std::count(text.begin(), text.end(), ':');
  if (colons == 2) {
    auto c = rest.find(':');
    if (!ParseHex(rest.substr(0, c), 4, domain)) return bad("domain");
    rest = rest.substr(c + 1);
  } else if (colons != 1) {
    return bad("wrong number of ':'");
  }
  auto c = rest.find(':');
  if (!ParseHex(rest.substr(0, c), 2, bus)) return bad("bus");
  rest = rest.substr(c + 1);
  auto dot = rest.find('.');
  if (dot == std::string_view::npos) return bad("missing '.function'");
  if (!ParseHex(rest.substr(0, dot), 2, dev) || dev > 0x1f) return bad("device must be 00..1f");
  if (!ParseHex(rest.substr(dot + 1), 1, fn) || fn > 7) return bad("function must be 0..7");
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return std::string(buf);
}

StatusOr<PciId> ParsePciId(std::string_view text) {
  auto c = text.find(':');
  uint32_t v, d;
  if (c == std::string_view::npos || !ParseHex(text.substr(0, c), 4, v) || !ParseHex(text.substr(c + 1), 4, d)) {
    return InvalidArgument("bad PCI ID '" + std::string(text) + "' (expected VVVV:DDDD, hex vendor:device)");
  }
  return PciId{static_cast<uint16_t>(v), static_cast<uint16_t>(d)};
}

StatusOr<std::vector<std::string>> FindPciDevices(const std::string& sysfs_root, const PciId& id) {
  DIR* dir = ::opendir(sysfs_root.c_str());
  if (dir == nullptr) return IoError(Errno("cannot list PCI devices in", sysfs_root));
  std::vector<std::string> out;
  while (dirent* e = ::readdir(dir)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    const std::string base = sysfs_root + "/" + name;
    uint32_t vendor, device;
    if (!ReadSysfsHex(base + "/vendor", vendor) || !ReadSysfsHex(base + "/device", device)) continue;
    if (vendor == id.vendor && device == id.device) out.push_back(name);
  }
  ::closedir(dir);
  std::sort(out.begin(), out.end());
  return out;
}

StatusOr<std::string> ResolvePciDevice(const std::string& sysfs_root, std::string_view selector) {
  if (selector.find('.') != std::string_view::npos) {
    ASSIGN_OR_RETURN(std::string bdf, NormalizeBdf(selector));
    struct stat sb {};
    if (::stat((sysfs_root + "/" + bdf).c_str(), &sb) != 0) {
      return NotFound("no PCI device " + bdf + " in " + sysfs_root);
    }
    return bdf;
  }
  ASSIGN_OR_RETURN(PciId id, ParsePciId(selector));
  ASSIGN_OR_RETURN(std::vector<std::string> found, FindPciDevices(sysfs_root, id));
  if (found.empty()) return NotFound("no PCI device with ID " + id.ToString() + " in " + sysfs_root);
  if (found.size() > 1) {
    std::string list;
    for (const auto& b : found) list += (list.empty() ? "" : ", ") + b;
    return FailedPrecondition("PCI ID " + id.ToString() + " matches " + std::to_string(found.size()) +
                              " devices (" + list + "); select one by its address");
  }
  return found.front();
}

PciBar::PciBar(std::string bdf, int fd, uint8_t* map, size_t size)
    : bdf_(std::move(bdf)), fd_(fd), map_(map), map_size_(size) {
  set_mapping(map, size);
}

PciBar::~PciBar() {
  if (map_ != nullptr) ::munmap(map_, map_size_);
  if (fd_ >= 0) ::close(fd_);
}

StatusOr<std::unique_ptr<PciBar>> PciBar::Open(const std::string& sysfs_root, const std::string& bdf,
                                               const std::string& resource) {
  const std::string dev = sysfs_root + "/" + bdf;
  // A function whose memory decoding is off answers all-ones; turn it on the
  // way the kernel's own sysfs interface offers (needs root, like the mmap).
  const std::string enable = dev + "/enable";
  {
    std::ifstream in(enable);
    std::string v;
    if (in >> v && v == "0") {
      std::ofstream out(enable);
      if (!(out << "1" << std::flush)) return PermissionDenied("cannot enable PCI device " + bdf + " via " + enable);
    }
  }
  const std::string path = dev + "/" + resource;
  int fd = ::open(path.c_str(), O_RDWR | O_SYNC | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EACCES) {
      // The packaged services run as their own users: the file is root's
      // until the udev rule hands it to the service's group.
      return PermissionDenied(Errno("cannot open PCI BAR", path) +
                              " (the service's group needs rw on it: mark the card for the package's udev rule, "
                              "/lib/udev/rules.d/60-fibnic.rules or 60-ipnumad.rules)");
    }
    return IoError(Errno("cannot open PCI BAR", path));
  }
  struct stat sb {};
  if (::fstat(fd, &sb) != 0 || sb.st_size <= 0) {
    Status st = IoError("PCI BAR " + path + " has no usable size");
    ::close(fd);
    return st;
  }
  const size_t size = static_cast<size_t>(sb.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    Status st = IoError(Errno("cannot mmap PCI BAR", path));
    ::close(fd);
    return st;
  }
  return std::unique_ptr<PciBar>(new PciBar(bdf, fd, static_cast<uint8_t*>(map), size));
}

Status PciBar::Flush() {
  ASSIGN_OR_RETURN(uint32_t id, Read32(0));
  if (id == 0xFFFFFFFFu) {
    return Unavailable("PCI device " + bdf_ + " answered all-ones on the read-back fence (removed or link down)");
  }
  return OkStatus();
}

}  // namespace fibnic
