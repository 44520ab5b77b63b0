// The hand-off between the sources (their own threads) and the pipeline (the
// Fib's strand). Sources call the RibSink methods and never wait for the
// device: an update only takes a short lock. Updates to the same key (route
// prefix + source, or neighbour address + port) coalesce — the newer replaces the
// older in place, keeping its queue position — so the queue is bounded by the
// number of distinct keys (the table size), never by the update rate, and a
// flapping route costs one entry. Taking is FIFO by first arrival, and a cut
// never splits time: a key taken with a value that arrived at time T brings
// every key with an update up to T along (issue #14, 6b), so a batch is always
// a state the sources were in, not a later value of one key next to an earlier
// value of another. A batch may therefore exceed Take's max by what coalesced.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "rib/route.h"

namespace fibnic {

struct PendingUpdate {
  enum class Kind : uint8_t { kUpsertRoute, kDeleteRoute, kUpsertNeighbor, kDeleteNeighbor };
  Kind kind = Kind::kUpsertRoute;
  Route route;          // kUpsertRoute; kDeleteRoute uses route.prefix/source
  Neighbor neighbor;    // kUpsertNeighbor; kDeleteNeighbor uses neighbor.addr and .port
  uint64_t seq = 0;     // arrival number of the key's first pending update
  uint64_t last_seq = 0;  // arrival number of the value it holds now
  std::chrono::steady_clock::time_point first_arrival;
};

struct UpdateBatch {
  std::vector<PendingUpdate> updates;
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

 private:
  struct Key {
    uint8_t kind = 0;  // 0 route, 1 neighbour
    RouteSource source = RouteSource::kStatic;
    Prefix prefix;     // neighbours: the host prefix of the address
    PortId port = 0;   // neighbours: a link-local address is one neighbour per port
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      return std::hash<Prefix>()(k.prefix) * 7 + k.kind * 3 + static_cast<size_t>(k.source) + size_t{k.port} * 131;
    }
  };
  void Put(const Key& key, PendingUpdate u);
  static constexpr size_t kKeepBuckets = size_t{1} << 14;

  std::function<void()> wake_;
  mutable std::mutex mu_;
  std::deque<Key> order_;
  std::unordered_map<Key, PendingUpdate, KeyHash> pending_;
  uint64_t next_seq_ = 0;
  uint64_t received_ = 0;
  uint64_t coalesced_ = 0;
  size_t max_depth_ = 0;
  size_t wake_threshold_ = SIZE_MAX;
};

}  // namespace fibnic
