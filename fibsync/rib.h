// The RIB: per prefix, one candidate per source; the lowest administrative
// distance wins (tie: the lower source enum). Stored compactly because a full
// table is a million prefixes: an open-addressing table keyed by (addr, len)
// holds the best candidate inline (12 bytes per IPv4 prefix, 24 per IPv6);
// the rare prefixes that several sources announce keep all their candidates in
// a side map.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fibsync/nexthop_table.h"
#include "fibsync/route.h"

namespace fibnic {

struct RibCand {
  RouteSource source = RouteSource::kStatic;
  uint8_t distance = 0;
  NhgId nhg = kNoGroup;
  bool operator==(const RibCand&) const = default;
};

// What a modification did to a prefix: the best group before and after
// (kNoGroup = no route) and the group of the candidate it replaced or removed,
// whose reference the caller now owns.
struct RibChange {
  NhgId old_best = kNoGroup;
  NhgId new_best = kNoGroup;
  NhgId dropped = kNoGroup;
  bool best_changed() const { return old_best != new_best; }
};

class Rib {
 public:
  Rib();
  RibChange Upsert(const Prefix& p, const RibCand& c);
  RibChange Erase(const Prefix& p, RouteSource source);
  // Many IPv4 upserts at once, with the same outcome as calling Upsert on
  // each in order; returns each item's change (same index). The table grows
  // once to its final size and the items are inserted in slot order, so a
  // full-table load walks the table nearly sequentially instead of missing
  // the cache once per route.
  struct V4Upsert {
    uint32_t addr = 0;
    uint8_t len = 0;
    RibCand cand;
  };
  std::vector<RibChange> UpsertV4Batch(const std::vector<V4Upsert>& items);
  std::optional<RibCand> Best(const Prefix& p) const;
  std::vector<RibCand> Candidates(const Prefix& p) const;  // best first
  // Every prefix of a family with its best candidate (unordered).
  void ForEach(Family f, const std::function<void(const Prefix&, const RibCand& best)>& fn) const;
  size_t size(Family f) const { return f == Family::kV4 ? v4_.size : v6_.size; }
  size_t candidates() const { return candidates_; }
  // Which prefix lengths hold at least one route (for longest-match probing).
  bool HasLength(Family f, int len) const { return (f == Family::kV4 ? v4_len_ : v6_len_)[len] > 0; }

 private:
  struct V6Addr {
    uint64_t hi = 0, lo = 0;
    bool operator==(const V6Addr&) const = default;
  };
  template <typename Addr>
  struct Entry {
    Addr addr{};
    uint8_t len = kEmpty;
    uint8_t source = 0;
    uint8_t distance = 0;
    uint8_t multi = 0;  // 1: all candidates live in multi_
    NhgId nhg = kNoGroup;
  };
  static constexpr uint8_t kEmpty = 0xFF;
  template <typename Addr>
  struct Table {
    std::vector<Entry<Addr>> slots;
    size_t size = 0;
  };

  template <typename Addr>
  RibChange UpsertIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, const Prefix& p, const RibCand& c);
  template <typename Addr>
  RibChange EraseIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, const Prefix& p, RouteSource s);
  template <typename Addr>
  static Entry<Addr>* Find(Table<Addr>& t, const Addr& a, uint8_t len);
  template <typename Addr>
  static const Entry<Addr>* Find(const Table<Addr>& t, const Addr& a, uint8_t len);
  template <typename Addr>
  static void Grow(Table<Addr>& t);
  template <typename Addr>
  static void Rehash(Table<Addr>& t, size_t slots);
  template <typename Addr>
  static void RemoveAt(Table<Addr>& t, size_t i);
  template <typename Addr>
  static size_t Home(const Table<Addr>& t, const Addr& a, uint8_t len);

  static uint32_t Key4(const Prefix& p) { return p.addr().v4(); }
  static V6Addr Key6(const Prefix& p) {
    return {static_cast<uint64_t>(p.addr().v6() >> 64), static_cast<uint64_t>(p.addr().v6())};
  }
  static uint64_t Mix(uint64_t x);
  static uint64_t HashOf(uint32_t a, uint8_t len) { return Mix((uint64_t{a} << 8) | len); }
  static uint64_t HashOf(const V6Addr& a, uint8_t len) { return Mix(a.hi ^ Mix(a.lo + len)); }

  Table<uint32_t> v4_;
  Table<V6Addr> v6_;
  std::vector<uint32_t> v4_len_ = std::vector<uint32_t>(33);
  std::vector<uint32_t> v6_len_ = std::vector<uint32_t>(129);
  std::unordered_map<Prefix, std::vector<RibCand>> multi_;  // sorted best first
  size_t candidates_ = 0;
};

}  // namespace fibnic
