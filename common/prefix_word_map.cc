#include "common/prefix_word_map.h"

#include <algorithm>
#include <cstring>

#include "common/hash_mix.h"

namespace fibnic {
namespace {

// Home slot in [0, n): multiply-shift, so any table size works.
size_t HomeOf(uint64_t hash, size_t n) {
  return static_cast<size_t>((static_cast<U128>(hash) * n) >> 64);
}

uint64_t Join(uint32_t hi, uint32_t lo) { return (uint64_t{hi} << 32) | lo; }

constexpr uint32_t kCodeMask = PrefixWordMap::kMapBits;

template <typename S>
uint64_t HashOfSlot(const S& e) {
  constexpr size_t n = sizeof(e.key) / sizeof(uint32_t);
  const uint32_t code = e.word & kCodeMask;
  if constexpr (n == 1) {
    return MixBits((uint64_t{e.key[0]} << 8) | code);
  } else if constexpr (n == 2) {
    return MixBits(Join(e.key[0], e.key[1]) ^ MixBits(code));
  } else {
    return MixBits(Join(e.key[0], e.key[1]) ^ MixBits(Join(e.key[2], e.key[3]) ^ code));
  }
}

template <typename S>
bool Empty(const S& e) { return (e.word & kCodeMask) == kCodeMask; }
template <typename S>
bool SameKey(const S& a, const S& b) {
  return ((a.word ^ b.word) & kCodeMask) == 0 && std::memcmp(a.key, b.key, sizeof a.key) == 0;
}

// Slot holding key, or the empty slot where it would go.
template <typename S>
size_t Probe(const std::vector<S>& slots, const S& key) {
  const size_t n = slots.size();
  size_t i = HomeOf(HashOfSlot(key), n);
  while (!Empty(slots[i]) && !SameKey(slots[i], key)) i = i + 1 == n ? 0 : i + 1;
  return i;
}

// By a quarter: a table that stopped growing is 64-80% full, and a growth
// holds the old and the new table 2.25 times the old size, not 2.5. A full
// table's growths move each route ~5 times instead of ~3: ~0.1 s for a million.
template <typename S>
void Grow(std::vector<S>& slots) {
  std::vector<S> old = std::move(slots);
  slots.assign(std::max<size_t>(64, old.size() + old.size() / 4), S{});
  for (const S& e : old) {
    if (Empty(e)) continue;
    const size_t n = slots.size();
    size_t i = HomeOf(HashOfSlot(e), n);
    while (!Empty(slots[i])) i = i + 1 == n ? 0 : i + 1;
    slots[i] = e;
  }
}

// Linear probing's backward-shift deletion: later entries of the cluster
// move up unless that would put them before their home slot.
template <typename S>
void RemoveAt(std::vector<S>& slots, size_t hole) {
  const size_t n = slots.size();
  for (size_t j = hole + 1 == n ? 0 : hole + 1; !Empty(slots[j]); j = j + 1 == n ? 0 : j + 1) {
    const size_t home = HomeOf(HashOfSlot(slots[j]), n);
    // Stays if its home lies cyclically in (hole, j].
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    slots[hole] = slots[j];
    hole = j;
  }
  slots[hole] = S{};
}

}  // namespace

template <int N>
std::optional<uint32_t> PrefixWordMap::FindIn(const Table<N>& t, const Slot<N>& key) {
  if (t.slots.empty()) return std::nullopt;
  const Slot<N>& e = t.slots[Probe(t.slots, key)];
  if (Empty(e.word)) return std::nullopt;
  return e.word;
}

template <int N>
std::optional<uint32_t> PrefixWordMap::PutIn(Table<N>& t, const Slot<N>& key, uint32_t word) {
  if ((t.size + 1) * 5 > t.slots.size() * 4) Grow(t.slots);
  Slot<N>& e = t.slots[Probe(t.slots, key)];
  std::optional<uint32_t> old;
  if (Empty(e.word)) {
    ++t.size;
  } else {
    old = e.word;
  }
  e = key;
  e.word = (key.word & kMapBits) | (word & ~kMapBits);
  return old;
}

template <int N>
std::optional<uint32_t> PrefixWordMap::EraseIn(Table<N>& t, const Slot<N>& key) {
  if (t.slots.empty()) return std::nullopt;
  const size_t i = Probe(t.slots, key);
  if (Empty(t.slots[i].word)) return std::nullopt;
  const uint32_t old = t.slots[i].word;
  RemoveAt(t.slots, i);
  --t.size;
  return old;
}

template <int N>
PrefixWordMap::Slot<N> PrefixWordMap::KeyOf(const Prefix& p) {
  Slot<N> k;
  if constexpr (N == 1) {
    k.key[0] = p.addr().v4();
    k.word = static_cast<uint32_t>(p.len());
  } else {
    const U128 a = p.addr().v6();
    for (int i = 0; i < N; ++i) k.key[i] = static_cast<uint32_t>(a >> (96 - 32 * i));
    k.word = static_cast<uint32_t>(N == 2 ? p.len() : p.len() - 64);
  }
  return k;
}

std::optional<uint32_t> PrefixWordMap::Find(const Prefix& p) const {
  if (p.family() == Family::kV4) return FindIn(v4_, KeyOf<1>(p));
  if (p.len() <= 64) return FindIn(v6_, KeyOf<2>(p));
  return FindIn(v6_long_, KeyOf<4>(p));
}

std::optional<uint32_t> PrefixWordMap::Put(const Prefix& p, uint32_t word) {
  if (p.family() == Family::kV4) return PutIn(v4_, KeyOf<1>(p), word);
  if (p.len() <= 64) return PutIn(v6_, KeyOf<2>(p), word);
  return PutIn(v6_long_, KeyOf<4>(p), word);
}

std::optional<uint32_t> PrefixWordMap::Erase(const Prefix& p) {
  if (p.family() == Family::kV4) return EraseIn(v4_, KeyOf<1>(p));
  if (p.len() <= 64) return EraseIn(v6_, KeyOf<2>(p));
  return EraseIn(v6_long_, KeyOf<4>(p));
}

size_t PrefixWordMap::memory() const {
  return v4_.slots.capacity() * sizeof(Slot<1>) + v6_.slots.capacity() * sizeof(Slot<2>) +
         v6_long_.slots.capacity() * sizeof(Slot<4>);
}

}  // namespace fibnic
