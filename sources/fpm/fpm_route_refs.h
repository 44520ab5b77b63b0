// What the FPM source keeps per zebra route beside the RIB: which next-hop
// set the route names (zebra's next-hop group id, or an interned inline path
// set) and whether the current replay has re-sent it. Everything else about
// the route (its paths as the RIB sees them) lives once, in the RIB.
//
// A route is 12 bytes (IPv4) or 24 bytes (IPv6) in an open-addressing table
// kept at most 4/5 full (linear probing, backward-shift deletion): ~15 and
// ~30 bytes per route, against ~1 KB when each route was a node-based map
// entry holding zebra's whole message, its users' sets and what was emitted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/ip.h"

namespace fibnic {

struct FpmRouteRef {
  uint32_t set = 0;      // FpmSetId (fpm_table.h)
  bool stale = false;    // marked at a reconnect, cleared when zebra re-sends it
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
    for (auto& e : v4_.slots) {
      if (e.len != kEmpty) fn(Prefix::V4(e.addr, e.len), e.set, e.stale);
    }
    for (auto& e : v6_.slots) {
      if (e.len != kEmpty) fn(Prefix::V6((static_cast<U128>(e.hi) << 64) | e.lo, e.len), e.set, e.stale);
    }
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    for (const auto& e : v4_.slots) {
      if (e.len != kEmpty) fn(Prefix::V4(e.addr, e.len), e.set, e.stale);
    }
    for (const auto& e : v6_.slots) {
      if (e.len != kEmpty) fn(Prefix::V6((static_cast<U128>(e.hi) << 64) | e.lo, e.len), e.set, e.stale);
    }
  }
  size_t memory() const { return v4_.slots.capacity() * sizeof(V4) + v6_.slots.capacity() * sizeof(V6); }

 private:
  static constexpr uint8_t kEmpty = 0xFF;
  struct V4 {
    uint32_t addr = 0;
    uint32_t set = 0;
    uint8_t len = kEmpty;
    bool stale = false;
  };
  struct V6 {
    uint64_t hi = 0, lo = 0;
    uint32_t set = 0;
    uint8_t len = kEmpty;
    bool stale = false;
  };
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
