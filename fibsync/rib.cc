#include "fibsync/rib.h"

#include <algorithm>
#include <bit>

namespace fibnic {
namespace {

bool Better(const RibCand& a, const RibCand& b) {
  if (a.distance != b.distance) return a.distance < b.distance;
  return a.source < b.source;
}

}  // namespace

Rib::Rib() {
  v4_.slots.resize(1024);
  v6_.slots.resize(1024);
}

uint64_t Rib::Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

template <typename Addr>
size_t Rib::Home(const Table<Addr>& t, const Addr& a, uint8_t len) {
  return HashOf(a, len) & (t.slots.size() - 1);
}

template <typename Addr>
const Rib::Entry<Addr>* Rib::Find(const Table<Addr>& t, const Addr& a, uint8_t len) {
  const size_t mask = t.slots.size() - 1;
  for (size_t i = Home(t, a, len);; i = (i + 1) & mask) {
    const auto& e = t.slots[i];
    if (e.len == kEmpty) return nullptr;
    if (e.len == len && e.addr == a) return &e;
  }
}

template <typename Addr>
Rib::Entry<Addr>* Rib::Find(Table<Addr>& t, const Addr& a, uint8_t len) {
  return const_cast<Entry<Addr>*>(Find(static_cast<const Table<Addr>&>(t), a, len));
}

template <typename Addr>
void Rib::Grow(Table<Addr>& t) {
  Rehash(t, t.slots.size() * 2);
}

template <typename Addr>
void Rib::Rehash(Table<Addr>& t, size_t slots) {
  std::vector<Entry<Addr>> old(slots);
  old.swap(t.slots);
  const size_t mask = t.slots.size() - 1;
  for (const auto& e : old) {
    if (e.len == kEmpty) continue;
    size_t i = Home(t, e.addr, e.len);
    while (t.slots[i].len != kEmpty) i = (i + 1) & mask;
    t.slots[i] = e;
  }
}

// Backward-shift deletion keeps probe chains intact without tombstones.
template <typename Addr>
void Rib::RemoveAt(Table<Addr>& t, size_t i) {
  const size_t mask = t.slots.size() - 1;
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    auto& e = t.slots[j];
    if (e.len == kEmpty) break;
    const size_t home = Home(t, e.addr, e.len);
    // Move e into the hole if its home is not within (i, j].
    if (((j - home) & mask) >= ((j - i) & mask)) {
      t.slots[i] = e;
      i = j;
    }
  }
  t.slots[i] = Entry<Addr>{};
  --t.size;
}

template <typename Addr>
RibChange Rib::UpsertIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, const Prefix& p,
                        const RibCand& c) {
  RibChange ch;
  const uint8_t len = static_cast<uint8_t>(p.len());
  // Grow first so one probe both finds the prefix and, when it is new, ends on
  // the empty slot it goes into (a full-table load is mostly new prefixes).
  if ((t.size + 1) * 4 > t.slots.size() * 3) Grow(t);
  const size_t mask = t.slots.size() - 1;
  size_t i = Home(t, a, len);
  while (t.slots[i].len != kEmpty && !(t.slots[i].len == len && t.slots[i].addr == a)) i = (i + 1) & mask;
  Entry<Addr>* e = t.slots[i].len == kEmpty ? nullptr : &t.slots[i];
  if (e == nullptr) {
    t.slots[i] = Entry<Addr>{a, len, static_cast<uint8_t>(c.source), c.distance, 0, c.nhg};
    ++t.size;
    ++lens[len];
    ++candidates_;
    ch.new_best = c.nhg;
    return ch;
  }
  ch.old_best = e->nhg;
  if (!e->multi) {
    if (e->source == static_cast<uint8_t>(c.source)) {
      ch.dropped = e->nhg;
      e->distance = c.distance;
      e->nhg = c.nhg;
      ch.new_best = c.nhg;
      return ch;
    }
    // A second source: move both candidates to the side map.
    multi_[p] = {RibCand{static_cast<RouteSource>(e->source), e->distance, e->nhg}};
    e->multi = 1;
  }
  auto& cands = multi_[p];
  auto same = std::find_if(cands.begin(), cands.end(), [&](const RibCand& x) { return x.source == c.source; });
  if (same != cands.end()) {
    ch.dropped = same->nhg;
    cands.erase(same);
  } else {
    ++candidates_;
  }
  cands.insert(std::upper_bound(cands.begin(), cands.end(), c, Better), c);
  e->source = static_cast<uint8_t>(cands.front().source);
  e->distance = cands.front().distance;
  e->nhg = cands.front().nhg;
  ch.new_best = e->nhg;
  return ch;
}

template <typename Addr>
RibChange Rib::EraseIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, const Prefix& p,
                       RouteSource s) {
  RibChange ch;
  const uint8_t len = static_cast<uint8_t>(p.len());
  Entry<Addr>* e = Find(t, a, len);
  if (e == nullptr) return ch;
  ch.old_best = ch.new_best = e->nhg;
  if (!e->multi) {
    if (e->source != static_cast<uint8_t>(s)) return ch;
    ch.dropped = e->nhg;
    ch.new_best = kNoGroup;
    RemoveAt(t, static_cast<size_t>(e - t.slots.data()));
    --lens[len];
    --candidates_;
    return ch;
  }
  auto it = multi_.find(p);
  auto& cands = it->second;
  auto same = std::find_if(cands.begin(), cands.end(), [&](const RibCand& x) { return x.source == s; });
  if (same == cands.end()) return ch;
  ch.dropped = same->nhg;
  cands.erase(same);
  --candidates_;
  e->source = static_cast<uint8_t>(cands.front().source);
  e->distance = cands.front().distance;
  e->nhg = cands.front().nhg;
  ch.new_best = e->nhg;
  if (cands.size() == 1) {
    e->multi = 0;
    multi_.erase(it);
  }
  return ch;
}

RibChange Rib::Upsert(const Prefix& p, const RibCand& c) {
  return p.family() == Family::kV4 ? UpsertIn(v4_, v4_len_, Key4(p), p, c) : UpsertIn(v6_, v6_len_, Key6(p), p, c);
}

RibChange Rib::Erase(const Prefix& p, RouteSource s) {
  return p.family() == Family::kV4 ? EraseIn(v4_, v4_len_, Key4(p), p, s) : EraseIn(v6_, v6_len_, Key6(p), p, s);
}

std::vector<RibChange> Rib::UpsertV4Batch(const std::vector<V4Upsert>& items) {
  size_t slots = v4_.slots.size();
  while ((v4_.size + items.size()) * 4 > slots * 3) slots *= 2;
  if (slots != v4_.slots.size()) Rehash(v4_, slots);
  // Stable counting sort by the top bits of the home slot: each bucket's
  // slots then fit in cache while its items are inserted.
  const int slot_bits = std::countr_zero(slots);
  const int bucket_bits = std::min(slot_bits, 12);
  std::vector<uint32_t> start((size_t{1} << bucket_bits) + 1, 0);
  std::vector<uint16_t> bucket(items.size());
  for (size_t k = 0; k < items.size(); ++k) {
    bucket[k] = static_cast<uint16_t>(Home(v4_, items[k].addr, items[k].len) >> (slot_bits - bucket_bits));
    ++start[bucket[k] + 1];
  }
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  std::vector<uint32_t> order(items.size());
  for (size_t k = 0; k < items.size(); ++k) order[start[bucket[k]]++] = static_cast<uint32_t>(k);
  std::vector<RibChange> changes(items.size());
  for (uint32_t k : order) {
    changes[k] = UpsertIn(v4_, v4_len_, items[k].addr, Prefix::V4(items[k].addr, items[k].len), items[k].cand);
  }
  return changes;
}

std::optional<RibCand> Rib::Best(const Prefix& p) const {
  const uint8_t len = static_cast<uint8_t>(p.len());
  if (p.family() == Family::kV4) {
    if (v4_len_[len] == 0) return std::nullopt;
    const auto* e = Find(v4_, Key4(p), len);
    if (e == nullptr) return std::nullopt;
    return RibCand{static_cast<RouteSource>(e->source), e->distance, e->nhg};
  }
  if (v6_len_[len] == 0) return std::nullopt;
  const auto* e = Find(v6_, Key6(p), len);
  if (e == nullptr) return std::nullopt;
  return RibCand{static_cast<RouteSource>(e->source), e->distance, e->nhg};
}

std::vector<RibCand> Rib::Candidates(const Prefix& p) const {
  auto it = multi_.find(p);
  if (it != multi_.end()) return it->second;
  auto b = Best(p);
  if (!b) return {};
  return {*b};
}

void Rib::ForEach(Family f, const std::function<void(const Prefix&, const RibCand&)>& fn) const {
  if (f == Family::kV4) {
    for (const auto& e : v4_.slots) {
      if (e.len != kEmpty) fn(Prefix::V4(e.addr, e.len), {static_cast<RouteSource>(e.source), e.distance, e.nhg});
    }
    return;
  }
  for (const auto& e : v6_.slots) {
    if (e.len == kEmpty) continue;
    fn(Prefix::V6((U128{e.addr.hi} << 64) | e.addr.lo, e.len), {static_cast<RouteSource>(e.source), e.distance, e.nhg});
  }
}

}  // namespace fibnic
