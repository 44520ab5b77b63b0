#include "sources/fpm/fpm_route_refs.h"

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

template <typename S>
uint64_t HashOf(const S& e, uint32_t code) {
  constexpr size_t n = sizeof(e.key) / sizeof(uint32_t);
  if constexpr (n == 1) {
    return MixBits((uint64_t{e.key[0]} << 8) | code);
  } else if constexpr (n == 2) {
    return MixBits(Join(e.key[0], e.key[1]) ^ MixBits(code));
  } else {
    return MixBits(Join(e.key[0], e.key[1]) ^ MixBits(Join(e.key[2], e.key[3]) ^ code));
  }
}

constexpr uint32_t kCodeMask = 0x7F;

template <typename S>
bool Empty(const S& e) { return (e.word & kCodeMask) == kCodeMask; }
template <typename S>
uint64_t HashOfSlot(const S& e) { return HashOf(e, e.word & kCodeMask); }
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

std::optional<uint32_t> FpmRouteRefs::Intern(const FpmRouteRef& ref) {
  if (last_kind_ < kinds_.size()) {
    Kind& k = kinds_[last_kind_];
    if (k.routes != 0 && k.set == ref.set && k.protocol == ref.protocol && k.kernel_nh == ref.kernel_nh) {
      ++k.routes;
      return last_kind_;
    }
  }
  const KindKey key = KeyOfKind(ref.set, ref.protocol, ref.kernel_nh);
  uint32_t kind;
  if (auto it = kind_index_.find(key); it != kind_index_.end()) {
    kind = it->second;
  } else if (!kinds_free_.empty()) {
    kind = kinds_free_.back();
    kinds_free_.pop_back();
  } else if (kinds_.size() < max_kinds_) {
    kind = static_cast<uint32_t>(kinds_.size());
    kinds_.emplace_back();
  } else {
    return std::nullopt;
  }
  Kind& k = kinds_[kind];
  if (k.routes == 0) {
    k.set = ref.set;
    k.protocol = ref.protocol;
    k.kernel_nh = ref.kernel_nh;
    kind_index_.emplace(key, kind);
    CountKernelNh(k.kernel_nh, +1);
  }
  ++k.routes;
  last_kind_ = kind;
  return kind;
}

void FpmRouteRefs::Release(uint32_t kind) {
  Kind& k = kinds_[kind];
  if (--k.routes != 0) return;
  kind_index_.erase(KeyOfKind(k.set, k.protocol, k.kernel_nh));
  CountKernelNh(k.kernel_nh, -1);
  kinds_free_.push_back(kind);
}

void FpmRouteRefs::CountKernelNh(uint32_t id, int delta) {
  if (id == 0) return;
  if (delta > 0) {
    ++kernel_nh_kinds_[id];
  } else if (auto it = kernel_nh_kinds_.find(id); it != kernel_nh_kinds_.end() && --it->second == 0) {
    kernel_nh_kinds_.erase(it);
  }
}

template <int N>
std::optional<FpmRouteRef> FpmRouteRefs::FindIn(const Table<N>& t, const Slot<N>& key) const {
  if (t.slots.empty()) return std::nullopt;
  const Slot<N>& e = t.slots[Probe(t.slots, key)];
  if (Empty(e.word)) return std::nullopt;
  return RefOf(e.word);
}

template <int N>
void FpmRouteRefs::PutIn(Table<N>& t, const Slot<N>& key, const Prefix& p, const FpmRouteRef& ref) {
  std::optional<uint32_t> kind = Intern(ref);
  if (!kind) {
    // The word cannot name another kind: the route goes whole to the side map.
    EraseIn(t, key);
    auto [w, added] = wide_.try_emplace(p, ref);
    if (!added) {
      CountKernelNh(w->second.kernel_nh, -1);
      w->second = ref;
    }
    CountKernelNh(ref.kernel_nh, +1);
    return;
  }
  if (!wide_.empty()) EraseWide(p);
  if ((t.size + 1) * 5 > t.slots.size() * 4) Grow(t.slots);
  Slot<N>& e = t.slots[Probe(t.slots, key)];
  if (Empty(e.word)) {
    ++t.size;
  } else {
    Release(KindOf(e.word));
  }
  e = key;
  e.word = (key.word & kEmptyCode) | (ref.stale ? kStaleBit : 0) | (uint32_t{ref.replied & 3u} << kRepliedShift) |
           (ref.kernel_seen ? kKernelSeenBit : 0) | (*kind << kKindShift);
}

template <int N>
bool FpmRouteRefs::EraseIn(Table<N>& t, const Slot<N>& key) {
  if (t.slots.empty()) return false;
  const size_t i = Probe(t.slots, key);
  if (Empty(t.slots[i].word)) return false;
  Release(KindOf(t.slots[i].word));
  RemoveAt(t.slots, i);
  --t.size;
  return true;
}

template <int N>
FpmRouteRefs::Slot<N> FpmRouteRefs::KeyOf(const Prefix& p) {
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

std::optional<FpmRouteRef> FpmRouteRefs::Find(const Prefix& p) const {
  if (!wide_.empty()) {
    if (auto w = wide_.find(p); w != wide_.end()) return w->second;
  }
  if (p.family() == Family::kV4) return FindIn(v4_, KeyOf<1>(p));
  if (p.len() <= 64) return FindIn(v6_, KeyOf<2>(p));
  return FindIn(v6_long_, KeyOf<4>(p));
}

void FpmRouteRefs::Put(const Prefix& p, FpmRouteRef ref) {
  if (p.family() == Family::kV4) return PutIn(v4_, KeyOf<1>(p), p, ref);
  if (p.len() <= 64) return PutIn(v6_, KeyOf<2>(p), p, ref);
  PutIn(v6_long_, KeyOf<4>(p), p, ref);
}

bool FpmRouteRefs::EraseWide(const Prefix& p) {
  auto w = wide_.find(p);
  if (w == wide_.end()) return false;
  CountKernelNh(w->second.kernel_nh, -1);
  wide_.erase(w);
  return true;
}

bool FpmRouteRefs::Erase(const Prefix& p) {
  if (!wide_.empty() && EraseWide(p)) return true;
  if (p.family() == Family::kV4) return EraseIn(v4_, KeyOf<1>(p));
  if (p.len() <= 64) return EraseIn(v6_, KeyOf<2>(p));
  return EraseIn(v6_long_, KeyOf<4>(p));
}

size_t FpmRouteRefs::memory() const {
  // Nodes of the node-based maps: the entry, a next pointer, a cached hash,
  // and a bucket each.
  return v4_.slots.capacity() * sizeof(Slot<1>) + v6_.slots.capacity() * sizeof(Slot<2>) +
         v6_long_.slots.capacity() * sizeof(Slot<4>) + kinds_.capacity() * sizeof(Kind) +
         kinds_free_.capacity() * sizeof(uint32_t) + kind_index_.size() * (sizeof(KindKey) + 4 + 24) +
         wide_.size() * (sizeof(Prefix) + sizeof(FpmRouteRef) + 24) + kernel_nh_kinds_.size() * (8 + 24);
}

}  // namespace fibnic
