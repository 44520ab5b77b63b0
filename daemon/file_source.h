// Static routes from route/neighbour files (the spec's route-file format, as
// fibnic-compile reads): `sources.file` in fibnicd.yaml. Loaded at start and
// re-read on SIGHUP; a reload reconciles — routes gone from the file are
// deleted, changed ones replaced — and a bad file changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "common/status.h"
#include "fibsync/route.h"

namespace fibnic {

struct FileSourceStats {
  uint64_t routes = 0;
  uint64_t neighbors = 0;
  uint64_t loads = 0;
};

class FileSource {
 public:
  FileSource(RibSink& sink, std::string routes_path, std::string neighbors_path, uint8_t distance, int ports);

  // Reads both files whole; only when both parse are the changes handed to the sink.
  Status Load();
  FileSourceStats stats() const { return stats_; }

 private:
  RibSink& sink_;
  std::string routes_path_;
  std::string neighbors_path_;
  uint8_t distance_;
  int ports_;
  std::map<Prefix, Route> routes_;       // as last handed to the sink
  std::map<IpAddr, Neighbor> neighbors_;
  FileSourceStats stats_;
};

}  // namespace fibnic
