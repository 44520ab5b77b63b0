// A route file read whole into a table — the one reader of route files, for
// fibnicd's file source and for fibnic-compile. Lines repeating a prefix,
// anywhere in the file, are its ECMP paths; a line repeating a prefix and a
// next-hop exactly, and any bad line, is an error naming file:line, and then
// there is no table (nothing is handed on).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "rib/route.h"

namespace fibnic {

// Compact because a full table is a million routes: sorted (prefix, path set)
// records per family — 12 bytes per IPv4 route — and the path sets interned
// (a table names a handful).
struct StaticTable {
  struct V4 {
    uint32_t addr = 0;
    uint8_t len = 0;
    uint32_t paths = 0;  // index into path_sets
    Prefix prefix() const { return Prefix::V4(addr, len); }
  };
  struct V6 {
    uint64_t hi = 0, lo = 0;
    uint8_t len = 0;
    uint32_t paths = 0;
    Prefix prefix() const { return Prefix::V6((U128{hi} << 64) | lo, len); }
  };
  std::vector<V4> v4;  // ascending (addr, len)
  std::vector<V6> v6;  // ascending (hi, lo, len)
  std::vector<std::vector<NextHop>> path_sets;  // each sorted, unique
  uint64_t lines[2] = {};  // route lines read per family (v4, v6)

  size_t size() const { return v4.size() + v6.size(); }
  // Lines that added a path to a prefix named on an earlier line.
  uint64_t ecmp_lines() const { return lines[0] + lines[1] - size(); }
  // Calls fn(Route) for every route, IPv4 then IPv6, in prefix order.
  template <typename Fn>
  void ForEachRoute(RouteSource source, uint8_t distance, Fn&& fn) const {
    for (const V4& r : v4) fn(Route{r.prefix(), source, distance, path_sets[r.paths]});
    for (const V6& r : v6) fn(Route{r.prefix(), source, distance, path_sets[r.paths]});
  }
};

// Ports must be below `ports` (the device's port count).
StatusOr<StaticTable> ReadStaticTable(const std::string& path, int ports);

}  // namespace fibnic
