// DeviceImage <-> whole BAR0 bytes (docs/contract/FIBNIC.md, "BAR0 layout").
//
// EncodeBar lays out everything the host owns (ID, VERSION, CAPS, CONTROL,
// GENERATION, PORT_MAC, NEXTHOP, TCAM6, NEIGH, SRAM4) — what fibnic-compile
// writes as an image file and what a file-backed device starts from.
// DecodeBar reads a BAR back (readback check, fibnicctl, tests) and refuses
// anything that is not a FIBNIC v1 with a layout this host can drive.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/status.h"
#include "device/fibnic_image.h"

namespace fibnic {

// The CSR block of a BAR, decoded and checked.
struct BarHeader {
  uint32_t id = 0;
  uint32_t version = 0;
  regs::Caps caps;
  uint32_t control = 0;
  uint32_t generation = 0;
  uint32_t scratch = 0;
};

// OK if the caps describe a layout that fits the v1 map (code bits 2 or 4,
// next-hop entries = 2^code bits, tables inside their windows).
Status CheckCaps(const regs::Caps& caps);

// OK if NEXTHOP[index] may hold `e` on a device with these caps: a DROP entry
// only where CAPS2 announce DROP (an older device would forward it to port
// 0), and never with CONNECTED (the contract gives the pair no meaning).
Status CheckNexthopEntry(const regs::Caps& caps, uint32_t index, const regs::NexthopEntry& e);

// The whole BAR0 (caps.bar_bytes() bytes); PORT_COUNTERS and SCRATCH are zero.
std::vector<uint8_t> EncodeBar(const DeviceImage& image, uint32_t generation = 0);
// Same, into caller memory of at least image.caps.bar_bytes() bytes.
Status EncodeBarInto(const DeviceImage& image, uint32_t generation, uint8_t* bar, size_t bar_size);

// Checks ID, VERSION major, CAPS and that bar_size holds the whole layout.
StatusOr<BarHeader> DecodeBarHeader(const uint8_t* bar, size_t bar_size);
StatusOr<DeviceImage> DecodeBar(const uint8_t* bar, size_t bar_size);
// The same without SRAM4 (left zero, for the caller to read into image.sram):
// `tables` is the start of a BAR of bar_size bytes, read up to at least the
// end of NEIGH — a readback then never holds the reserved gap before SRAM4.
StatusOr<DeviceImage> DecodeBarTables(const uint8_t* tables, size_t tables_size, size_t bar_size, BarHeader* header);

}  // namespace fibnic
