// What the resolver's policy tests share: the configurations they run
// under and five gateways, each on its own port or address.
#pragma once

#include <chrono>
#include <memory>

#include "fib/resolver.h"
#include "tests/support/resolver_harness.h"

namespace fibnic::testing {

// Without a hold (weights count as they are at each commit) unless a test
// asks for one; the hold's own tests run on a clock of their own.
inline FibConfig Config(int code_bits, double hysteresis = 1.25, EcmpPolicy ecmp = EcmpPolicy::kFirst) {
  FibConfig c;
  c.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  c.slot_hysteresis = hysteresis;
  c.ecmp = ecmp;
  c.slot_hold = std::chrono::milliseconds(0);
  return c;
}

struct FakeClock {
  std::chrono::steady_clock::time_point now{};
  void Advance(std::chrono::milliseconds d) { now += d; }
};

inline FibConfig HoldConfig(int code_bits, std::shared_ptr<FakeClock> clock, std::chrono::milliseconds hold) {
  FibConfig c = Config(code_bits);
  c.slot_hold = hold;
  c.clock = [clock] { return clock->now; };
  return c;
}

inline const NextHop kA = Gw("10.0.0.1", 0), kB = Gw("10.0.0.2", 1), kC = Gw("10.0.0.3", 2), kD = Gw("10.0.0.4", 3),
              kE = Gw("10.0.0.5", 0);

}  // namespace fibnic::testing
