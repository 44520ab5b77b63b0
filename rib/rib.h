// The RIB: per prefix, one candidate per source; the lowest administrative
// distance wins (tie: the lower source enum). Stored compactly because a full
// table is a million prefixes: a Robin Hood open-addressing table keyed by
// (addr, len) holds the best candidate inline at up to 7/8 load, in a slot of
// the address and one 32-bit word (8 bytes per IPv4 prefix; 12 per IPv6
// prefix up to /64, whose low half is zero and not kept; 24 beyond):
// length, a mark, the (source, distance) pair as one of 16 interned kinds and
// the group id below 2^19. A slot's probe distance is not stored: it is
// computed from the key's home slot when Robin Hood needs it. The prefixes that
// several sources announce, and the rare candidate the word cannot hold (a
// 17th kind, a group id of 2^19 or more), keep all their candidates in a side
// map. Home slots come from the hash by multiply-shift, so the table can have
// any size (it grows by a quarter, not by doubling) and slot order is hash
// order (a rehash walks it sequentially).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <unordered_map>
#include <vector>

#include "common/hash_mix.h"
#include "rib/nexthop_table.h"
#include "rib/route.h"

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
  // The same for an IPv4 prefix given as address and length (a queue of
  // IPv4 changes then never builds a Prefix).
  RibChange UpsertV4(uint32_t addr, uint8_t len, const RibCand& c);
  RibChange EraseV4(uint32_t addr, uint8_t len, RouteSource source);
  // Bulk loads: room for `more` IPv4 prefixes in one step, and a hint that
  // this prefix is upserted soon (its slot is fetched into cache while the
  // caller works on earlier ones — a full table then costs about one memory
  // latency per dozen routes instead of one per route).
  void ReserveV4(size_t more);
  void PrefetchV4(uint32_t addr, uint8_t len) const;
  std::optional<RibCand> Best(const Prefix& p) const;
  // The longest best IPv4 route strictly shorter than len (<= 24) covering
  // addr: its length and candidate. A bitmap of which prefixes of length
  // < 24 exist answers it with one table probe, where trying every shorter
  // length would probe up to 24 times (this is a delete's parent search).
  std::optional<std::pair<int, RibCand>> ParentV4(uint32_t addr, int len) const;
  std::vector<RibCand> Candidates(const Prefix& p) const;  // best first
  // One source's candidate, and whether it is the best (no copy of the list).
  std::optional<std::pair<RibCand, bool>> CandidateOf(const Prefix& p, RouteSource source) const;
  // Every prefix of a family with its best candidate (unordered).
  void ForEach(Family f, const std::function<void(const Prefix&, const RibCand& best)>& fn) const;
  size_t size(Family f) const { return f == Family::kV4 ? v4_.size : v6_short_.size + v6_.size; }
  size_t candidates() const { return candidates_; }
  // Which prefix lengths hold at least one route (for longest-match probing).
  bool HasLength(Family f, int len) const { return (f == Family::kV4 ? v4_len_ : v6_len_)[len] > 0; }

 private:
  struct V6Addr {
    uint64_t hi = 0, lo = 0;
    bool operator==(const V6Addr&) const = default;
  };
  // The high half of an IPv6 prefix up to /64, as two words so a slot is 12
  // bytes, not 16.
  struct V6Hi {
    uint32_t hi = 0, lo = 0;
    bool operator==(const V6Hi&) const = default;
  };
  // A slot: the address and one word, bits 0-7 the length (kEmpty: a free
  // slot), bit 8 the mark that the candidates live in multi_ (then the rest
  // is zero), bits 9-12 the kind, bits 13-31 the best candidate's group.
  template <typename Addr>
  struct Entry {
    Addr addr{};
    uint32_t word = kEmpty;
    uint8_t len() const { return static_cast<uint8_t>(word); }
    bool empty() const { return len() == kEmpty; }
    bool multi() const { return word & kMultiBit; }
    uint32_t kind() const { return word >> kKindShift & (kKinds - 1); }
    NhgId nhg() const { return word >> kGroupShift; }
  };
  static constexpr uint8_t kEmpty = 0xFF;
  static constexpr uint32_t kMultiBit = 1u << 8;
  static constexpr int kKindShift = 9;
  static constexpr uint32_t kKinds = 16;
  static constexpr int kGroupShift = 13;
  static constexpr NhgId kInlineGroups = NhgId{1} << (32 - kGroupShift);
  // Probe distances stay far below this at 7/8 load; reaching it forces a grow.
  static constexpr size_t kMaxProbe = 0xF0;
  template <typename Addr>
  struct Table {
    std::vector<Entry<Addr>> slots;
    size_t size = 0;
    size_t Next(size_t i) const { return i + 1 == slots.size() ? 0 : i + 1; }
  };

  template <typename Addr>
  RibChange UpsertIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, uint8_t len, const RibCand& c);
  template <typename Addr>
  RibChange EraseIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, uint8_t len, RouteSource s);
  // Where a key is (found) or would be placed (its probe distance there).
  struct Probe {
    size_t slot = 0;
    size_t probe = 0;
    bool found = false;
  };
  template <typename Addr>
  static Probe Locate(const Table<Addr>& t, const Addr& a, uint8_t len);
  template <typename Addr>
  static Entry<Addr>* Find(Table<Addr>& t, const Addr& a, uint8_t len);
  template <typename Addr>
  static const Entry<Addr>* Find(const Table<Addr>& t, const Addr& a, uint8_t len);
  // Places an entry known to be absent, from slot i at probe distance
  // `probe` (Robin Hood: it takes the slot of any entry nearer its home and
  // carries that one on).
  template <typename Addr>
  static void PlaceFrom(Table<Addr>& t, Entry<Addr> e, size_t i, size_t probe);
  // How far slot i's entry sits from its home slot.
  template <typename Addr>
  static size_t ProbeOf(const Table<Addr>& t, size_t i);
  template <typename Addr>
  static void Reserve(Table<Addr>& t, size_t entries);
  template <typename Addr>
  static void Rehash(Table<Addr>& t, size_t slots);
  template <typename Addr>
  static void RemoveAt(Table<Addr>& t, size_t i);
  template <typename Addr>
  static size_t Home(const Table<Addr>& t, const Addr& a, uint8_t len);
  // The word of an inline candidate, if it fits one (interning its kind).
  std::optional<uint32_t> InlineWord(uint8_t len, const RibCand& c);
  // A prefix's best candidate (from multi_ when its slot is marked).
  template <typename Addr>
  RibCand CandOf(const Entry<Addr>& e) const;
  // Stores a prefix's candidates (best first, at least one): inline when
  // there is one and it fits, else in multi_.
  template <typename Addr>
  void Settle(Entry<Addr>& e, std::vector<RibCand> cands);

  static uint32_t Key4(const Prefix& p) { return p.addr().v4(); }
  static Prefix PrefixOf(uint32_t a, uint8_t len) { return Prefix::V4(a, len); }
  static Prefix PrefixOf(const V6Addr& a, uint8_t len) { return Prefix::V6((U128{a.hi} << 64) | a.lo, len); }
  static Prefix PrefixOf(const V6Hi& a, uint8_t len) {
    return Prefix::V6(((U128{a.hi} << 32) | a.lo) << 64, len);
  }
  static V6Hi KeyHi(const Prefix& p) {
    const auto hi = static_cast<uint64_t>(p.addr().v6() >> 64);
    return {static_cast<uint32_t>(hi >> 32), static_cast<uint32_t>(hi)};
  }
  static V6Addr Key6(const Prefix& p) {
    return {static_cast<uint64_t>(p.addr().v6() >> 64), static_cast<uint64_t>(p.addr().v6())};
  }
  static uint64_t HashOf(uint32_t a, uint8_t len) { return MixBits((uint64_t{a} << 8) | len); }
  static uint64_t HashOf(const V6Addr& a, uint8_t len) { return MixBits(a.hi ^ MixBits(a.lo + len)); }
  static uint64_t HashOf(const V6Hi& a, uint8_t len) { return MixBits(((uint64_t{a.hi} << 32) | a.lo) ^ MixBits(len)); }

  Table<uint32_t> v4_;
  Table<V6Hi> v6_short_;  // IPv6 prefixes up to /64
  Table<V6Addr> v6_;      // longer ones
  // Which IPv4 prefixes of length < kPresenceLens exist: bit (2^len - 1 +
  // addr >> (32 - len)), 2 MB in all.
  static constexpr int kPresenceLens = 24;
  static size_t PresenceBit(uint32_t addr, int len);
  void MarkPresent(uint32_t addr, uint8_t len, bool present);
  void MarkPresent(const V6Addr&, uint8_t, bool) {}
  void MarkPresent(const V6Hi&, uint8_t, bool) {}
  std::vector<uint64_t> present_v4_ = std::vector<uint64_t>((size_t{1} << kPresenceLens) / 64);
  std::vector<uint32_t> v4_len_ = std::vector<uint32_t>(33);
  std::vector<uint32_t> v6_len_ = std::vector<uint32_t>(129);
  std::unordered_map<Prefix, std::vector<RibCand>> multi_;  // sorted best first
  // The interned (source, distance) pairs, in the order first seen; never
  // forgotten (a table names a handful).
  struct Kind {
    RouteSource source;
    uint8_t distance;
  };
  std::vector<Kind> kinds_;
  size_t candidates_ = 0;
};

}  // namespace fibnic
