// What the FIBNIC does with a destination, decoded from a BAR0 byte image
// exactly as the spec describes the hardware (docs/contract/FIBNIC.md,
// "Meaning of a lookup result"). This is the device-side model every oracle
// test compares against the reference LPM, and what `fibnicctl lookup` shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "common/ip.h"
#include "device/fibnic_regs.h"

namespace fibnic {

struct HwDecision {
  bool forward = false;  // false = punt to the host, or drop
  bool drop = false;     // dropped in the card: a VALID|DROP next-hop entry (never reaches the host)
  uint8_t code = 0;      // next-hop code read from SRAM/TCAM (0 = none)
  int tcam_index = -1;   // IPv6: the winning entry, -1 if none
  uint8_t port = 0;      // egress port when forwarding
  MacAddr dst_mac;       // rewritten destination MAC when forwarding
  const char* why = "";  // "forward", "code-0", "nexthop-invalid", "no-tcam-match", "neigh-miss", "disabled", "drop"
  std::string ToString() const;
};

// bar must hold the whole BAR0 (regs::Caps::bar_bytes() of the CAPS it holds).
HwDecision HwLookup(const uint8_t* bar, size_t bar_size, const IpAddr& dst);

}  // namespace fibnic
