// Offload state of a route and why it is (partly) punted. Shared by the Fib,
// the compilers, the REST API and fibnicctl.
#pragma once

#include <cstdint>

namespace fibnic {

enum class OffloadState : uint8_t { kOffloaded, kPartial, kPunted };
const char* OffloadStateName(OffloadState s);  // "offloaded", "partial", "punted"

enum class PuntReason : uint8_t {
  kNone,
  kLongerThan24,  // IPv4 prefix longer than /24: its /24 punts unless uniform
  kLongerThan64,  // IPv6 prefix longer than /64
  kNoSlot,        // next-hop has no hardware code
  kUnresolved,    // gateway's neighbour unknown or failed
  kEcmpPolicy,    // multipath route and ecmp policy is punt
  kMixedSlash24,  // (partial) some /24s hold longer prefixes with other next-hops
  kTcamFull,      // IPv6 route not chosen for the TCAM
  kNotBest,       // another source's route for this prefix wins
  kShadowed,      // fully covered by more-specific routes
  kToHost,        // local / blackhole / non-FIBNIC interface: the host handles it
};
const char* PuntReasonName(PuntReason r);  // "longer-than-/24", "no-slot", ...

}  // namespace fibnic
