// What zebra has told us over FPM: its routes and next-hop groups, turned
// into RIB upserts/deletes. Independent of sockets so that tests, the fuzz
// target and the bench drive it directly.
//
// One frame is one atomic unit: every message of a frame is parsed before
// anything is applied (a malformed frame changes nothing), and each prefix a
// frame touches is emitted once, with its final state — zebra's DEL+NEW
// pair for a route update becomes a single upsert, never a moment without
// the route.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/status.h"
#include "sources/netlink/netlink_paths.h"
#include "sources/netlink/netlink_route.h"
#include "rib/route.h"

namespace fibnic {

struct FpmTableOptions {
  uint32_t table = 254;  // zebra's table id to take (254 = main / default VRF)
  uint8_t distance = 20;
  // zebra sends its "system" routes (connected, and routes it learned from
  // the kernel) with rtm_protocol RTPROT_KERNEL when they appear, but never
  // their deletion (FRR issue #19637): taking them would leave stale routes
  // behind. They are the kernel source's. A route of an ignored protocol
  // replacing one we hold counts as its deletion.
  std::set<uint8_t> ignore_protocols = {2};  // RTPROT_KERNEL
};

struct FpmTableCounts {
  uint64_t messages = 0;         // netlink messages applied
  uint64_t ignored = 0;          // other types, families or tables
  uint64_t route_updates = 0;    // upserts + deletes given to the RIB
  uint64_t punted_updates = 0;   // of those, upserts with the ToHost path
  uint64_t stale_swept = 0;      // routes + groups removed by sweeps
};

class FpmTable {
 public:
  FpmTable(RibSink& sink, PortLookup port_of, FpmTableOptions options);

  // Parses and applies one frame's payload (back-to-back netlink messages).
  Status ApplyFrame(const uint8_t* payload, size_t len);

  // zebra replays everything on reconnect but never says "done" nor what
  // it no longer has: mark all stale on connect, sweep after the replay.
  void MarkAllStale();
  size_t SweepStale();  // returns routes + groups removed
  size_t stale_count() const;

  size_t routes() const { return routes_.size(); }
  size_t nexthop_groups() const { return nhgs_.size(); }
  const FpmTableCounts& counts() const { return counts_; }
  // Re-evaluates every route (after a port-map change); emits what changed.
  void ReevaluateAll();

 private:
  struct StoredRoute {
    NlRoute route;
    bool stale = false;
  };
  struct StoredNhg {
    NlNexthop nh;
    bool stale = false;
  };

  void ApplyRoute(NlRoute r, std::set<Prefix>& touched);
  void ApplyNexthop(NlNexthop n, std::set<Prefix>& touched);
  void TouchUsers(uint32_t id, std::set<Prefix>& touched);
  void Link(const Prefix& p, uint32_t nh_id);
  void Unlink(const Prefix& p, uint32_t nh_id);
  FibPathsResult PathsOf(const NlRoute& r) const;
  void Emit(const Prefix& p);

  RibSink& sink_;
  PortLookup port_of_;
  FpmTableOptions options_;
  std::unordered_map<Prefix, StoredRoute> routes_;
  std::unordered_map<uint32_t, StoredNhg> nhgs_;
  std::unordered_map<uint32_t, std::unordered_set<Prefix>> users_;  // nh id → routes naming it
  std::unordered_map<uint32_t, std::set<uint32_t>> parents_;         // member id → groups holding it
  std::unordered_map<Prefix, std::vector<NextHop>> emitted_;         // what the RIB has from us
  FpmTableCounts counts_;
};

}  // namespace fibnic
