// What the kernel holds for one route of FRR's protocols, at the moment the
// kernel source saw it change: present or gone, and what it forwards along
// (a route by next-hop object resolved through the kernel's objects). The
// kernel source passes it on without keeping it; the FPM source compares it
// with what zebra said over FPM (sources/fpm/fpm_flux.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/ip.h"
#include "sources/netlink/netlink_route.h"

namespace fibnic {

struct KernelRouteView {
  Prefix prefix;
  uint32_t table = 0;
  bool deleted = false;
  uint8_t protocol = 0;      // rtm_protocol (zebra's, per FRR daemon)
  uint8_t type = 0;          // RTN_*; a blackhole next-hop object makes it RTN_BLACKHOLE
  uint32_t nh_id = 0;        // RTA_NH_ID, 0 = inline paths
  std::vector<NlPath> paths;  // the route's, or its object's as it is now
  bool unusable = false;     // an unknown object, an encapsulation, ...: the route punts
  // IPv6 keeps routes of one prefix and metric that do not qualify for
  // multipath (routes by object never do) side by side and forwards along
  // the first. `behind`: this one was added after such a route (the
  // kernel's notification keeps NLM_F_CREATE and drops NLM_F_EXCL when it
  // found one); `replace`: it took the first one's place (NLM_F_REPLACE).
  bool behind = false;
  bool replace = false;
};

}  // namespace fibnic
