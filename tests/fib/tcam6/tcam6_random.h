// Random IPv6 tables for the tcam6 tests: prefixes that nest and share
// branching points with the ones already there, some longer than /64.
#pragma once

#include <random>
#include <vector>

#include "common/ip.h"
#include "fib/tcam6/tcam6_compiler.h"

namespace fibnic::tcam6test {

// 80% near a prefix of `near` (one bit flipped), else in 2001:00xx::/32;
// lengths: 5% under /16, 80% /16../64, 15% longer than /64.
inline Prefix RandomPrefix(std::mt19937_64& rng, const std::vector<Prefix>& near) {
  std::uniform_int_distribution<int> pick(0, 99);
  U128 base;
  if (!near.empty() && pick(rng) < 80) {
    base = near[rng() % near.size()].addr().v6();
    const int flip = 16 + int(rng() % 112);
    base ^= U128{1} << (127 - flip);
  } else {
    base = (U128{0x2001} << 112) | (U128{rng() & 0xff} << 96);
  }
  int len;
  const int r = pick(rng);
  if (r < 5) len = int(rng() % 16);
  else if (r < 85) len = 16 + int(rng() % 49);
  else len = 65 + int(rng() % 64);
  return Prefix::V6(base, len);
}

// Code 0 (unresolved) 15% of the time, else 1..codes; weight 1..4.
inline Tcam6Route RandomRoute(std::mt19937_64& rng, int codes) {
  const uint8_t code = uint8_t(rng() % 100 < 15 ? 0 : 1 + rng() % codes);
  return Tcam6Route{code, code == 0 ? PuntReason::kUnresolved : PuntReason::kNone, uint32_t(1 + rng() % 4)};
}

}  // namespace fibnic::tcam6test
