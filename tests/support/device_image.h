// Device images set by hand, cell by cell, as the register spec lays them
// out (rather than through the compiler), so the codec and the write plans
// are checked against images no product code produced.
#pragma once

#include <cstdint>

#include "device/fibnic_image.h"

namespace fibnic::testing {

// Sets the code of one /24 (index = dst >> 8): 2-bit codes four to a byte,
// 4-bit codes four to a little-endian 16-bit word.
inline void SetCode(DeviceImage& img, uint32_t slash24, uint8_t code) {
  const uint32_t a = slash24 >> 2, s = slash24 & 3;
  if (img.caps.code_bits == 4) {
    uint16_t w = static_cast<uint16_t>(img.sram[2 * a] | (img.sram[2 * a + 1] << 8));
    w = static_cast<uint16_t>((w & ~(0xF << (4 * s))) | (code << (4 * s)));
    img.sram[2 * a] = static_cast<uint8_t>(w);
    img.sram[2 * a + 1] = static_cast<uint8_t>(w >> 8);
  } else {
    img.sram[a] = static_cast<uint8_t>((img.sram[a] & ~(3 << (2 * s))) | (code << (2 * s)));
  }
}

}  // namespace fibnic::testing
