// The BAR file fibnicd's file backend writes, opened the way the card sees
// its BAR0: the size comes from the CAPS the file holds (ID and VERSION must
// be the contract's), then the whole file is mapped shared, so every host
// write is visible to the next frame, like the dual-ported SRAM.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "device/fibnic_regs.h"
#include "hwif/file_bar.h"

namespace fibnic::emu {

struct DeviceBar {
  std::unique_ptr<FileBar> file;
  regs::Caps caps;
};

StatusOr<DeviceBar> OpenDeviceBar(const std::string& path);

}  // namespace fibnic::emu
