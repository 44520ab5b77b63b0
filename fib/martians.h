// Destinations a router never forwards, whatever its routes say (RFC 1812
// §5.3.7): 0.0.0.0/8 ("this network"), 127.0.0.0/8 (loopback), 224.0.0.0/4
// (multicast) and 240.0.0.0/4 (reserved, with 255.255.255.255, the limited
// broadcast). A default route covers them, so the compiler punts their /24s
// outright and the host decides (drops them, answers them, or hands
// multicast to its own routing).
#pragma once

#include <cstdint>

namespace fibnic {

// Whether IPv4 /24 number `slash24` (destination >> 8) lies in a martian range.
constexpr bool MartianSlash24(uint32_t slash24) {
  const uint32_t top8 = slash24 >> 16;
  return top8 == 0 || top8 == 127 || top8 >= 224;
}

}  // namespace fibnic
