// Next-hop objects (`ip nexthop`, RTM_NEWNEXTHOP/DELNEXTHOP): single
// next-hops and groups of them, by id, and what a route naming an id
// (RTA_NH_ID) forwards along. Socket-free; the kernel source keeps the
// kernel's objects (zebra's too) in one.
//
// Removal follows the kernel's rules (net/ipv4/nexthop.c, checked with
// `ip monitor` on 6.18): removing a single next-hop takes it out of every
// group holding it, and a group losing its last member goes too — all of
// it without a message when the removal was the kernel's own (a link going
// down, losing its carrier or going away); Remove() reports every object
// that went, so the caller can drop the routes using them.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "sources/netlink/netlink_route.h"

namespace fibnic {

class NexthopObjects {
 public:
  // What a route naming an object forwards along: a route type (RTN_UNICAST,
  // or RTN_BLACKHOLE for a blackhole object), its paths, and why it must
  // punt (unknown id, FDB or encapsulated next-hop, resilient group, ...).
  struct Resolved {
    uint8_t type = 0;
    std::vector<NlPath> paths;
    std::string unsupported;
  };

  // What changed: objects removed (as they were), and objects still there
  // whose paths changed (a group that lost a member). Each appears once.
  struct Changes {
    std::vector<NlNexthop> removed;
    std::vector<uint32_t> changed;
  };

  // Adds or replaces an object (`gen` is its mark for Sweep). Returns the
  // ids whose paths may have changed: it and the groups holding it.
  std::vector<uint32_t> Put(NlNexthop n, uint64_t gen = 0);
  // The kernel's remove_nexthop: the object goes, groups holding it lose it,
  // a group left without members goes too. Unknown ids change nothing.
  Changes Remove(uint32_t id);
  // Every single (non-blackhole) object through ifindex goes, as by Remove.
  Changes RemoveVia(uint32_t ifindex);
  // Objects whose mark is not `gen` go (a re-dump did not bring them), with
  // no cascade: the same dump says which groups and routes remain.
  std::vector<NlNexthop> Sweep(uint64_t gen);

  const NlNexthop* Find(uint32_t id) const;
  Resolved Resolve(uint32_t id) const;
  // Groups naming id as a member.
  const std::set<uint32_t>* GroupsHolding(uint32_t id) const;
  size_t size() const { return objects_.size(); }

 private:
  struct Object {
    NlNexthop nh;
    uint64_t gen = 0;
  };
  void Unlink(uint32_t id, const NlNexthop& nh);  // forgets nh's memberships
  void RemoveOne(uint32_t id, Changes& out);

  std::unordered_map<uint32_t, Object> objects_;
  std::unordered_map<uint32_t, std::set<uint32_t>> groups_of_;  // member id → groups naming it
};

}  // namespace fibnic
