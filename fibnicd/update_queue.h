// The hand-off between the sources (their own threads) and the pipeline (the
// Fib's strand). Sources call the RibSink methods and never wait for the
// device: an update only takes a short lock. Updates to the same key (route
// prefix + source, or neighbour address + port) coalesce — the newer replaces the
// older in place, keeping its queue position — so the queue is bounded by the
// number of distinct keys (the table size), never by the update rate, and a
// flapping route costs one entry. Taking is FIFO by first arrival, and a cut
// never splits time: a key taken with a value that arrived at time T brings
// every key with an update up to T along, so a batch is always
// a state the sources were in, not a later value of one key next to an earlier
// value of another. A batch may therefore exceed Take's max by what coalesced.
//
// Memory: a pending update is a PackedUpdate (56 bytes, fibnicd/packed_update.h)
// in a deque in first-arrival order, found by its key through an open-addressing
// index of positions (8 bytes a slot, at most 3/4 full) that keeps no key of
// its own; route paths are interned per distinct set. ~70 bytes per pending
// update, against ~470 when each one was a node-based map entry.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fibnicd/packed_update.h"
#include "rib/route.h"

namespace fibnic {

struct UpdateBatch {
  PackedUpdates updates;
  std::chrono::steady_clock::time_point oldest;  // first_arrival of the oldest update
};

class UpdateQueue : public RibSink {
 public:
  // wake is called (from the source's thread, without the lock held) when the
  // queue goes from empty to non-empty, and when its depth reaches the wake
  // threshold (a full batch is waiting).
  explicit UpdateQueue(std::function<void()> wake);
  void set_wake_threshold(size_t depth);

  void UpsertRoute(const Route& route) override;
  void DeleteRoute(const Prefix& prefix, RouteSource source) override;
  void UpsertNeighbor(const Neighbor& n) override;
  void DeleteNeighbor(const IpAddr& addr, PortId port) override;

  // Up to max updates, oldest first, plus whatever the cut would split (see above).
  UpdateBatch Take(size_t max);

  size_t depth() const;
  // Arrival time of the oldest pending update (nullopt when empty).
  std::optional<std::chrono::steady_clock::time_point> OldestArrival() const;
  // Arrival number of the oldest pending update, or UINT64_MAX when empty:
  // every update numbered below it has been taken.
  uint64_t OldestSeq() const;
  // Number the next update will get (for barriers: "everything so far").
  uint64_t NextSeq() const;

  uint64_t received() const;   // updates handed in
  uint64_t coalesced() const;  // updates that replaced a pending one
  size_t max_depth() const;
  // Distinct path sets the pending route upserts name (each kept once).
  size_t path_sets() const;
  // Bytes the pending updates, their index and their path sets hold.
  size_t memory() const;

 private:
  struct PathsHash {
    size_t operator()(const std::vector<NextHop>& v) const noexcept;
  };
  struct PathSet {
    const std::vector<NextHop>* paths = nullptr;  // the key in set_ids_
    uint32_t refs = 0;                            // pending upserts naming it
  };
  void Put(PackedUpdate u, const std::vector<NextHop>* paths);
  uint32_t InternPaths(const std::vector<NextHop>& paths);
  void ReleasePaths(uint32_t id);
  // Index: slot of the pending update with e's key, or the empty slot where it goes.
  size_t Probe(const PackedUpdate& e) const;
  const PackedUpdate& At(uint64_t pos) const { return entries_[pos - front_pos_]; }
  void IndexInsert(const PackedUpdate& e, uint64_t pos);
  void IndexErase(const PackedUpdate& e);
  void IndexGrow();
  static constexpr size_t kKeepSlots = size_t{1} << 14;

  std::function<void()> wake_;
  mutable std::mutex mu_;
  std::deque<PackedUpdate> entries_;  // pending, by first arrival
  uint64_t front_pos_ = 0;            // position of entries_.front() since the queue began
  std::vector<uint64_t> index_;       // position + 1 of a pending update; 0 = empty
  std::unordered_map<std::vector<NextHop>, uint32_t, PathsHash> set_ids_;
  std::vector<PathSet> sets_;
  std::vector<uint32_t> free_sets_;
  uint64_t next_seq_ = 0;
  uint64_t received_ = 0;
  uint64_t coalesced_ = 0;
  size_t max_depth_ = 0;
  size_t wake_threshold_ = SIZE_MAX;
};

}  // namespace fibnic
