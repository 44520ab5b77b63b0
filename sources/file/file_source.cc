#include "sources/file/file_source.h"

#include <algorithm>
#include <tuple>

#include "sources/file/route_file.h"

namespace fibnic {
namespace {

// One route line, reduced to its prefix and an interned next-hop.
struct Line {
  uint64_t hi = 0, lo = 0;  // IPv4: lo = address
  uint8_t len = 0;
  uint32_t hop = 0;
  int line = 0;
  auto Key() const { return std::tie(hi, lo, len); }
};

Prefix PrefixOf(bool v4, uint64_t hi, uint64_t lo, uint8_t len) {
  return v4 ? Prefix::V4(static_cast<uint32_t>(lo), len) : Prefix::V6((U128{hi} << 64) | lo, len);
}

// Groups one family's lines (stable-sorted by prefix) into table records.
template <typename Record>
Status Group(std::vector<Line>& lines, bool v4, const std::vector<NextHop>& hops, const std::string& path,
             std::vector<Record>& out, std::vector<std::vector<NextHop>>& sets,
             std::map<std::vector<NextHop>, uint32_t>& set_index) {
  std::stable_sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.Key() < b.Key(); });
  std::vector<NextHop> paths;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    paths.clear();
    for (; j < lines.size() && lines[j].Key() == lines[i].Key(); ++j) {
      const NextHop& nh = hops[lines[j].hop];
      if (std::find(paths.begin(), paths.end(), nh) != paths.end()) {
        return InvalidArgument(path + ":" + std::to_string(lines[j].line) + ": next-hop repeated for " +
                               PrefixOf(v4, lines[i].hi, lines[i].lo, lines[i].len).ToString());
      }
      paths.push_back(nh);
    }
    std::sort(paths.begin(), paths.end());
    auto [it, fresh] = set_index.try_emplace(paths, static_cast<uint32_t>(sets.size()));
    if (fresh) sets.push_back(paths);
    Record r;
    if constexpr (std::is_same_v<Record, StaticTable::V4>) {
      r.addr = static_cast<uint32_t>(lines[i].lo);
    } else {
      r.hi = lines[i].hi;
      r.lo = lines[i].lo;
    }
    r.len = lines[i].len;
    r.paths = it->second;
    out.push_back(r);
    i = j;
  }
  lines.clear();
  lines.shrink_to_fit();
  return OkStatus();
}

}  // namespace

StatusOr<StaticTable> ReadStaticTable(const std::string& path, int ports) {
  std::vector<Line> lines[2];  // [v4, v6]
  std::vector<NextHop> hops;
  std::map<NextHop, uint32_t> hop_index;
  RETURN_IF_ERROR(ReadRouteFile(path, ports, [&](const RouteLine& l) -> Status {
    auto [it, fresh] = hop_index.try_emplace(l.path, static_cast<uint32_t>(hops.size()));
    if (fresh) hops.push_back(l.path);
    const U128 a = l.prefix.addr().v6();
    const bool v4 = l.prefix.family() == Family::kV4;
    lines[v4 ? 0 : 1].push_back(Line{v4 ? 0 : static_cast<uint64_t>(a >> 64),
                                     v4 ? l.prefix.addr().v4() : static_cast<uint64_t>(a),
                                     static_cast<uint8_t>(l.prefix.len()), it->second, l.line});
    return OkStatus();
  }));
  StaticTable t;
  std::map<std::vector<NextHop>, uint32_t> set_index;
  RETURN_IF_ERROR(Group(lines[0], true, hops, path, t.v4, t.path_sets, set_index));
  RETURN_IF_ERROR(Group(lines[1], false, hops, path, t.v6, t.path_sets, set_index));
  return t;
}

FileSource::FileSource(RibSink& sink, std::string routes_path, std::string neighbors_path, uint8_t distance,
                       int ports)
    : sink_(sink),
      routes_path_(std::move(routes_path)),
      neighbors_path_(std::move(neighbors_path)),
      distance_(distance),
      ports_(ports) {}

Status FileSource::Load() {
  StaticTable routes;
  std::map<IpAddr, Neighbor> neighbors;
  if (!neighbors_path_.empty()) {
    ASSIGN_OR_RETURN(std::vector<Neighbor> ns, ReadNeighborFile(neighbors_path_, ports_));
    for (const Neighbor& n : ns) neighbors[n.addr] = n;
  }
  if (!routes_path_.empty()) {
    ASSIGN_OR_RETURN(routes, ReadStaticTable(routes_path_, ports_));
  }
  // Both files are good: hand over only what changed.
  for (const auto& [addr, n] : neighbors) {
    auto it = neighbors_.find(addr);
    if (it == neighbors_.end() || !(it->second == n)) sink_.UpsertNeighbor(n);
  }
  Reconcile(routes);
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
        [](const StaticTable::V4& r) { return Prefix::V4(r.addr, r.len); });
  merge(routes_.v6, next.v6, [](const StaticTable::V6& r) { return std::tie(r.hi, r.lo, r.len); },
        [](const StaticTable::V6& r) { return Prefix::V6((U128{r.hi} << 64) | r.lo, r.len); });
}

}  // namespace fibnic
