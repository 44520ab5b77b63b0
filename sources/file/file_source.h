// Static routes from route/neighbour files (the spec's route-file format, as
// fibnic-compile reads): `sources.file` in fibnicd.yaml. Loaded at start and
// re-read on SIGHUP; a reload reconciles — routes gone from the file are
// deleted, changed ones replaced — and a bad file changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <string>
#include <vector>

#include "common/status.h"
#include "rib/route.h"
#include "sources/file/static_table.h"
#include "sources/source.h"

namespace fibnic {

struct FileSourceStats {
  uint64_t routes = 0;
  uint64_t neighbors = 0;
  uint64_t loads = 0;
};

class FileSource : public Source {
 public:
  FileSource(RibSink& sink, std::string routes_path, std::string neighbors_path, uint8_t distance, int ports);

  // Reads both files whole; only when both parse are the changes handed to the sink.
  Status Load();
  FileSourceStats stats() const { return stats_; }

  const char* name() const override { return "file"; }
  Status Start() override { return Load(); }
  // Nothing runs between loads: the files are read on Start and on Load.
  void Stop() override {}
  bool initial_sync_done() const override { return stats_.loads > 0; }
  nlohmann::json StatsJson() const override;

 private:
  // Hands the sink what differs between the table it has and `next`.
  void Reconcile(const StaticTable& next);

  RibSink& sink_;
  std::string routes_path_;
  std::string neighbors_path_;
  uint8_t distance_;
  int ports_;
  StaticTable routes_;  // as last handed to the sink
  std::map<std::pair<IpAddr, PortId>, Neighbor> neighbors_;
  FileSourceStats stats_;
};

}  // namespace fibnic
