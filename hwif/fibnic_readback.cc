#include "hwif/fibnic_readback.h"

#include <vector>

#include "hwif/fibnic_device.h"
#include "device/fibnic_image_codec.h"

namespace fibnic {

StatusOr<FibnicReadback> ReadFibnic(Bar& bar) {
  ASSIGN_OR_RETURN(regs::Caps caps, ProbeFibnic(bar));
  std::vector<uint8_t> bytes(caps.bar_bytes(), 0);
  const uint32_t tables_end = regs::NeighOffset(caps.neigh_entries);
  RETURN_IF_ERROR(bar.Read(0, bytes.data(), tables_end).WithContext("reading FIBNIC tables"));
  RETURN_IF_ERROR(
      bar.Read(regs::kOffSram4, bytes.data() + regs::kOffSram4, caps.sram_bytes()).WithContext("reading FIBNIC SRAM4"));
  ASSIGN_OR_RETURN(auto header, DecodeBarHeader(bytes.data(), bytes.size()));
  ASSIGN_OR_RETURN(DeviceImage image, DecodeBar(bytes.data(), bytes.size()));
  return FibnicReadback{std::move(image), header.generation};
}

}  // namespace fibnic
