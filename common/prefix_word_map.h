// Prefix → one 32-bit word, for tables that hold a word per route of a full
// Internet table (the kernel source's routes, with the offload replies'
// notes): three open-addressing tables kept 64-80% full (linear probing,
// backward-shift deletion, grown by a quarter), keyed by the address words
// the prefix needs — IPv4 4 bytes, IPv6 up to /64 (whose low half is zero)
// 8, longer IPv6 16 — so a slot is 8, 12 or 20 bytes: ~10-12.5 B per IPv4
// route, against ~100 for a node-based map entry.
//
// The word's bits 0-6 are the map's (the length code; 0x7F marks a free
// slot): Put ignores them, and what Find and the walks return has them set.
// Bits 7-31 are the caller's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/ip.h"

namespace fibnic {

class PrefixWordMap {
 public:
  static constexpr uint32_t kMapBits = 0x7F;  // the map's part of the word

  size_t size() const { return v4_.size + v6_.size + v6_long_.size; }
  std::optional<uint32_t> Find(const Prefix& p) const;
  // Inserts or replaces; returns the word replaced.
  std::optional<uint32_t> Put(const Prefix& p, uint32_t word);
  // Returns the word erased.
  std::optional<uint32_t> Erase(const Prefix& p);

  // Every prefix: fn(prefix, uint32_t& word) may change the caller's bits.
  template <typename Fn>
  void ForEach(Fn&& fn) {
    auto each = [&](auto& t) {
      for (auto& e : t.slots) {
        if (Empty(e.word)) continue;
        uint32_t w = e.word;
        fn(PrefixOf(e), w);
        e.word = (w & ~kMapBits) | (e.word & kMapBits);
      }
    };
    each(v4_), each(v6_), each(v6_long_);
  }
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    auto each = [&](const auto& t) {
      for (const auto& e : t.slots) {
        if (!Empty(e.word)) fn(PrefixOf(e), e.word);
      }
    };
    each(v4_), each(v6_), each(v6_long_);
  }
  // Up to `max` prefixes from position `cursor` on (0 = the start), as
  // ForEach; returns where the next call goes on, 0 once the walk is
  // through. For walks spread over time: prefixes put or erased meanwhile
  // may be missed or seen twice.
  template <typename Fn>
  size_t Walk(size_t cursor, size_t max, Fn&& fn) {
    const size_t a = v4_.slots.size(), b = a + v6_.slots.size(), end = b + v6_long_.slots.size();
    size_t i = cursor;
    auto visit = [&](auto& e) {
      if (Empty(e.word)) return;
      --max;
      uint32_t w = e.word;
      fn(PrefixOf(e), w);
      e.word = (w & ~kMapBits) | (e.word & kMapBits);
    };
    for (; i < end && max != 0; ++i) {
      if (i < a) {
        visit(v4_.slots[i]);
      } else if (i < b) {
        visit(v6_.slots[i - a]);
      } else {
        visit(v6_long_.slots[i - b]);
      }
    }
    return i == end ? 0 : i;
  }
  // Bytes held by the slots; and how many there are (the load: size() / slots()).
  size_t memory() const;
  size_t slots() const { return v4_.slots.size() + v6_.slots.size() + v6_long_.slots.size(); }

 private:
  static bool Empty(uint32_t word) { return (word & kMapBits) == kMapBits; }
  // A slot: the prefix's address in N 32-bit words (the first N of it, most
  // significant first) and the word. N = 1 IPv4, 2 IPv6 up to /64 (length
  // code = length), 4 longer IPv6 (code = length - 64).
  template <int N>
  struct Slot {
    uint32_t key[N] = {};
    uint32_t word = kMapBits;
  };
  static_assert(sizeof(Slot<1>) == 8 && sizeof(Slot<2>) == 12 && sizeof(Slot<4>) == 20);
  template <int N>
  struct Table {
    std::vector<Slot<N>> slots;
    size_t size = 0;
  };
  static uint64_t Join(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }
  template <int N>
  static Prefix PrefixOf(const Slot<N>& e) {
    const int code = static_cast<int>(e.word & kMapBits);
    if constexpr (N == 1) {
      return Prefix::V4(e.key[0], code);
    } else if constexpr (N == 2) {
      return Prefix::V6(static_cast<U128>(Join(e.key[0], e.key[1])) << 64, code);
    } else {
      return Prefix::V6((static_cast<U128>(Join(e.key[0], e.key[1])) << 64) | Join(e.key[2], e.key[3]), code + 64);
    }
  }
  template <int N>
  static Slot<N> KeyOf(const Prefix& p);  // the slot of p, empty but for its key
  template <int N>
  static std::optional<uint32_t> FindIn(const Table<N>& t, const Slot<N>& key);
  template <int N>
  static std::optional<uint32_t> PutIn(Table<N>& t, const Slot<N>& key, uint32_t word);
  template <int N>
  static std::optional<uint32_t> EraseIn(Table<N>& t, const Slot<N>& key);

  Table<1> v4_;
  Table<2> v6_;
  Table<4> v6_long_;
};

}  // namespace fibnic
