#include "sources/file/static_table.h"

#include <algorithm>
#include <map>
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

Prefix PrefixOf(bool v4, const Line& l) {
  return v4 ? Prefix::V4(static_cast<uint32_t>(l.lo), l.len) : Prefix::V6((U128{l.hi} << 64) | l.lo, l.len);
}

// Groups one family's lines (stable-sorted by prefix, so a prefix's lines stay
// in file order) into table records.
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
      if (auto seen = std::find(paths.begin(), paths.end(), nh); seen != paths.end()) {
        const std::string p = PrefixOf(v4, lines[i]).ToString();
        return InvalidArgument(path + ":" + std::to_string(lines[j].line) + ": next-hop repeated for " + p +
                               " (duplicate route " + p + " " + nh.ToString() + ", first on line " +
                               std::to_string(lines[i + (seen - paths.begin())].line) + ")");
      }
      paths.push_back(nh);
    }
    // A blackhole discards; it has no paths to share with (the kernel's own
    // blackhole route has none either).
    if (paths.size() > 1 && std::find(paths.begin(), paths.end(), NextHop::Drop()) != paths.end()) {
      return InvalidArgument(path + ":" + std::to_string(lines[i].line) + ": " + PrefixOf(v4, lines[i]).ToString() +
                             " is a blackhole on one line and has paths on others");
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
  t.lines[0] = lines[0].size();
  t.lines[1] = lines[1].size();
  std::map<std::vector<NextHop>, uint32_t> set_index;
  RETURN_IF_ERROR(Group(lines[0], true, hops, path, t.v4, t.path_sets, set_index));
  RETURN_IF_ERROR(Group(lines[1], false, hops, path, t.v6, t.path_sets, set_index));
  return t;
}

}  // namespace fibnic
