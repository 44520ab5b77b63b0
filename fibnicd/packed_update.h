// One pending update as the queue holds it, and the batch a Take hands out.
//
// A route update used to wait as a whole `Route` in a node of an
// unordered_map, its key again in a deque and its paths in a vector of their
// own: ~470 bytes per pending route (IpAddr is 32 bytes with its 128-bit
// value), 150-200 MB while a peer's routes were withdrawn and re-announced
// faster than they were applied. Packed, an update is 56 bytes: the key's
// address as two words, its arrival numbers and time, and the value — a route
// upsert's distance and its path set (an id into the sets the queue interns:
// the routes of one peer share one), a neighbour's MAC and state.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "rib/route.h"

namespace fibnic {

// An update decoded: what the Fib is given.
struct PendingUpdate {
  enum class Kind : uint8_t { kUpsertRoute, kDeleteRoute, kUpsertNeighbor, kDeleteNeighbor };
  Kind kind = Kind::kUpsertRoute;
  Route route;          // kUpsertRoute; kDeleteRoute uses route.prefix/source
  Neighbor neighbor;    // kUpsertNeighbor; kDeleteNeighbor uses neighbor.addr and .port
  uint64_t seq = 0;     // arrival number of the key's first pending update
  uint64_t last_seq = 0;  // arrival number of the value it holds now
  std::chrono::steady_clock::time_point first_arrival;
};

struct PackedUpdate {
  uint64_t hi = 0, lo = 0;  // the key's address (IPv4 in lo)
  uint64_t seq = 0, last_seq = 0;
  std::chrono::steady_clock::rep first_arrival = 0;  // steady_clock ticks
  PendingUpdate::Kind kind = PendingUpdate::Kind::kUpsertRoute;
  Family family = Family::kV4;
  uint8_t len = 0;    // routes: the prefix length; neighbours: the family's width
  RouteSource source = RouteSource::kStatic;  // routes (neighbours: kStatic)
  PortId port = 0;    // neighbours (routes: 0)
  uint8_t small = 0;  // route upserts: distance; neighbour upserts: NeighState
  MacAddr mac;        // neighbour upserts
  uint32_t paths = 0;  // route upserts: the path set (the queue's id, then the batch's index)

  bool is_route() const { return kind == PendingUpdate::Kind::kUpsertRoute || kind == PendingUpdate::Kind::kDeleteRoute; }
  // Same key: updates to it coalesce.
  bool SameKey(const PackedUpdate& o) const {
    return is_route() == o.is_route() && source == o.source && port == o.port && family == o.family &&
           len == o.len && hi == o.hi && lo == o.lo;
  }
  uint64_t KeyHash() const;
};
static_assert(sizeof(PackedUpdate) == 56);

// The packed fields of an update (seq, arrival and path set left to the queue).
PackedUpdate PackRoute(PendingUpdate::Kind kind, const Prefix& prefix, RouteSource source, uint8_t distance);
PackedUpdate PackNeighbor(PendingUpdate::Kind kind, const IpAddr& addr, PortId port, const MacAddr& mac,
                          NeighState state);

// The updates of one batch in arrival order, with the path sets they name.
// Read by index; each read decodes (operator[] into a new PendingUpdate,
// Decode into one whose storage is reused). A deque like the queue's: Take
// moves each update across as it pops it, so a table-sized batch (a next-hop
// object deleted under 100k routes) never exists twice, in the queue and in
// one vector allocated for the batch.
class PackedUpdates {
 public:
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  PendingUpdate operator[](size_t i) const {
    PendingUpdate u;
    Decode(i, u);
    return u;
  }
  void Decode(size_t i, PendingUpdate& out) const;
  std::chrono::steady_clock::time_point first_arrival(size_t i) const {
    return std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(entries_[i].first_arrival));
  }

  class iterator {
   public:
    iterator(const PackedUpdates* of, size_t i) : of_(of), i_(i) {}
    PendingUpdate operator*() const { return (*of_)[i_]; }
    iterator& operator++() { return ++i_, *this; }
    bool operator==(const iterator& o) const { return i_ == o.i_; }

   private:
    const PackedUpdates* of_;
    size_t i_;
  };
  iterator begin() const { return iterator(this, 0); }
  iterator end() const { return iterator(this, entries_.size()); }

 private:
  friend class UpdateQueue;
  std::deque<PackedUpdate> entries_;
  std::vector<std::vector<NextHop>> paths_;  // by PackedUpdate::paths
};

}  // namespace fibnic
