// What the FPM source keeps per zebra route beside the RIB: which next-hop
// set the route names (zebra's next-hop group id, or an interned inline path
// set), whether the current replay has re-sent it and whether the kernel's
// dump in progress showed it (one byte of marks). Everything else about
// the route (its paths as the RIB sees them) lives once, in the RIB.
//
// A route is 12 bytes (IPv4) or 24 bytes (IPv6) in an open-addressing table
// kept 64-80% full (linear probing, backward-shift deletion; grown by a
// quarter): 15-19 and 30-38 bytes per route, against ~1 KB when each route was a node-based map
// entry holding zebra's whole message, its users' sets and what was emitted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/ip.h"

namespace fibnic {

struct FpmRouteRef {
  uint32_t set = 0;       // FpmSetId (fpm_table.h)
  bool stale = false;     // marked at a reconnect, cleared when zebra re-sends it
  uint8_t protocol = 0;   // rtm_protocol zebra sent (its replies must carry it)
  uint8_t replied = 0;    // FpmOffload last replied; 0 = zebra waits for one
  // The kernel's re-dump in progress showed a route at this prefix (FpmTable::KernelDumpBegins).
  bool kernel_seen = false;
  bool operator==(const FpmRouteRef&) const = default;
};

class FpmRouteRefs {
 public:
  size_t size() const { return v4_.size + v6_.size; }
  std::optional<FpmRouteRef> Find(const Prefix& p) const;
  void Put(const Prefix& p, FpmRouteRef ref);  // inserts or replaces
  bool Erase(const Prefix& p);                 // false when absent
  // Every route: fn(prefix, set, bool& stale) may change the stale mark.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    auto one = [&](const Prefix& p, auto& e) {
      bool stale = e.marks & kStale;
      fn(p, e.set, stale);
      e.marks = static_cast<uint8_t>(stale ? e.marks | kStale : e.marks & ~kStale);
    };
    for (auto& e : v4_.slots) {
      if (e.len != kEmpty) one(Prefix::V4(e.addr, e.len), e);
    }
    for (auto& e : v6_.slots) {
      if (e.len != kEmpty) one(Prefix::V6((static_cast<U128>(e.hi) << 64) | e.lo, e.len), e);
    }
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& e : v4_.slots) {
      if (e.len != kEmpty) fn(Prefix::V4(e.addr, e.len), e.set, (e.marks & kStale) != 0);
    }
    for (const auto& e : v6_.slots) {
      if (e.len != kEmpty) fn(Prefix::V6((static_cast<U128>(e.hi) << 64) | e.lo, e.len), e.set, (e.marks & kStale) != 0);
    }
  }
  // Up to `max` routes from position `cursor` on (0 = the start), with their
  // refs (fn(prefix, FpmRouteRef&) may change `replied` and `kernel_seen`); returns where the
  // next call goes on, 0 once the walk is through. For walks spread over
  // time: routes put or erased meanwhile may be missed or seen twice.
  template <typename Fn>
  size_t Walk(size_t cursor, size_t max, Fn&& fn) {
    size_t i = cursor;
    for (; i < v4_.slots.size() + v6_.slots.size() && max != 0; ++i) {
      if (i < v4_.slots.size()) {
        V4& e = v4_.slots[i];
        if (e.len != kEmpty) --max, Visit(Prefix::V4(e.addr, e.len), e, fn);
      } else {
        V6& e = v6_.slots[i - v4_.slots.size()];
        if (e.len != kEmpty) --max, Visit(Prefix::V6((static_cast<U128>(e.hi) << 64) | e.lo, e.len), e, fn);
      }
    }
    return i == v4_.slots.size() + v6_.slots.size() ? 0 : i;
  }
  size_t memory() const { return v4_.slots.capacity() * sizeof(V4) + v6_.slots.capacity() * sizeof(V6); }
  // A slot's ref, and a ref's marks byte (for the slot routines in fpm_route_refs.cc).
  template <typename E>
  static FpmRouteRef RefOf(const E& e) {
    return FpmRouteRef{e.set, (e.marks & kStale) != 0, e.protocol, e.replied, (e.marks & kKernelSeen) != 0};
  }
  static uint8_t MarksOf(const FpmRouteRef& ref) {
    return static_cast<uint8_t>((ref.stale ? kStale : 0) | (ref.kernel_seen ? kKernelSeen : 0));
  }

 private:
  static constexpr uint8_t kEmpty = 0xFF;
  // `marks`: FpmRouteRef's stale and kernel_seen.
  static constexpr uint8_t kStale = 1, kKernelSeen = 2;
  struct V4 {
    uint32_t addr = 0;
    uint32_t set = 0;
    uint8_t len = kEmpty;
    uint8_t marks = 0;
    uint8_t protocol = 0;
    uint8_t replied = 0;
  };
  struct V6 {
    uint64_t hi = 0, lo = 0;
    uint32_t set = 0;
    uint8_t len = kEmpty;
    uint8_t marks = 0;
    uint8_t protocol = 0;
    uint8_t replied = 0;
  };
  template <typename E, typename Fn>
  static void Visit(const Prefix& p, E& e, Fn& fn) {
    FpmRouteRef ref = RefOf(e);
    fn(p, ref);
    e.replied = ref.replied;
    e.marks = static_cast<uint8_t>((e.marks & kStale) | (ref.kernel_seen ? kKernelSeen : 0));
  }
  static_assert(sizeof(V4) == 12 && sizeof(V6) == 24);
  template <typename E>
  struct Table {
    std::vector<E> slots;
    size_t size = 0;
  };
  Table<V4> v4_;
  Table<V6> v6_;
};

}  // namespace fibnic
