// Identity checks shared by the device probes: read a read-only register and
// refuse the device when it does not hold what the register map says, with a
// message naming the device, register, offset, expected and found values.
#pragma once

#include <cstdint>
#include <string>

#include "hwif/bar.h"

namespace fibnic {

// "0x4e424946"
std::string Hex32(uint32_t v);

// Reads the 32-bit register at offset and checks (value & mask) == expected.
// what: e.g. "FIBNIC ID", "IP-NUMA VERSION (major)".
Status ExpectRegister(Bar& bar, const std::string& what, uint32_t offset, uint32_t expected, uint32_t mask = ~0u);

}  // namespace fibnic
