// Resolution, answers and slots: which neighbour resolves a next-hop, what the
// hardware answers for each next-hop group (and why a group punts), which
// next-hops own the hardware codes, and what their NEXTHOP entries hold.
//
// Per commit, Resolve() turns the groups' weights (the IPv4 /24s and IPv6
// routes each answers) into the codes of the commit — old and new per group
// and next-hop — the one input every table compiler writes from. It knows
// nothing of /24 cells or TCAM entries: a test feeds it groups (a
// NexthopTable), neighbours and weights and reads the codes.
//
// Policy (docs/fib.md "Answers and slots"): a single path answers with
// itself (a to-host path punts); multipath answers with the lowest-address
// path that is resolved and holds a code (EcmpPolicy::kFirst) or punts. A
// gateway is resolved when its neighbour is usable on the path's port. Slots
// go by weight: IPv4 /24s first, IPv6 routes only order next-hops of equal
// IPv4 space (fib/slot_policy.h: hysteresis, free slots, weight 0 frees).
//
// Slot owners are this class's own business: the rest of the Fib sees codes
// (CodeOf, CommitCodes, EntryFor), so what owns a slot can change here alone.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "device/fibnic_image.h"
#include "fib/codes.h"
#include "fib/fib.h"
#include "rib/nexthop_table.h"

namespace fibnic {

class Resolver {
 public:
  // nht outlives the resolver; only caps (ports, slots), ecmp and
  // slot_hysteresis of config are used.
  Resolver(const FibConfig& config, const NexthopTable& nht);

  // --- neighbours -------------------------------------------------------------
  struct NeighborRec {
    Neighbor n;
    uint64_t touch = 0;  // larger = more recently updated (the NEIGH CAM's LRU)
  };
  void UpsertNeighbor(const Neighbor& n);
  void DeleteNeighbor(const IpAddr& addr);
  const Neighbor* FindNeighbor(const IpAddr& addr) const;  // any state
  const std::unordered_map<IpAddr, NeighborRec>& neighbors() const { return neigh_; }

  // --- answers (live neighbours, codes as of the last Resolve) ----------------
  // What the hardware should do for a group: use next-hop `nh` (-1 = punt, why).
  struct Answer {
    int64_t nh = -1;
    PuntReason reason = PuntReason::kNone;
  };
  Answer AnswerOf(NhgId g) const;
  // Why a group's space punts in hardware now (kNone = it forwards).
  PuntReason GroupPuntReason(NhgId g) const;
  // A path through one of the device's ports (not to the host).
  bool OnDevicePort(const NextHop& nh) const { return !nh.to_host() && nh.port < config_.caps.ports; }
  bool Resolved(const NextHop& nh) const { return OnDevicePort(nh) && (nh.connected() || GatewayNeighbor(nh)); }
  uint8_t CodeOf(const NextHop& nh) const;  // 0 = none

  // --- per commit -------------------------------------------------------------
  struct GroupWeight {
    uint64_t slash24s = 0;   // IPv4 /24s the group answers
    uint64_t v6_routes = 0;  // IPv6 best routes up to /64 using it
  };
  // Assigns the slots from the groups' weights (by NhgId; missing = 0) and
  // returns this commit's codes next to the last commit's.
  CommitCodes Resolve(const std::vector<GroupWeight>& weights);
  // The NEXTHOP entry code c should hold now given what it holds (nullopt:
  // the code is free). An unresolved owner keeps its fields, VALID=0.
  std::optional<regs::NexthopEntry> EntryFor(int code, const regs::NexthopEntry& current) const;

  // Warm start, before the first Resolve: gives each code the live next-hop
  // its device entry describes (CONNECTED+port, or MAC+port: a gateway whose
  // neighbour, in any state, has that MAC on that port; among equals each
  // code takes the lowest not yet taken). Returns the codes adopted.
  int Adopt(const std::vector<regs::NexthopEntry>& device_nexthop);

  // --- reporting ----------------------------------------------------------------
  const std::vector<std::optional<NextHop>>& owners() const { return owners_; }  // by code - 1
  uint64_t owner_weight(int code) const;  // unscaled /24s + IPv6 routes, as of the last Resolve
  int slots_used() const;

 private:
  // The neighbour that resolves a gateway next-hop (usable, on the path's port).
  const Neighbor* GatewayNeighbor(const NextHop& nh) const;
  // The next-hop a group's weight is credited to when slots are chosen.
  std::optional<NhId> WeightOwner(NhgId g) const;
  GroupCodes CodesNow() const;

  FibConfig config_;
  const NexthopTable& nht_;
  std::unordered_map<IpAddr, NeighborRec> neigh_;
  uint64_t touch_clock_ = 0;
  std::vector<std::optional<NextHop>> owners_;  // by code - 1
  std::vector<uint64_t> owner_weight_;          // by code - 1, as of the last Resolve
  GroupCodes codes_;                            // as of the last Resolve
};

}  // namespace fibnic
