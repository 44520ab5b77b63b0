#include "hwif/fibnic_readback.h"

#include <vector>

#include "hwif/fibnic_device.h"
#include "device/fibnic_image_codec.h"

namespace fibnic {

StatusOr<FibnicReadback> ReadFibnic(Bar& bar) {
  ASSIGN_OR_RETURN(regs::Caps caps, ProbeFibnic(bar));
  // The tables, then SRAM4 straight into the image: never a copy of the
  // whole BAR (20 MB, most of it the reserved gap between the two).
  std::vector<uint8_t> tables(regs::NeighOffset(caps.neigh_entries));
  RETURN_IF_ERROR(bar.Read(0, tables.data(), tables.size()).WithContext("reading FIBNIC tables"));
  BarHeader header;
  ASSIGN_OR_RETURN(DeviceImage image, DecodeBarTables(tables.data(), tables.size(), caps.bar_bytes(), &header));
  tables = {};
  RETURN_IF_ERROR(bar.Read(regs::kOffSram4, image.sram.data(), image.sram.size()).WithContext("reading FIBNIC SRAM4"));
  return FibnicReadback{std::move(image), header.generation};
}

}  // namespace fibnic
