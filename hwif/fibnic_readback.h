// Reading a FIBNIC's tables back into a DeviceImage (warm restart, fibnicctl,
// verification). Only the CSR/table area and SRAM4 are read — not the
// reserved gap between them — since each read is a bus transaction on PCI.
#pragma once

#include <cstdint>

#include "hwif/bar.h"
#include "device/fibnic_image.h"

namespace fibnic {

struct FibnicReadback {
  DeviceImage image;
  uint32_t generation = 0;
};

// Probes the device (refusing anything that is not a FIBNIC we can drive) and
// decodes its tables with the image codec.
StatusOr<FibnicReadback> ReadFibnic(Bar& bar);

}  // namespace fibnic
