// The seed of a randomised test: FIBNIC_SEED if set (to replay a run), else
// the clock; printed either way so a failure can be replayed.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>

namespace fibnic::testing {

inline uint64_t TestSeed(const char* what) {
  const char* env = std::getenv("FIBNIC_SEED");
  const uint64_t seed = env ? std::strtoull(env, nullptr, 0)
                            : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::cout << what << ": seed " << seed << " (FIBNIC_SEED=" << seed << " replays it)" << std::endl;  // flushed: a test killed by a timeout still shows its seed
  return seed;
}

}  // namespace fibnic::testing
