// Random device tables for the bench: every table region populated with a mix
// of VALID/invalid entries, overlapping TCAM entries, duplicate neighbours and
// next-hops on ports the device does not have, so every decision path runs.
#pragma once

#include <random>

#include "device/fibnic_image.h"

namespace fibnic::fpga {

struct RandomImageOptions {
  double sram_fill = 1.0;  // share of SRAM words holding non-zero codes
  uint32_t control = regs::kControlV4Enable | regs::kControlV6Enable;
};

DeviceImage RandomImage(const regs::Caps& caps, const RandomImageOptions& opt, std::mt19937& rng);

}  // namespace fibnic::fpga
