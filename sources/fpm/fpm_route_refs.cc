#include "sources/fpm/fpm_route_refs.h"

#include <algorithm>

#include "common/hash_mix.h"

namespace fibnic {
namespace {

// Home slot in [0, n): multiply-shift, so any table size works.
size_t HomeOf(uint64_t hash, size_t n) {
  return static_cast<size_t>((static_cast<U128>(hash) * n) >> 64);
}

uint64_t HashOf(uint32_t addr, uint8_t len) { return MixBits((uint64_t{addr} << 8) | len); }
uint64_t HashOf(uint64_t hi, uint64_t lo, uint8_t len) { return MixBits(hi ^ MixBits(lo ^ len)); }

// Key access for both entry kinds, so one probing routine serves both.
struct V4Key {
  uint32_t addr;
  uint8_t len;
  template <typename E>
  bool Is(const E& e) const { return e.addr == addr && e.len == len; }
  uint64_t Hash() const { return HashOf(addr, len); }
  template <typename E>
  static uint64_t HashOfEntry(const E& e) { return HashOf(e.addr, e.len); }
  template <typename E>
  void Into(E& e) const { e.addr = addr, e.len = len; }
};
struct V6Key {
  uint64_t hi, lo;
  uint8_t len;
  template <typename E>
  bool Is(const E& e) const { return e.hi == hi && e.lo == lo && e.len == len; }
  uint64_t Hash() const { return HashOf(hi, lo, len); }
  template <typename E>
  static uint64_t HashOfEntry(const E& e) { return HashOf(e.hi, e.lo, e.len); }
  template <typename E>
  void Into(E& e) const { e.hi = hi, e.lo = lo, e.len = len; }
};

V4Key KeyV4(const Prefix& p) { return {p.addr().v4(), static_cast<uint8_t>(p.len())}; }
V6Key KeyV6(const Prefix& p) {
  const U128 a = p.addr().v6();
  return {static_cast<uint64_t>(a >> 64), static_cast<uint64_t>(a), static_cast<uint8_t>(p.len())};
}

constexpr uint8_t kEmptyLen = 0xFF;

// Slot holding key, or the empty slot where it would go.
template <typename E, typename K>
size_t Probe(const std::vector<E>& slots, const K& key) {
  const size_t n = slots.size();
  size_t i = HomeOf(key.Hash(), n);
  while (slots[i].len != kEmptyLen && !key.Is(slots[i])) i = i + 1 == n ? 0 : i + 1;
  return i;
}

// By a quarter: a table that stopped growing is 64-80% full (15-19 B per
// IPv4 route; by half it was 53-80%, up to 22.5 B), and a growth holds the
// old and the new table 2.25 times the old size, not 2.5. A full table's
// growths move each route ~5 times instead of ~3: ~0.1 s for a million.
template <typename E, typename K>
void Grow(std::vector<E>& slots) {
  std::vector<E> old = std::move(slots);
  slots.assign(std::max<size_t>(64, old.size() + old.size() / 4), E{});
  for (const E& e : old) {
    if (e.len == kEmptyLen) continue;
    const size_t n = slots.size();
    size_t i = HomeOf(K::HashOfEntry(e), n);
    while (slots[i].len != kEmptyLen) i = i + 1 == n ? 0 : i + 1;
    slots[i] = e;
  }
}

template <typename E, typename K>
void PutIn(std::vector<E>& slots, size_t& size, const K& key, const FpmRouteRef& ref) {
  if ((size + 1) * 5 > slots.size() * 4) Grow<E, K>(slots);
  E& e = slots[Probe(slots, key)];
  if (e.len == kEmptyLen) ++size;
  key.Into(e);
  e.set = ref.set;
  e.marks = FpmRouteRefs::MarksOf(ref);
  e.protocol = ref.protocol;
  e.replied = ref.replied;
}

template <typename E, typename K>
std::optional<FpmRouteRef> FindIn(const std::vector<E>& slots, const K& key) {
  if (slots.empty()) return std::nullopt;
  const E& e = slots[Probe(slots, key)];
  if (e.len == kEmptyLen) return std::nullopt;
  return FpmRouteRefs::RefOf(e);
}

// Linear probing's backward-shift deletion: later entries of the cluster
// move up unless that would put them before their home slot.
template <typename E, typename K>
bool EraseIn(std::vector<E>& slots, size_t& size, const K& key) {
  if (slots.empty()) return false;
  const size_t n = slots.size();
  size_t hole = Probe(slots, key);
  if (slots[hole].len == kEmptyLen) return false;
  for (size_t j = hole + 1 == n ? 0 : hole + 1; slots[j].len != kEmptyLen; j = j + 1 == n ? 0 : j + 1) {
    const size_t home = HomeOf(K::HashOfEntry(slots[j]), n);
    // Stays if its home lies cyclically in (hole, j].
    const bool stays = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (stays) continue;
    slots[hole] = slots[j];
    hole = j;
  }
  slots[hole] = E{};
  --size;
  return true;
}

}  // namespace

std::optional<FpmRouteRef> FpmRouteRefs::Find(const Prefix& p) const {
  if (p.family() == Family::kV4) return FindIn(v4_.slots, KeyV4(p));
  return FindIn(v6_.slots, KeyV6(p));
}

void FpmRouteRefs::Put(const Prefix& p, FpmRouteRef ref) {
  if (p.family() == Family::kV4) return PutIn(v4_.slots, v4_.size, KeyV4(p), ref);
  PutIn(v6_.slots, v6_.size, KeyV6(p), ref);
}

bool FpmRouteRefs::Erase(const Prefix& p) {
  if (p.family() == Family::kV4) return EraseIn(v4_.slots, v4_.size, KeyV4(p));
  return EraseIn(v6_.slots, v6_.size, KeyV6(p));
}

}  // namespace fibnic
