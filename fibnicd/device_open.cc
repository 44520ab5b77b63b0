#include "fibnicd/device_open.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "hwif/fibnic_device.h"
#include "hwif/pci_bar.h"

namespace fibnic {

regs::Caps ConfiguredCaps(const FibnicdConfig::Device& device) {
  return device.code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
}

namespace {

StatusOr<OpenedDevice> OpenFile(const FibnicdConfig::Device& device, const std::string& path) {
  regs::Caps caps = ConfiguredCaps(device);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return IoError("BAR file " + path + ": " + std::strerror(errno));
    if (!device.create)
      return NotFound("BAR file " + path + " does not exist and device.create is false");
    std::error_code ec;
    std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    if (ec) return IoError("cannot create directory " + dir.string() + " for the BAR file: " + ec.message());
  }
  ASSIGN_OR_RETURN(auto bar, OpenFibnicFile(path, caps));
  // A file made before DROP announces none: its blackholes keep punting.
  ASSIGN_OR_RETURN(caps, ProbeFibnic(*bar, &caps));
  OpenedDevice d;
  d.bar = std::move(bar);
  d.caps = caps;
  d.bar_path = path;
  d.description = "file " + path + ", " + DescribeModel(caps);
  return d;
}

StatusOr<OpenedDevice> OpenPci(const FibnicdConfig::Device& device) {
  std::string selector = device.bdf;
  if (selector.empty()) {
    char id[16];
    std::snprintf(id, sizeof id, "%04x:%04x", *device.vendor_id, *device.device_id);
    selector = id;
  }
  ASSIGN_OR_RETURN(std::string bdf, ResolvePciDevice(kSysfsPciDevices, selector));
  ASSIGN_OR_RETURN(auto bar, PciBar::Open(kSysfsPciDevices, bdf));
  regs::Caps want = ConfiguredCaps(device);
  auto caps = ProbeFibnic(*bar, &want);
  if (!caps.ok()) return caps.status().WithContext("PCI device " + bdf);
  OpenedDevice d;
  d.bar = std::move(bar);
  d.caps = *caps;
  d.description = "pci " + bdf + ", " + DescribeModel(*caps);
  return d;
}

}  // namespace

StatusOr<OpenedDevice> OpenDevice(const FibnicdConfig::Device& device, const std::string& bar_path) {
  if (device.backend == DeviceBackend::kPci) return OpenPci(device);
  return OpenFile(device, bar_path);
}

}  // namespace fibnic
