// Opens the FIBNIC the config names: the file backend (created with the
// configured model's CAPS when absent and allowed) or the PCI device (by BDF
// or vendor:device), probed so a wrong or foreign device is refused with a
// clear message before anything is written.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "fibnicd/fibnicd_config.h"
#include "hwif/bar.h"
#include "device/fibnic_regs.h"

namespace fibnic {

struct OpenedDevice {
  std::unique_ptr<Bar> bar;
  regs::Caps caps;
  std::string description;  // "file /var/lib/fibnic/bar0.img, 2-bit (4 MiB SRAM, 3 next-hops)"
  std::string bar_path;     // file backend: the image path
};

// bar_path: the file backend's image (ResolveBarPath or --bar).
StatusOr<OpenedDevice> OpenDevice(const FibnicdConfig::Device& device, const std::string& bar_path);

// The config's model.
regs::Caps ConfiguredCaps(const FibnicdConfig::Device& device);

}  // namespace fibnic
