#include "tools/route_file_loader.h"

#include <algorithm>

#include "sources/file/route_file.h"

namespace fibnic {

Status LoadRouteFileInto(Fib& fib, const std::string& path, RouteFileStats* stats) {
  const int ports = fib.config().caps.ports;
  // The lines of one prefix are gathered while they are consecutive (a sorted
  // file) and the route is upserted once the prefix changes, so a table load
  // stays one queued batch for the Fib. Only a line that goes back in prefix
  // order can repeat an earlier prefix; that one asks the Fib (which settles).
  Route r;
  r.source = RouteSource::kStatic;
  r.distance = 1;
  bool open = false;              // r holds lines not yet upserted
  std::optional<Prefix> highest;  // the highest prefix so far
  auto add_path = [&](const NextHop& nh, const Prefix& p) -> Status {
    auto at = std::lower_bound(r.paths.begin(), r.paths.end(), nh);
    if (at != r.paths.end() && *at == nh) return InvalidArgument("duplicate route " + p.ToString() + " " + nh.ToString());
    r.paths.insert(at, nh);
    ++stats->ecmp_lines;
    return OkStatus();
  };
  Status st = ReadRouteFile(path, ports, [&](const RouteLine& line) -> Status {
    ++stats->lines[line.prefix.family() == Family::kV4 ? 0 : 1];
    if (open && line.prefix == r.prefix) return add_path(line.path, line.prefix);
    if (open) fib.UpsertRoute(r);
    r.prefix = line.prefix;
    r.paths.clear();
    open = true;
    if (highest && !(*highest < line.prefix)) {
      if (auto earlier = fib.FindRoute(line.prefix, RouteSource::kStatic)) r.paths = earlier->paths;
    }
    if (!highest || *highest < line.prefix) highest = line.prefix;
    if (r.paths.empty()) {
      r.paths.push_back(line.path);
      return OkStatus();
    }
    return add_path(line.path, line.prefix);
  });
  if (open && st.ok()) fib.UpsertRoute(r);
  return st;
}

Status LoadNeighborFileInto(Fib& fib, const std::string& path, RouteFileStats* stats) {
  ASSIGN_OR_RETURN(auto neighbors, ReadNeighborFile(path, fib.config().caps.ports));
  for (const auto& n : neighbors) fib.UpsertNeighbor(n);
  stats->neighbors += neighbors.size();
  return OkStatus();
}

}  // namespace fibnic
