// Encodes routes and next-hops as rtnetlink messages, the way zebra's
// dplane_fpm_nl does — for the FPM replayer (bench), tests and fuzz seeds.
// The inverse of netlink_route.h.
#pragma once

#include <cstdint>
#include <vector>

#include "sources/netlink/netlink_route.h"

namespace fibnic {

// RTM_NEWROUTE (or RTM_DELROUTE when r.del), protocol/type/table/priority as
// given, RTA_NH_ID when nh_id != 0, else RTA_GATEWAY/RTA_OIF for one path and
// RTA_MULTIPATH for more.
std::vector<uint8_t> BuildRouteMessage(const NlRoute& r);

// RTM_NEWNEXTHOP (or RTM_DELNEXTHOP when n.del).
std::vector<uint8_t> BuildNexthopMessage(const NlNexthop& n);

}  // namespace fibnic
