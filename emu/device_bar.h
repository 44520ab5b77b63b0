// The BAR fibnicd writes, opened the way the card sees its BAR0: the size
// comes from the CAPS it holds (ID and VERSION must be the contract's), then
// the whole BAR is mapped shared, so every host write is visible to the next
// frame, like the dual-ported SRAM. Either a regular file (FileBar) or, for a
// path on a bpffs, a BAR map pinned there (BpfBar): the one an XDP program
// can read too.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"
#include "device/fibnic_regs.h"
#include "hwif/mapped_bar.h"

namespace fibnic::emu {

struct DeviceBar {
  std::unique_ptr<MappedBar> bar;
  regs::Caps caps;
  int map_fd = -1;  // the BPF map's descriptor for a pinned BAR map; -1 for a file
};

StatusOr<DeviceBar> OpenDeviceBar(const std::string& path);

}  // namespace fibnic::emu
