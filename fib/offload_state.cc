#include "fib/offload_state.h"

namespace fibnic {

const char* OffloadStateName(OffloadState s) {
  switch (s) {
    case OffloadState::kOffloaded: return "offloaded";
    case OffloadState::kPartial: return "partial";
    case OffloadState::kPunted: return "punted";
  }
  return "?";
}

const char* PuntReasonName(PuntReason r) {
  switch (r) {
    case PuntReason::kNone: return "none";
    case PuntReason::kLongerThan24: return "longer-than-/24";
    case PuntReason::kLongerThan64: return "longer-than-/64";
    case PuntReason::kNoSlot: return "no-slot";
    case PuntReason::kUnresolved: return "unresolved";
    case PuntReason::kEcmpPolicy: return "ecmp-policy";
    case PuntReason::kMixedSlash24: return "mixed-/24";
    case PuntReason::kTcamFull: return "tcam-full";
    case PuntReason::kNotBest: return "not-best";
    case PuntReason::kShadowed: return "shadowed";
    case PuntReason::kToHost: return "to-host";
  }
  return "?";
}

}  // namespace fibnic
