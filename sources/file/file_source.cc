#include "sources/file/file_source.h"

#include <tuple>

#include "sources/file/route_file.h"

namespace fibnic {

FileSource::FileSource(RibSink& sink, std::string routes_path, std::string neighbors_path, uint8_t distance,
                       int ports)
    : sink_(sink),
      routes_path_(std::move(routes_path)),
      neighbors_path_(std::move(neighbors_path)),
      distance_(distance),
      ports_(ports) {}

Status FileSource::Load() {
  StaticTable routes;
  std::map<std::pair<IpAddr, PortId>, Neighbor> neighbors;  // a neighbour is (address, port)
  if (!neighbors_path_.empty()) {
    ASSIGN_OR_RETURN(std::vector<Neighbor> ns, ReadNeighborFile(neighbors_path_, ports_));
    for (const Neighbor& n : ns) neighbors[{n.addr, n.port}] = n;
  }
  if (!routes_path_.empty()) {
    ASSIGN_OR_RETURN(routes, ReadStaticTable(routes_path_, ports_));
  }
  // Both files are good: hand over only what changed.
  for (const auto& [key, n] : neighbors) {
    auto it = neighbors_.find(key);
    if (it == neighbors_.end() || !(it->second == n)) sink_.UpsertNeighbor(n);
  }
  Reconcile(routes);
  for (const auto& [key, n] : neighbors_) {
    if (!neighbors.count(key)) sink_.DeleteNeighbor(n.addr, n.port);
  }
  routes_ = std::move(routes);
  neighbors_ = std::move(neighbors);
  stats_.routes = routes_.size();
  stats_.neighbors = neighbors_.size();
  ++stats_.loads;
  return OkStatus();
}

nlohmann::json FileSource::StatsJson() const {
  return {{"routes", stats_.routes}, {"neighbors", stats_.neighbors}, {"loads", stats_.loads}};
}

void FileSource::Reconcile(const StaticTable& next) {
  // Both sides are sorted: one merge finds what is new, changed and gone.
  auto merge = [&](const auto& was, const auto& now, auto key, auto prefix) {
    size_t i = 0, j = 0;
    while (i < was.size() || j < now.size()) {
      if (j == now.size() || (i < was.size() && key(was[i]) < key(now[j]))) {
        sink_.DeleteRoute(prefix(was[i++]), RouteSource::kStatic);
      } else if (i == was.size() || key(now[j]) < key(was[i])) {
        sink_.UpsertRoute(Route{prefix(now[j]), RouteSource::kStatic, distance_, next.path_sets[now[j].paths]});
        ++j;
      } else {
        const auto& paths = next.path_sets[now[j].paths];
        if (routes_.path_sets[was[i].paths] != paths) {
          sink_.UpsertRoute(Route{prefix(now[j]), RouteSource::kStatic, distance_, paths});
        }
        ++i;
        ++j;
      }
    }
  };
  merge(routes_.v4, next.v4, [](const StaticTable::V4& r) { return std::tie(r.addr, r.len); },
        [](const StaticTable::V4& r) { return r.prefix(); });
  merge(routes_.v6, next.v6, [](const StaticTable::V6& r) { return std::tie(r.hi, r.lo, r.len); },
        [](const StaticTable::V6& r) { return r.prefix(); });
}

}  // namespace fibnic
