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
// Policy (docs/fib.md "Answers and slots", "Adjacency codes"): a single path
// answers with itself (a to-host path punts; a drop path drops, through the
// drop adjacency's code, where the device can); multipath answers with the
// lowest-address path that is resolved and holds a code (EcmpPolicy::kFirst)
// or punts. A gateway is resolved when its neighbour — the gateway address on
// the path's port — is usable. A code names an adjacency (MAC, port) or
// CONNECTED+port: every resolved next-hop with the same (MAC, port) shares it.
// Slots go by the adjacency's weight: its share of the IPv4 /24s plus its
// share of the IPv6 routes that adjacencies answer, each family's weights
// held at their highest for slot_hold after they fall (fib/slot_policy.h:
// hysteresis, free slots, weight 0 frees, pins).
//
// Slot owners are this class's own business: the rest of the Fib sees codes
// (CodeOf, CommitCodes, EntryFor), so what owns a slot can change here alone.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "device/fibnic_image.h"
#include "fib/adjacency.h"
#include "fib/codes.h"
#include "fib/fib.h"
#include "fib/slot_policy.h"
#include "rib/nexthop_table.h"

namespace fibnic {

class Resolver {
 public:
  // nht outlives the resolver; only caps (ports, slots), ecmp and
  // slot_hysteresis of config are used.
  Resolver(const FibConfig& config, const NexthopTable& nht);

  // --- neighbours (keyed by address and port) --------------------------------
  struct NeighborKey {
    IpAddr addr;
    PortId port = 0;
    bool operator==(const NeighborKey&) const = default;
  };
  struct NeighborKeyHash {
    size_t operator()(const NeighborKey& k) const noexcept { return std::hash<IpAddr>()(k.addr) * 31 + k.port; }
  };
  struct NeighborRec {
    Neighbor n;
    uint64_t touch = 0;  // larger = more recently updated (the NEIGH CAM's LRU)
  };
  using NeighborMap = std::unordered_map<NeighborKey, NeighborRec, NeighborKeyHash>;
  void UpsertNeighbor(const Neighbor& n);
  void DeleteNeighbor(const IpAddr& addr, PortId port);
  const Neighbor* FindNeighbor(const IpAddr& addr, PortId port) const;  // any state
  const NeighborMap& neighbors() const { return neigh_; }

  // --- answers (live neighbours, codes as of the last Resolve) ----------------
  // What the hardware should do for a group: use next-hop `nh` (-1 = punt, why).
  struct Answer {
    int64_t nh = -1;
    PuntReason reason = PuntReason::kNone;
  };
  Answer AnswerOf(NhgId g) const;
  // Why a group's space punts in hardware now (kNone = it forwards).
  PuntReason GroupPuntReason(NhgId g) const;
  // A path the device takes itself: through one of its ports, or a drop
  // where the device can drop (CAPS2 DROP; elsewhere a drop punts).
  bool OnDevicePort(const NextHop& nh) const {
    return nh.drop() ? config_.caps.drop : !nh.to_host() && nh.port < config_.caps.ports;
  }
  bool Resolved(const NextHop& nh) const {
    return OnDevicePort(nh) && (nh.drop() || nh.connected() || GatewayNeighbor(nh));
  }
  // The code a next-hop's space is written with (0 = none): its adjacency's
  // code while it resolves to it; an unresolved next-hop keeps its last
  // adjacency's code only while no other next-hop resolves to that adjacency
  // (its entry is then VALID=0: one write punts all its space, one restores).
  uint8_t CodeOf(const NextHop& nh) const;
  // What a punt reason means for this next-hop, in words ("no neighbour
  // fe80::1 on port 1", "neighbour 10.0.0.1 on port 0 is failed", ...).
  std::string Why(const NextHop& nh, PuntReason reason) const;

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

  // Warm start, before the first Resolve: gives each code the adjacency its
  // device entry names (CONNECTED+port, or MAC+port) when a live next-hop
  // has it: connected on that port, or a gateway whose neighbour on that
  // port, in any state, has that MAC. An entry kept unresolved (VALID=0)
  // held gateways whose neighbours failed, and the kernel reports a failed
  // neighbour without its MAC, as it does one that never resolved: such a
  // gateway on its port is taken only where the device shows the entry held
  // it — the gateway's space written with the entry's code (`shown`). Two
  // entries naming one adjacency: the lower code takes it. Returns the codes
  // adopted.
  //
  // What Adopt asks the device about kept entries: which of their codes it
  // answers these groups' space with. A failed next-hop answers only the
  // group it is the single path of (a multipath answer skips unresolved
  // paths), so those are the groups of the failed gateways on the kept
  // entries' ports. Empty when no entry is kept or no such gateway exists.
  struct KeptEntryQuestion {
    std::set<NhgId> groups;
    std::set<int> codes;  // the kept entries'
  };
  KeptEntryQuestion AskAboutKeptEntries(const std::vector<regs::NexthopEntry>& device_nexthop) const;
  // (group, code): the device answers some address whose longest route is
  // the group's with the code. None given: no failed gateway is taken.
  using ShownCodes = std::set<std::pair<NhgId, int>>;
  int Adopt(const std::vector<regs::NexthopEntry>& device_nexthop, const ShownCodes& shown = {});

  // --- reporting ----------------------------------------------------------------
  const std::vector<std::optional<Adjacency>>& owners() const { return owners_; }  // by code - 1
  // The live next-hops whose space code c is written with (CodeOf), in order.
  std::vector<NextHop> NextHopsOf(int code) const;
  uint64_t owner_weight(int code) const;  // unscaled /24s + IPv6 routes, as of the last Resolve
  int slots_used() const;
  // When a held weight that keeps an owner or a ranking in place lapses (a
  // Resolve then may move slots although nothing else changed); nullopt: none.
  std::optional<std::chrono::steady_clock::time_point> NextReview() const;

 private:
  // The neighbour that resolves a gateway next-hop (usable, on the path's port).
  const Neighbor* GatewayNeighbor(const NextHop& nh) const;
  // A gateway with no neighbour on its port, or an unusable one without a
  // MAC (how the kernel reports a FAILED one): what it resolved to before,
  // only the device can tell (a kept entry's code in its routes' space).
  bool Unresolved(const NextHop& nh) const;
  // By NhId: the live group whose only path the next-hop is (kNoGroup: none).
  std::vector<NhgId> SinglePathGroups() const;
  // The adjacency a next-hop resolves to now (nullopt: unresolved or not on a device port).
  std::optional<Adjacency> CurrentAdjacency(const NextHop& nh) const;
  // Its current adjacency, else the last one it resolved to (its weight
  // stays there, so an adjacency whose neighbours all fail keeps its code).
  std::optional<Adjacency> AdjacencyOf(const NextHop& nh) const;
  int CodeOfAdjacency(const Adjacency& a) const;  // 0 = none
  // The next-hop a group's weight is credited to when slots are chosen.
  std::optional<NhId> WeightOwner(NhgId g) const;
  // A neighbour of every old member of a code that lost all of them moved
  // to one new MAC: the code follows (its entry is rewritten in place).
  void FollowMacChanges();
  std::vector<bool> ValidNow() const;  // by code - 1: some live next-hop resolves to its owner
  GroupCodes CodesNow() const;
  using Time = std::chrono::steady_clock::time_point;
  Time Now() const { return config_.clock ? config_.clock() : std::chrono::steady_clock::now(); }
  // One family's weight of an adjacency: the highest since `until` was set,
  // or what it carries now once that lapsed.
  struct Held {
    uint64_t now = 0, held = 0;
    Time until;
    void Update(uint64_t w, Time t, std::chrono::milliseconds hold);
  };
  // The slot candidates from this commit's per-adjacency (/24s, IPv6 routes).
  std::vector<SlotCandidate> Candidates(const std::map<Adjacency, std::pair<uint64_t, uint64_t>>& weight);
  std::set<Adjacency> PinnedAdjacencies() const;

  FibConfig config_;
  const NexthopTable& nht_;
  NeighborMap neigh_;
  uint64_t touch_clock_ = 0;
  std::vector<std::optional<Adjacency>> owners_;  // by code - 1
  std::vector<bool> valid_;                       // by code - 1, as of the last Resolve (or Adopt)
  std::map<NextHop, Adjacency> bound_;            // each live next-hop's last adjacency
  std::vector<uint64_t> owner_weight_;            // by code - 1, as of the last Resolve
  struct AdjacencyWeight {
    Held v4, v6;        // /24s, IPv6 routes
    NextHop first;      // its lowest live next-hop, as last seen (ranks equal weights)
    Time adopted_until;  // adopted at a warm start: held whole until then
  };
  // Every adjacency that carries something or holds a weight; one whose
  // next-hops all went with their routes stays while its weight is held.
  std::map<Adjacency, AdjacencyWeight> held_;
  Held table4_, table6_;  // what all adjacencies carry: a held weight counts only what the table misses
  std::map<Adjacency, int> last_code_;              // the code each adjacency last owned, while no other has it
  GroupCodes codes_;                              // as of the last Resolve
};

}  // namespace fibnic
