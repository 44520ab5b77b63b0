#include "rib/route.h"

namespace fibnic {

std::string NextHop::ToString() const {
  if (to_host()) return "to host";
  if (drop()) return "drop";
  if (connected()) return "connected port " + std::to_string(port);
  return "via " + gateway->ToString() + " port " + std::to_string(port);
}

const char* RouteSourceName(RouteSource s) {
  switch (s) {
    case RouteSource::kApi: return "api";
    case RouteSource::kStatic: return "static";
    case RouteSource::kKernel: return "kernel";
  }
  return "?";
}

const char* NeighStateName(NeighState s) {
  switch (s) {
    case NeighState::kIncomplete: return "incomplete";
    case NeighState::kReachable: return "reachable";
    case NeighState::kStale: return "stale";
    case NeighState::kDelay: return "delay";
    case NeighState::kProbe: return "probe";
    case NeighState::kFailed: return "failed";
    case NeighState::kNoArp: return "noarp";
    case NeighState::kPermanent: return "permanent";
  }
  return "?";
}

bool NeighUsable(NeighState s) {
  return s != NeighState::kIncomplete && s != NeighState::kFailed;
}

}  // namespace fibnic
