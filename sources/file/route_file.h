// Route and neighbour files (docs/contract/FIBNIC.md, "Route file format"):
//   PREFIX GATEWAY PORT | PREFIX connected PORT | PREFIX blackhole   (routes)
//   ADDRESS MAC PORT                                       (neighbours)
// '#' starts a comment; blank lines are ignored. A bad line is an error that
// names file:line and the reason; nothing after it is delivered.
#pragma once

#include <functional>
#include <istream>
#include <string>
#include <vector>

#include "common/status.h"
#include "rib/route.h"

namespace fibnic {

struct RouteLine {
  Prefix prefix;
  NextHop path;
  int line = 0;
};

// Ports must be below `ports` (the device's port count).
using RouteLineFn = std::function<Status(const RouteLine&)>;
// Delivers each route line in file order. An error returned by fn stops the
// read and comes back prefixed with "name:line: ".
Status ReadRoutes(std::istream& in, const std::string& name, int ports, const RouteLineFn& fn);
Status ReadRouteFile(const std::string& path, int ports, const RouteLineFn& fn);

// Neighbours are few: the whole file or an error. Each is kReachable; an
// address listed twice is an error.
StatusOr<std::vector<Neighbor>> ReadNeighbors(std::istream& in, const std::string& name, int ports);
StatusOr<std::vector<Neighbor>> ReadNeighborFile(const std::string& path, int ports);

}  // namespace fibnic
