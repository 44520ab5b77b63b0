#include "fibsync/route_file_loader.h"

#include <algorithm>

#include "fibsync/route_file.h"

namespace fibnic {

Status LoadRouteFileInto(Fib& fib, const std::string& path, RouteFileStats* stats) {
  const int ports = fib.config().caps.ports;
  Route r;
  r.source = RouteSource::kStatic;
  r.distance = 1;
  return ReadRouteFile(path, ports, [&](const RouteLine& line) -> Status {
    ++stats->lines[line.prefix.family() == Family::kV4 ? 0 : 1];
    r.prefix = line.prefix;
    r.paths.assign(1, line.path);
    if (auto earlier = fib.FindRoute(line.prefix, RouteSource::kStatic)) {
      auto& paths = earlier->paths;
      if (std::find(paths.begin(), paths.end(), line.path) != paths.end()) {
        return InvalidArgument("duplicate route " + line.prefix.ToString() + " " + line.path.ToString());
      }
      paths.insert(std::upper_bound(paths.begin(), paths.end(), line.path), line.path);
      r.paths = paths;
      ++stats->ecmp_lines;
    }
    fib.UpsertRoute(r);
    return OkStatus();
  });
}

Status LoadNeighborFileInto(Fib& fib, const std::string& path, RouteFileStats* stats) {
  ASSIGN_OR_RETURN(auto neighbors, ReadNeighborFile(path, fib.config().caps.ports));
  for (const auto& n : neighbors) fib.UpsertNeighbor(n);
  stats->neighbors += neighbors.size();
  return OkStatus();
}

}  // namespace fibnic
