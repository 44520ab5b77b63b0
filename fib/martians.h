// Destinations a router never forwards, whatever its routes say. IPv4
// (RFC 1812 §5.3.7): 0.0.0.0/8 ("this network"), 127.0.0.0/8 (loopback),
// 224.0.0.0/4 (multicast) and 240.0.0.0/4 (reserved, with 255.255.255.255,
// the limited broadcast). IPv6 (RFC 4291): ff00::/8 (multicast) and
// fe80::/10 (link-local: never leaves its link), held as fe00::/7 — one
// TCAM entry instead of two; the rest of it, fe00::/9 and fec0::/10, is
// unassigned or deprecated — and ::1, held as ::/64 since the TCAM sees 64
// bits (the rest of ::/64 — ::, ::ffff:0:0/96 IPv4-mapped — is not routable
// either; 64:ff9b::/96 lies outside it). Under a default route the two IPv6
// holes take two of the 32 TCAM entries. The compiler punts these outright
// and the host decides (drops them, answers them, or hands multicast to its
// own routing).
#pragma once

#include <array>
#include <cstdint>

#include "common/ip.h"

namespace fibnic {

// Whether IPv4 /24 number `slash24` (destination >> 8) lies in a martian range.
constexpr bool MartianSlash24(uint32_t slash24) {
  const uint32_t top8 = slash24 >> 16;
  return top8 == 0 || top8 == 127 || top8 >= 224;
}

inline const std::array<Prefix, 2>& MartianPrefixesV6() {
  static const std::array<Prefix, 2> p = {Prefix::V6(static_cast<U128>(0xfe) << 120, 7), Prefix::V6(0, 64)};
  return p;
}

// The martian IPv6 range p lies in (or is), if any.
inline const Prefix* MartianV6Containing(const Prefix& p) {
  for (const Prefix& m : MartianPrefixesV6()) {
    if (m.Contains(p)) return &m;
  }
  return nullptr;
}

}  // namespace fibnic
