// Fib: the control-plane RIB plus the compiled FIBNIC image behind one small
// modify / commit / query interface (in the spirit of DPDK lib/rib + lib/fib).
//
//   sources ──UpsertRoute/DeleteRoute/UpsertNeighbor──▶ Fib ──Commit()──▶ [DeviceDelta...] ──▶ hwif push
//
// Modifications are cheap and only mark work; Commit() compiles everything
// pending (IPv4 SRAM, next-hop slots, NEIGH CAM, IPv6 TCAM) and returns the
// ordered deltas to write (see device/fibnic_image.h for the safety contract).
// Not thread-safe: the daemon drives it from one strand.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fib/adjacency.h"
#include "fib/offload_state.h"
#include "rib/route.h"
#include "device/fibnic_image.h"

namespace fibnic {

enum class EcmpPolicy : uint8_t {
  kFirst,  // offload the lowest-address usable path
  kPunt,   // never offload multipath routes
};

struct FibConfig {
  regs::Caps caps = regs::Caps::Model2Bit();
  EcmpPolicy ecmp = EcmpPolicy::kFirst;
  // A next-hop without a slot takes one from an owner only when it carries
  // at least this many times the owner's weight (no reshuffle on every small
  // change).
  double slot_hysteresis = 1.25;
  // An adjacency's weight is held at its highest for this long after it
  // falls, so a routing daemon's restart (routes gone and back within
  // seconds) neither frees its slot nor lets another take it.
  std::chrono::milliseconds slot_hold{60'000};
  // Gateways whose adjacencies rank above every other (docs/fib.md).
  std::vector<IpAddr> slot_pins;
  // The time the hold is measured in (tests give their own; empty: steady_clock).
  std::function<std::chrono::steady_clock::time_point()> clock;
};

struct RouteInfo {
  Route route;  // the candidate (one per source)
  bool best = false;
  OffloadState state = OffloadState::kPunted;
  PuntReason reason = PuntReason::kNone;
  // IPv4: the route's own /24s (not covered by more-specifics) and how many punt.
  uint32_t slash24_total = 0;
  uint32_t slash24_punted = 0;
  // What the reason means here, in words (GetRoute only): "no neighbour
  // fe80::1 on port 1", "neighbour 10.0.0.1 on port 0 is failed", ...
  std::string why;
};

// What the RIB says for one destination (the reference answer).
struct RibAnswer {
  std::optional<Prefix> matched;  // longest matching best route, if any
  std::optional<NextHop> path;    // the path hardware should use (nullopt = punt)
  PuntReason reason = PuntReason::kNone;
  std::string why;                   // the reason in words, as in RouteInfo
  std::optional<Neighbor> neighbor;  // the resolved neighbour of path (gateway or destination)
};

struct SlotInfo {
  int code = 0;                          // 1 .. caps.slots()
  std::optional<Adjacency> adjacency;    // what the code names; nullopt = free
  std::vector<NextHop> next_hops;        // the next-hops whose space it codes, in order
  std::optional<NextHop> owner;          // the first of next_hops (nullopt = free)
  regs::NexthopEntry entry;              // as in the image
  uint64_t weight = 0;                   // address space it covers (IPv4 /24s + IPv6 routes)
};

// What AdoptDevice() took over from the device.
struct DeviceAdoption {
  int slots = 0;      // next-hop codes kept for the same owner
  int neighbors = 0;  // NEIGH CAM entries kept at their index
  int tcam6 = 0;      // TCAM6 entries the first compile starts from (and keeps if still optimal)
};

// Which best routes ForEachRoute(query, fn) visits: those of one family, in
// prefix order, that pass every filter given. The filters look at the prefix
// and the best candidate only, so routes they drop cost no RouteInfo.
struct RouteQuery {
  Family family = Family::kV4;
  std::optional<Prefix> after;     // only prefixes ordered after it (a page's cursor; may be of the other family)
  std::optional<Prefix> within;    // only prefixes inside it (itself included)
  std::optional<Prefix> covering;  // only prefixes containing it (itself included)
  std::optional<RouteSource> source;  // only routes whose best candidate comes from it
};

struct FibCounts {
  uint64_t routes[2][3] = {};  // [family v4=0/v6=1][OffloadState] over best routes
  // [family]: of the punted, those whose whole space more-specific routes
  // answer (reason shadowed): their state is punt, yet none of their traffic is.
  uint64_t shadowed[2] = {};
  uint64_t candidates = 0;     // all routes of all sources
  uint64_t neighbors = 0;
  int slots_used = 0;
  uint64_t commits = 0;
};

class Fib {
 public:
  explicit Fib(const FibConfig& config);
  ~Fib();
  Fib(const Fib&) = delete;
  Fib& operator=(const Fib&) = delete;

  const FibConfig& config() const;

  // --- modify (RibSink) -----------------------------------------------------
  void UpsertRoute(const Route& route);
  void DeleteRoute(const Prefix& prefix, RouteSource source);
  void UpsertNeighbor(const Neighbor& n);
  // A neighbour is (address, port): fe80::1 on port 1 is not fe80::1 on port 0.
  void DeleteNeighbor(const IpAddr& addr, PortId port);
  // Ports' own MACs (source MAC of rewritten frames).
  void SetPortMac(PortId port, const MacAddr& mac);
  RibSink& sink();

  // Warm restart: before the first Commit(), seed slot numbering, the NEIGH
  // CAM placement and the TCAM6 entries (the IPv6 entry choice prefers them
  // among equally good ones, as every incremental commit does) from what the
  // device holds (hwif readback), so an
  // unchanged table compiles to the device's own image. A NEXTHOP entry names
  // its owner by MAC+port (a gateway next-hop whose neighbour has that MAC on
  // that port: its adjacency) or CONNECTED+port; call it once routes and
  // neighbours are in.
  // Owners not found are not adopted (the normal policy applies), and it only
  // influences numbering — the first Commit() still compiles everything and
  // Sync writes what differs. Ignored after a Commit() or for other caps.
  DeviceAdoption AdoptDevice(const DeviceImage& device);

  // Compile what is pending; the deltas are to be pushed in order.
  std::vector<DeviceDelta> Commit();
  // Commit() in two steps, for a caller that pushes in between: CommitSafe()
  // compiles everything but the IPv6 TCAM's entry choice, whose entries
  // that a changed route makes wrong it turns into punts — pushed, the device
  // sends no packet where the host would not; CommitBest() then chooses the
  // TCAM's best entries (the costly part) for the next push. More changes
  // and CommitSafe()s may come in between; until CommitBest() the offload
  // states (and commits()) are those of the last complete commit.
  std::vector<DeviceDelta> CommitSafe();
  std::vector<DeviceDelta> CommitBest();
  // CommitBest() in steps, for a caller that takes the next batch in
  // between: nothing while a step stops at `deadline` (choosing()). A choice
  // is for the IPv6 routes as they were when it began; CommitSafe()s between
  // steps keep the device safe for later changes, which the next choice
  // takes: best_pending() until every change is in a finished choice (the
  // offload states are final then). Commit() finishes every choice.
  std::vector<DeviceDelta> CommitBest(std::chrono::steady_clock::time_point deadline);
  bool choosing() const;
  bool best_pending() const;
  // Compile what is pending for a Sync, which writes the whole image: no
  // SRAM delta is built (a table load's would hold every word, 8 bytes each).
  void CommitWhole();
  // The update stream has gone quiet (the caller's queue is empty): hands the
  // heap a churn left behind back to the system if many routes changed since
  // the last trim (fib/heap_trim.h).
  void TrimAfterChurn();
  // The stream has stayed quiet for a while: hands back what any change since
  // the last trim left behind.
  void TrimWhenIdle();
  // The compiled image as of the last Commit().
  const DeviceImage& image() const;

  // --- query ----------------------------------------------------------------
  RibAnswer Lookup(const IpAddr& dst) const;
  std::vector<RouteInfo> GetRoute(const Prefix& prefix) const;  // every source's candidate
  // One source's route for a prefix, if any (cheap: no offload state).
  std::optional<Route> FindRoute(const Prefix& prefix, RouteSource source) const;
  // One source's candidate for a prefix: whether it is the best and its
  // offload state as GetRoute gives it, without the paths or the words (the
  // FPM offload replies ask this of every route zebra sends).
  struct SourceState {
    bool best = false;
    OffloadState state = OffloadState::kPunted;
  };
  std::optional<SourceState> StateOf(const Prefix& prefix, RouteSource source) const;
  // The same for many prefixes at once (answers in their order; cheaper than
  // one call each: IPv6 states are looked up in prefix order).
  std::vector<std::optional<SourceState>> StatesOf(const std::vector<Prefix>& prefixes, RouteSource source) const;
  // Best routes of a family in prefix order; fn returns false to stop.
  void ForEachRoute(Family family, const std::function<bool(const RouteInfo&)>& fn) const;
  // The same, only the routes the query selects. A page costs a scan of the
  // RIB plus the ordering of what fn consumes, not the routes before it.
  void ForEachRoute(const RouteQuery& query, const std::function<bool(const RouteInfo&)>& fn) const;
  std::vector<Neighbor> Neighbors() const;
  std::vector<SlotInfo> Slots() const;
  FibCounts Counts() const;
  // Counts() in steps, for a caller that must not hold its thread for a whole
  // pass (tens of ms on a full table): each CountStep() works until
  // `deadline` (always making some progress) and, once the pass is done,
  // gives the counts. Any change to the Fib between steps (an edit, a
  // commit, a choice step) voids the pass: counts are always of one state.
  struct CountsPass;
  struct CountsPassDelete {
    void operator()(CountsPass* p) const;
  };
  using CountsPassPtr = std::unique_ptr<CountsPass, CountsPassDelete>;
  enum class CountsProgress { kMore, kDone, kVoid };
  CountsPassPtr StartCounts() const;
  // kDone: *out holds the counts. kVoid: the Fib changed; start a new pass.
  CountsProgress CountStep(CountsPass& pass, std::chrono::steady_clock::time_point deadline, FibCounts* out) const;
  // Commits so far (what Counts() reports, without its pass over the tables).
  uint64_t commits() const;
  // When a slot owner's held weight lapses: a Commit() then may move slots
  // although no route changed (nullopt: nothing held).
  std::optional<std::chrono::steady_clock::time_point> NextSlotReview() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fibnic
