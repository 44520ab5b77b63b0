#include "daemon/file_source.h"

#include <algorithm>

#include "fibsync/route_file.h"

namespace fibnic {

FileSource::FileSource(RibSink& sink, std::string routes_path, std::string neighbors_path, uint8_t distance,
                       int ports)
    : sink_(sink),
      routes_path_(std::move(routes_path)),
      neighbors_path_(std::move(neighbors_path)),
      distance_(distance),
      ports_(ports) {}

Status FileSource::Load() {
  std::map<Prefix, Route> routes;
  std::map<IpAddr, Neighbor> neighbors;
  if (!neighbors_path_.empty()) {
    ASSIGN_OR_RETURN(std::vector<Neighbor> ns, ReadNeighborFile(neighbors_path_, ports_));
    for (const Neighbor& n : ns) neighbors[n.addr] = n;
  }
  if (!routes_path_.empty()) {
    RETURN_IF_ERROR(ReadRouteFile(routes_path_, ports_, [&](const RouteLine& l) -> Status {
      Route& r = routes[l.prefix];
      r.prefix = l.prefix;
      r.source = RouteSource::kStatic;
      r.distance = distance_;
      // A prefix on several lines is ECMP; the model keeps paths sorted and unique.
      auto at = std::lower_bound(r.paths.begin(), r.paths.end(), l.path);
      if (at != r.paths.end() && *at == l.path) return InvalidArgument("next-hop repeated for " + l.prefix.ToString());
      r.paths.insert(at, l.path);
      return OkStatus();
    }));
  }
  // Both files are good: hand over only what changed.
  for (const auto& [addr, n] : neighbors) {
    auto it = neighbors_.find(addr);
    if (it == neighbors_.end() || !(it->second == n)) sink_.UpsertNeighbor(n);
  }
  for (const auto& [prefix, r] : routes) {
    auto it = routes_.find(prefix);
    if (it == routes_.end() || it->second.paths != r.paths || it->second.distance != r.distance)
      sink_.UpsertRoute(r);
  }
  for (const auto& [prefix, r] : routes_) {
    if (!routes.count(prefix)) sink_.DeleteRoute(prefix, RouteSource::kStatic);
  }
  for (const auto& [addr, n] : neighbors_) {
    if (!neighbors.count(addr)) sink_.DeleteNeighbor(addr);
  }
  routes_ = std::move(routes);
  neighbors_ = std::move(neighbors);
  stats_.routes = routes_.size();
  stats_.neighbors = neighbors_.size();
  ++stats_.loads;
  return OkStatus();
}

}  // namespace fibnic
