// What the kernel has told us — links, neighbours and routes of the
// configured tables — turned into RIB upserts/deletes. Socket-free, so the
// tests and the bench drive it directly; KernelSource feeds it.
//
// Several kernel routes may share a prefix (the local and main tables,
// metrics, TOS): the RIB gets one per prefix, the one the kernel would use —
// anything in the local table first (punted: it is the host's), then the
// configured tables in order, lowest metric first. A TOS-specific route
// punts its prefix (the FIBNIC does not look at TOS), and so do several
// routes of equal rank and metric (IPv6 same-metric routes via different
// devices, IPv4 `ip route append`): the kernel picks among them itself.
//
// Reconciliation is mark-and-sweep: BeginResync() starts a generation, the
// dump refreshes what still exists, EndResync() deletes the rest.
//
// Policy rules (kernel_rules.h) and the VRF choice (kernel_vrf.h) are kept
// in their own classes; this table asks them what punts.
//
// Next-hop objects (`ip nexthop`, kernel_table_nexthop.cc): a route naming
// one (RTA_NH_ID) forwards along the object's paths as they are now; the
// objects' changes re-evaluate the routes using them, and the removals the
// kernel makes without a message (a link going down) are mirrored.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sources/kernel/kernel_routes.h"
#include "sources/kernel/kernel_rules.h"
#include "sources/kernel/kernel_vrf.h"
#include "sources/netlink/netlink_paths.h"
#include "sources/netlink/netlink_ports.h"
#include "sources/netlink/netlink_route.h"
#include "sources/netlink/nexthop_objects.h"
#include "rib/route.h"

struct nlmsghdr;

namespace fibnic {

struct KernelTableOptions {
  std::vector<uint32_t> tables = {255, 254};  // local, main
  uint8_t distance = 100;
  // Routes of these protocols (rtm_protocol) are not taken. Their gateways
  // are still resolved, and one replacing a route of the table's takes it
  // out, as in the kernel.
  std::set<uint8_t> ignore_protocols;
};

struct KernelTableCounts {
  uint64_t messages = 0;
  uint64_t ignored = 0;        // other tables, families, protocols
  uint64_t route_updates = 0;  // upserts + deletes given to the RIB
  uint64_t neighbor_updates = 0;
  uint64_t swept = 0;          // routes + neighbours removed by sweeps
  // IPv6 replaces that took one of several routes without saying which:
  // each asks for a re-dump (RedumpWanted).
  uint64_t unsure_replaces = 0;
  // Dumps the tables changed under, and the routes they did not list that
  // were kept (unlisted, punting) for the next dump to decide (BeginSweep).
  uint64_t torn_dumps = 0;
  uint64_t kept_unlisted = 0;
  // Why every route punts (FIBNIC ports split over VRFs, or in a VRF whose
  // table is not followed); empty while the ports' routing table is followed.
  std::string refusing;
};

class KernelTable {
 public:
  // resolve(gateway, ifindex) asks the kernel to resolve a gateway on a
  // FIBNIC port whose neighbour is missing or failed.
  using ResolveFn = std::function<void(const IpAddr& gateway, uint32_t ifindex)>;

  KernelTable(RibSink& sink, PortNames ports, KernelTableOptions options, ResolveFn resolve);

  // One netlink message (route, neighbour or link). Malformed ones change
  // nothing and come back as an error naming the offset.
  Status Apply(const nlmsghdr* msg);

  void BeginResync();
  // Returns what was swept.
  size_t EndResync();
  // The same in steps, so that sweeping a million routes never holds the
  // event loop (KernelSource): BeginSweep, SweepStep(max) — at most `max`
  // routes looked at or swept — until it returns true, then EndSweep (the
  // objects, addresses, rules and neighbours; returns what was swept).
  //
  // torn: the routing tables changed while the dump read them. A route
  // dump is not a snapshot, and the kernel marks neither IPv4 nor IPv6
  // route dumps interrupted (NLM_F_DUMP_INTR); it resumes each part by
  // position (fib6_dump_table, fn_trie_dump_leaf). A sweep decided on such a
  // dump removes what the dump did not list on the strength of a list that
  // never existed at one moment, while removing is the one decision that can
  // send a packet where the kernel would not (to a cover). So a torn dump's
  // unlisted routes are kept, marked unlisted (the prefix punts), and a
  // re-dump is asked for (RedumpWanted), which sweeps them once a dump
  // lists the tables whole. tests/sources/ipv6_dump_torn_test.py checks on
  // the running kernel that a dump nothing changed lists every route and
  // that one that left routes out was heard changing.
  void BeginSweep(bool torn = false);
  bool SweepStep(size_t max);
  size_t EndSweep();
  // A dump the kernel marked interrupted (NLM_F_DUMP_INTR) ends without a
  // sweep — it may have missed what the kernel holds — by not calling
  // EndResync: the next dump's sweeps.

  // Re-asks for every wanted gateway still unresolved (periodic retry).
  void ResolvePending();

  size_t routes() const { return routes_.size(); }
  // Whether the table no longer knows some prefix's routes for sure (see
  // KernelTableCounts::unsure_replaces) and wants the kernel dumped again;
  // asking clears it.
  bool RedumpWanted() { return std::exchange(redump_wanted_, false); }
  // The route store, for the notes of the offload replies (route_notes.h).
  KernelRoutes& route_store() { return routes_; }
  size_t route_kinds() const { return routes_.kinds(); }
  size_t route_memory() const {
    return routes_.memory() + odd_.size() * (sizeof(Prefix) + sizeof(std::optional<std::vector<NextHop>>) + 32);
  }
  size_t neighbors() const { return neigh_emitted_.size(); }
  size_t nexthop_objects() const { return nexthops_.size(); }
  const KernelTableCounts& counts() const { return counts_; }
  InterfacePorts& ports() { return ports_; }

 private:
  // Precedence order within a prefix: local table first, then configured
  // table order, then metric, then TOS.
  // (table rank, priority, tos, next-hop object, path identity, IPv4
  // identity): the identities keep routes that differ only in their single
  // path (or object) apart, as the kernel does, and for IPv4 in anything
  // else the kernel tells them apart by (type, protocol, scope, every path,
  // metrics, preferred source: a hash; see KeyOf).
  using Key = KernelRouteKey;
  static Key KeyOf(int rank, const NlRoute& r);
  static bool SameRank(const Key& a, const Key& b);
  using Entry = KernelRouteEntry;
  using Entries = KernelRouteEntries;
  // A neighbour is an address on an interface: a link-local address on two
  // interfaces is two neighbours (kernel_table_neigh.cc).
  struct NeighKey {
    uint32_t ifindex = 0;
    IpAddr addr;
    bool operator==(const NeighKey&) const = default;
  };
  struct NeighKeyHash {
    size_t operator()(const NeighKey& k) const noexcept { return std::hash<IpAddr>()(k.addr) * 31 + k.ifindex; }
  };
  struct Neigh {
    MacAddr mac;
    NeighState state = NeighState::kIncomplete;
    uint64_t gen = 0;
  };

  Status ApplyRoute(const nlmsghdr* msg);
  void ApplyRouteTo(Entries& entries, NlRoute& r, const Key& key, uint16_t nlmsg_flags);
  Status ApplyIgnoredRoute(const nlmsghdr* msg, const NlRoute& r, const Key& key);
  Status ApplyNeigh(const nlmsghdr* msg);
  Status ApplyLink(const nlmsghdr* msg);
  Status ApplyRule(const nlmsghdr* msg);
  // kernel_table_nexthop.cc
  Status ApplyNexthop(const nlmsghdr* msg);
  void DropObjectsVia(uint32_t ifindex);
  void DropObjects(const std::vector<NlNexthop>& removed, const std::vector<uint32_t>& changed);
  void AddObjectGateway(const NlNexthop& n, int delta);
  void EmitUsersOf(const std::vector<uint32_t>& ids);
  std::vector<Prefix> SweepObjects();
  Status ApplyAddr(const nlmsghdr* msg);  // kernel_table_addr.cc
  void SweepAddrs();
  void EmitInside(const Prefix& outer);
  // How an interface lost IPv4 (kernel_table_link.cc): what the kernel's
  // flush takes with it.
  enum class Ipv4Loss { kLinkDown, kNoAddress, kGone };
  void DropIpv4PathsVia(uint32_t ifindex, Ipv4Loss loss);
  void ReviveIpv4PathsVia(uint32_t ifindex);
  std::optional<int64_t> ReplaceFirstOfRankV4(Entries& entries, const Key& key);
  int64_t PlaceV4(const Entries& entries, const Key& key, uint16_t nlmsg_flags);
  void ForgetLinkStateFlags(NlRoute& r) const;
  size_t ReplaceSameRankV6(Entries& entries, const Key& key, const NlRoute& r);
  // IPv6: a multipath candidate (unicast via gateways, no object), which a
  // replace of its kind takes first (fib6_add_rt2node).
  static bool Ecmp(const NlRoute& r);
  // IPv6: a route whose entry is one route, maybe held several times
  // (KernelRouteEntry::copies), not a set of paths each a route.
  static bool Whole(const NlRoute& r);
  int TableRank(uint32_t table) const;
  void AddGateways(const NlRoute& r, int delta);
  // What the device is given for p now: its paths, or nullopt for nothing.
  std::optional<std::vector<NextHop>> OutputOf(const Prefix& p);
  std::vector<NextHop> KindOutput(const KernelRoutes::Kind& k);
  void EmitRoute(const Prefix& p);  // gives p's output to the RIB, whatever it was
  void EmitIfChanged(const Prefix& p, const std::optional<std::vector<NextHop>>& before);
  void Emit(const Prefix& p, const std::optional<std::vector<NextHop>>& now);
  // What the RIB was last given for p (nullopt: nothing), and the record of it.
  std::optional<std::vector<NextHop>> Emitted(const Prefix& p);
  // What a prefix was given, as recorded in its word (KernelRoutes::given).
  static constexpr uint8_t kGivenKind = 0, kGivenToHost = 1, kGivenNothing = 2, kGivenOdd = 3;
  void Remember(const Prefix& p, std::optional<std::vector<NextHop>> given);
  // Takes p's routes, lets `change` edit them, puts them back and gives the
  // RIB p's output if it changed.
  void ChangeRoutes(const Prefix& p, const std::function<void(Entries&)>& change);
  void EmitNeigh(const NeighKey& key);
  void ReevaluateAll();
  std::vector<Prefix> PrefixesOfKinds(const std::vector<uint32_t>& kinds) const;
  bool WantsResolution(const NeighKey& gw) const;

  RibSink& sink_;
  InterfacePorts ports_;
  KernelTableOptions options_;
  ResolveFn resolve_;
  uint64_t gen_ = 1;
  int64_t last_order_ = 0;  // Entry::order of the last route placed at the end
  KernelRoutes routes_;
  // IPv6: whether the dump may have left out the unlisted route `key` of p
  // (a listed multipath route of its rank hides what sits between its
  // siblings in the kernel's list).
  bool MayBeHiddenByTheDump(const Prefix& p, const Entries& entries, const Key& key) const;
  static bool SeveralRoutes(const std::vector<NlPath>& paths);
  struct Sweep {  // the sweep in progress (BeginSweep .. EndSweep)
    bool links_changed = false;
    size_t swept = 0;
    size_t cursor = 0;
    bool last_pass = false;
    bool torn = false;  // BeginSweep(torn)
    size_t kept = 0;    // routes (or paths) kept unlisted because the dump was torn
  } sweep_;
  // What was given to the RIB, where the record in a prefix's word
  // (Remember) does not say it: neither its single kind's cached output, nor
  // to-host, nor nothing — a multi-route prefix's best route, say — and a
  // policy rule's destination without routes. A kind's output changes only
  // by a Recompute whose prefixes are then given their new output.
  std::unordered_map<Prefix, std::optional<std::vector<NextHop>>> odd_;
  std::string context_;  // what every route's output depends on, as of the last ReevaluateAll
  bool redump_wanted_ = false;
  // During a dump: per IPv6 prefix held before it, per entry, the paths the
  // dump's messages named (ApplyRouteTo); the rest go at its end.
  std::unordered_map<Prefix, std::map<Key, std::vector<NlPath>>> dump_named_;
  // During a dump: per IPv6 prefix, the whole routes held more than once
  // before it and their copies (the dump counts them again).
  std::unordered_map<Prefix, std::map<Key, uint32_t>> dump_copies_;
  void DropPathsTheDumpDidNotName();
  bool NoteDumpListing(const Prefix& p, const Key& key, Entry& e, const NlRoute& r);
  std::unordered_map<NeighKey, Neigh, NeighKeyHash> neighs_;
  std::unordered_map<NeighKey, Neighbor, NeighKeyHash> neigh_emitted_;
  std::unordered_map<uint32_t, uint64_t> link_gen_;
  // Links without carrier (IFF_LOWER_UP clear): the kernel keeps their
  // routes, flagged RTNH_F_LINKDOWN, without telling.
  std::unordered_set<uint32_t> no_carrier_;
  // Links administratively down: their coming up revives dead IPv4 paths.
  std::unordered_set<uint32_t> admin_down_;
  // Each interface's IPv4 addresses (→ the generation that last saw them):
  // losing the last one disables IPv4 on it, a new one revives its paths.
  std::unordered_map<uint32_t, std::map<IpAddr, uint64_t>> v4_addrs_;
  // Policy rules that may send traffic elsewhere than the configured
  // tables: their destination prefix punts, and every route inside it.
  PolicyRules rules_;
  // Which table the FIBNIC ports route with (VRF); counts_.refusing mirrors
  // its refusing().
  VrfContext vrf_;
  bool UpdateContext();
  bool RankActive(int rank) const;
  std::unordered_map<NeighKey, uint32_t, NeighKeyHash> gateways_;  // gateway on its interface → routes/objects naming it
  NexthopObjects nexthops_;
  KernelTableCounts counts_;
};

}  // namespace fibnic
