// Inside the Fib (fib/fib.h), one file per job:
//   fib.cc          the front: intake (routes into the RIB and the compilers,
//                   the IPv4 bulk queue), neighbours, port MACs
//   fib_adopt.cc    warm start: adopting the device's codes, CAM and TCAM
//   fib_commit.cc   Commit(): resolve → retire delta → main delta
//   fib_queries.cc  RouteInfo, Lookup, listing, Counts, Slots
//   resolver.*      resolution, answers, slots → the codes of a commit
//   tcam6_feed.*    the IPv6 best routes in the TCAM compiler
//   sram4/, tcam6/, neigh_cam.*: the table compilers
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "fib/fib.h"
#include "fib/heap_trim.h"
#include "fib/neigh_cam.h"
#include "fib/resolver.h"
#include "fib/sram4/sram4_compiler.h"
#include "fib/tcam6_feed.h"
#include "rib/nexthop_table.h"
#include "rib/rib.h"

namespace fibnic {

struct Fib::Impl : public RibSink {
  explicit Impl(const FibConfig& c)
      : cfg(c), image(c.caps), resolver(c, nht), tcam6(c.caps.tcam_entries) {}

  // --- intake (fib.cc) ----------------------------------------------------------
  void UpsertRoute(const Route& route) override;
  void DeleteRoute(const Prefix& prefix, RouteSource source) override;
  void UpsertNeighbor(const Neighbor& n) override {
    ++edits;
    resolver.UpsertNeighbor(n);
  }
  void DeleteNeighbor(const IpAddr& addr, PortId port) override {
    ++edits;
    resolver.DeleteNeighbor(addr, port);
  }
  // Applies the IPv4 queue (see pending_v4) to the RIB and the SRAM compiler.
  void Settle();
  void Apply(const Prefix& p, const RibChange& ch);
  void ApplyV4(uint32_t a, uint8_t len, const RibChange& ch);
  void PaintV4(uint32_t a, uint8_t len, NhgId best);

  // --- warm start (fib_adopt.cc) --------------------------------------------------
  DeviceAdoption AdoptDevice(const DeviceImage& device);
  // What the device answers the asked groups' space with, of the kept codes:
  // in the SRAM, at a /24 the group answers whole; in the TCAM, at some
  // address of one of its routes no longer route up to /64 holds.
  Resolver::ShownCodes ShownByDevice(const DeviceImage& device, const Resolver::KeptEntryQuestion& q) const;
  void ShownInSram(const DeviceImage& device, const Resolver::KeptEntryQuestion& q, Resolver::ShownCodes& shown) const;
  void ShownInTcam(const Resolver::KeptEntryQuestion& q, Resolver::ShownCodes& shown) const;
  // Whether [first, last] (the first 64 bits of addresses inside an IPv6
  // route of length len) holds one that no longer route up to /64 covers.
  bool OwnAddressIn(int len, uint64_t first, uint64_t last) const;
  // The length of the shortest IPv6 route of at least min_len (<= 64) holding the address.
  std::optional<int> ShortestRouteAt(uint64_t high64, int min_len) const;

  // --- commit (fib_commit.cc) ---------------------------------------------------
  std::vector<DeviceDelta> Commit();
  std::vector<DeviceDelta> CommitSafe(bool protect = true);
  std::vector<DeviceDelta> CommitBest();
  std::vector<DeviceDelta> CommitBest(std::chrono::steady_clock::time_point deadline);
  std::vector<DeviceDelta> FinishBest(std::vector<TcamWrite> writes);
  std::vector<Resolver::GroupWeight> GroupWeights() const;
  void CompileNexthops(const CommitCodes& codes, DeviceDelta& retire, DeviceDelta& main);
  void CompileSram4(const CommitCodes& codes, DeviceDelta& retire, DeviceDelta& main);
  void CompileTcam6(const CommitCodes& codes, DeviceDelta& retire, DeviceDelta& main, bool protect);
  void CompileNeighCam(DeviceDelta& retire, DeviceDelta& main);
  std::vector<CamWant> EligibleNeighbors() const;

  // --- queries (fib_queries.cc) ---------------------------------------------------
  std::optional<std::pair<Prefix, RibCand>> MatchV6(const IpAddr& dst) const;
  uint8_t TcamCodeOf(const IpAddr& dst) const;
  RouteInfo Info(const Prefix& p, const RibCand& c, bool best) const;
  // Info without the route's paths (info.route stays empty). `walk`: for
  // IPv6 questions in ascending prefix order (Tcam6Compiler::StateOf).
  RouteInfo StateInfo(const Prefix& p, const RibCand& c, bool best, std::vector<int>* walk = nullptr) const;
  // A group's punt reason in words: the next-hop it concerns and what is missing.
  std::string WhyGroup(NhgId g, PuntReason reason) const;
  template <typename Key, typename ToKey, typename ToPrefix>
  void List(const RouteQuery& q, ToKey to_key, ToPrefix to_prefix, const std::function<bool(const RouteInfo&)>& fn) const;
  // --- counts (fib_counts.cc) ----------------------------------------------------
  // The IPv4 and IPv6 parts of a counting pass, each until `deadline`; true when done.
  bool CountV4(CountsPass& pass, std::chrono::steady_clock::time_point deadline) const;
  bool CountV6(CountsPass& pass, std::chrono::steady_clock::time_point deadline) const;

  // IPv4 upserts and deletes wait here until anything reads or commits
  // (Settle); a table load then goes into the RIB in one prefetched batch.
  struct PendingV4 {
    uint32_t addr = 0;
    uint8_t len = 0;
    bool erase = false;  // delete cand.source's route
    RibCand cand;
  };

  FibConfig cfg;
  NexthopTable nht;
  Rib rib;
  std::vector<PendingV4> pending_v4;
  Sram4Compiler sram;
  DeviceImage image;           // as of the last Commit()
  Resolver resolver;           // neighbours, slots, answers (reads nht)
  Tcam6Feed tcam6;
  std::vector<uint32_t> port_macs_changed;  // since the last Commit()
  std::vector<uint8_t> moved;  // by clamped group id: its SRAM code moved this commit (kept to avoid reallocation)
  HeapTrim heap;
  uint64_t commits = 0;
  // Every change to what the queries answer (an edit, a commit, a choice
  // step): a counting pass in steps starts over when it moved.
  uint64_t edits = 0;
};

}  // namespace fibnic
