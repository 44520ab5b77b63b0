// The bit mixer of the open-addressing tables keyed by prefixes (RIB, FPM
// route refs, the update queue): prefixes differ in few, clustered bits, so
// their keys are scrambled before taking a home slot (MurmurHash3's
// 64-bit finaliser).
#pragma once

#include <cstdint>

namespace fibnic {

inline uint64_t MixBits(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

}  // namespace fibnic
