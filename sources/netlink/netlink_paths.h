// Turns a route's netlink paths into the RIB's next-hops. This is where the
// safety rule lives: anything the FIBNIC must not forward by itself (local,
// unreachable/prohibit/throw, a path through an interface that is not a
// FIBNIC port, an encapsulation, ...) becomes the single path
// NextHop::ToHost(), so the route still shadows covering routes and the
// hardware punts its whole address space to the host. A blackhole becomes
// the single path NextHop::Drop(): dropped in the card where it can drop,
// punted elsewhere.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sources/netlink/netlink_route.h"
#include "rib/route.h"

namespace fibnic {

// FIBNIC port of a kernel interface index, nullopt = not a FIBNIC port.
using PortLookup = std::function<std::optional<PortId>(uint32_t ifindex)>;

struct FibPathsResult {
  std::vector<NextHop> paths;  // sorted, unique; {ToHost()} when punted, {Drop()} for a blackhole
  std::string punt_why;        // empty unless punted
};

// A multipath route with one path that is not a FIBNIC port is punted as a
// whole (not trimmed to its FIBNIC paths): the host then spreads the traffic
// exactly as the kernel was told to, and no flow is moved to a path the
// routing protocol did not choose for it.
FibPathsResult FibPaths(uint8_t rtn_type, Family family, const std::vector<NlPath>& paths,
                        const std::string& unsupported, const PortLookup& port_of);

}  // namespace fibnic
