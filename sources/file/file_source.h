// Static routes from route/neighbour files (the spec's route-file format, as
// fibnic-compile reads): `sources.file` in fibnicd.yaml. Loaded at start and
// re-read on SIGHUP; a reload reconciles — routes gone from the file are
// deleted, changed ones replaced — and a bad file changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "rib/route.h"

namespace fibnic {

struct FileSourceStats {
  uint64_t routes = 0;
  uint64_t neighbors = 0;
  uint64_t loads = 0;
};

// A route file's table, compact because a full table is a million routes:
// sorted (prefix, path set) records per family — 12 bytes per IPv4 route —
// and the path sets interned (a table names a handful).
struct StaticTable {
  struct V4 {
    uint32_t addr = 0;
    uint8_t len = 0;
    uint32_t paths = 0;  // index into path_sets
  };
  struct V6 {
    uint64_t hi = 0, lo = 0;
    uint8_t len = 0;
    uint32_t paths = 0;
  };
  std::vector<V4> v4;  // ascending (addr, len)
  std::vector<V6> v6;  // ascending (hi, lo, len)
  std::vector<std::vector<NextHop>> path_sets;  // each sorted, unique
  size_t size() const { return v4.size() + v6.size(); }
};

// Reads a route file whole: lines repeating a prefix are its ECMP paths; a
// next-hop repeated for a prefix is an error naming file:line.
StatusOr<StaticTable> ReadStaticTable(const std::string& path, int ports);

class FileSource {
 public:
  FileSource(RibSink& sink, std::string routes_path, std::string neighbors_path, uint8_t distance, int ports);

  // Reads both files whole; only when both parse are the changes handed to the sink.
  Status Load();
  FileSourceStats stats() const { return stats_; }

 private:
  // Hands the sink what differs between the table it has and `next`.
  void Reconcile(const StaticTable& next);

  RibSink& sink_;
  std::string routes_path_;
  std::string neighbors_path_;
  uint8_t distance_;
  int ports_;
  StaticTable routes_;  // as last handed to the sink
  std::map<IpAddr, Neighbor> neighbors_;
  FileSourceStats stats_;
};

}  // namespace fibnic
