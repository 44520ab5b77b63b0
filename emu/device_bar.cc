#include "emu/device_bar.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fibnic::emu {
namespace {

uint32_t Le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }

std::string Hex(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

}  // namespace

StatusOr<DeviceBar> OpenDeviceBar(const std::string& path) {
  uint8_t csr[regs::kOffCaps2 + 4];
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return IoError("cannot open BAR file " + path + ": " + std::strerror(errno));
  const ssize_t n = ::pread(fd, csr, sizeof csr, 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof csr))
    return FailedPrecondition("BAR file " + path + " is too short to hold the CSR block (ID .. CAPS2)");
  if (Le32(csr + regs::kOffId) != regs::kId)
    return FailedPrecondition("BAR file " + path + ": ID is " + Hex(Le32(csr + regs::kOffId)) + ", not a FIBNIC (" +
                              Hex(regs::kId) + ")");
  if (Le32(csr + regs::kOffVersion) != regs::kVersion)
    return FailedPrecondition("BAR file " + path + ": VERSION " + Hex(Le32(csr + regs::kOffVersion)) +
                              ", this emulator implements " + Hex(regs::kVersion));
  DeviceBar bar;
  bar.caps = regs::Caps::Decode(Le32(csr + regs::kOffCaps0), Le32(csr + regs::kOffCaps1), Le32(csr + regs::kOffCaps2));
  if (!(bar.caps == regs::Caps::Model2Bit()) && !(bar.caps == regs::Caps::Model4Bit()))
    return FailedPrecondition("BAR file " + path + ": CAPS describe neither device model (2- or 4-bit codes)");
  auto file = FileBar::Open(path, bar.caps.bar_bytes());
  if (!file.ok()) return file.status();
  bar.file = std::move(*file);
  return bar;
}

}  // namespace fibnic::emu
