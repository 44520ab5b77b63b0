#include "rib/rib.h"

#include <algorithm>

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

template <typename Addr>
size_t Rib::Home(const Table<Addr>& t, const Addr& a, uint8_t len) {
  return static_cast<size_t>((U128{HashOf(a, len)} * t.slots.size()) >> 64);
}

template <typename Addr>
Rib::Probe Rib::Locate(const Table<Addr>& t, const Addr& a, uint8_t len) {
  size_t i = Home(t, a, len);
  // Robin Hood order: once an entry sits closer to its home than we are to
  // ours, the key cannot be further on — and that slot is where it would go.
  for (uint8_t probe = 0;; ++probe, i = t.Next(i)) {
    const auto& e = t.slots[i];
    if (e.len == kEmpty || e.probe < probe) return {i, probe, false};
    if (e.len == len && e.addr == a) return {i, probe, true};
  }
}

template <typename Addr>
const Rib::Entry<Addr>* Rib::Find(const Table<Addr>& t, const Addr& a, uint8_t len) {
  const Probe at = Locate(t, a, len);
  return at.found ? &t.slots[at.slot] : nullptr;
}

template <typename Addr>
Rib::Entry<Addr>* Rib::Find(Table<Addr>& t, const Addr& a, uint8_t len) {
  return const_cast<Entry<Addr>*>(Find(static_cast<const Table<Addr>&>(t), a, len));
}

template <typename Addr>
void Rib::PlaceFrom(Table<Addr>& t, Entry<Addr> e, size_t i) {
  for (;; i = t.Next(i)) {
    auto& slot = t.slots[i];
    if (slot.len == kEmpty) {
      slot = e;
      ++t.size;
      return;
    }
    if (slot.probe < e.probe) std::swap(slot, e);  // the richer entry moves on
    if (++e.probe == kMaxProbe) {  // a pathological cluster: a bigger table breaks it up
      Rehash(t, t.slots.size() * 3 / 2);
      e.probe = 0;
      PlaceFrom(t, e, Home(t, e.addr, e.len));
      return;
    }
  }
}

template <typename Addr>
void Rib::Reserve(Table<Addr>& t, size_t entries) {
  if (entries * 8 <= t.slots.size() * 7) return;
  // Grow by a quarter: a table that stopped growing sits at 70-87% load
  // (by half it was 58-87%: up to 20.6 B per IPv4 prefix instead of 17). A
  // bulk reservation leaves a fifth spare so the next single route does not
  // rehash.
  Rehash(t, std::max(t.slots.size() * 5 / 4, entries * 5 / 4));
}

template <typename Addr>
void Rib::Rehash(Table<Addr>& t, size_t slots) {
  std::vector<Entry<Addr>> old(slots);
  old.swap(t.slots);
  t.size = 0;
  // Old slot order is hash order, so the new homes ascend: a near-sequential pass.
  for (auto e : old) {
    if (e.len == kEmpty) continue;
    e.probe = 0;
    PlaceFrom(t, e, Home(t, e.addr, e.len));
  }
}

// Backward-shift deletion keeps probe chains intact without tombstones.
template <typename Addr>
void Rib::RemoveAt(Table<Addr>& t, size_t i) {
  for (size_t j = t.Next(i); t.slots[j].len != kEmpty && t.slots[j].probe > 0; j = t.Next(j)) {
    t.slots[i] = t.slots[j];
    --t.slots[i].probe;
    i = j;
  }
  t.slots[i] = Entry<Addr>{};
  --t.size;
}

template <typename Addr>
RibChange Rib::UpsertIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, uint8_t len,
                        const RibCand& c) {
  RibChange ch;
  Reserve(t, t.size + 1);  // first: a rehash would move the slot found below
  const Probe at = Locate(t, a, len);
  if (!at.found) {  // one probe both missed and found where the prefix goes
    Entry<Addr> fresh;
    fresh.addr = a;
    fresh.nhg = c.nhg;
    fresh.len = len;
    fresh.probe = at.probe;
    fresh.source = static_cast<uint8_t>(c.source);
    fresh.distance = c.distance;
    PlaceFrom(t, fresh, at.slot);
    ++lens[len];
    ++candidates_;
    MarkPresent(a, len, true);
    ch.new_best = c.nhg;
    return ch;
  }
  Entry<Addr>* e = &t.slots[at.slot];
  ch.old_best = e->nhg;
  if (!e->multi()) {
    if (e->source == static_cast<uint8_t>(c.source)) {
      ch.dropped = e->nhg;
      e->distance = c.distance;
      e->nhg = c.nhg;
      ch.new_best = c.nhg;
      return ch;
    }
    // A second source: move both candidates to the side map.
    multi_[PrefixOf(a, len)] = {e->cand()};
  }
  auto& cands = multi_[PrefixOf(a, len)];
  auto same = std::find_if(cands.begin(), cands.end(), [&](const RibCand& x) { return x.source == c.source; });
  if (same != cands.end()) {
    ch.dropped = same->nhg;
    cands.erase(same);
  } else {
    ++candidates_;
  }
  cands.insert(std::upper_bound(cands.begin(), cands.end(), c, Better), c);
  SetBest(*e, cands.front(), true);
  ch.new_best = e->nhg;
  return ch;
}

template <typename Addr>
RibChange Rib::EraseIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, uint8_t len, RouteSource s) {
  RibChange ch;
  Entry<Addr>* e = Find(t, a, len);
  if (e == nullptr) return ch;
  ch.old_best = ch.new_best = e->nhg;
  if (!e->multi()) {
    if (e->source != static_cast<uint8_t>(s)) return ch;
    ch.dropped = e->nhg;
    ch.new_best = kNoGroup;
    RemoveAt(t, static_cast<size_t>(e - t.slots.data()));
    --lens[len];
    --candidates_;
    MarkPresent(a, len, false);
    return ch;
  }
  auto it = multi_.find(PrefixOf(a, len));
  auto& cands = it->second;
  auto same = std::find_if(cands.begin(), cands.end(), [&](const RibCand& x) { return x.source == s; });
  if (same == cands.end()) return ch;
  ch.dropped = same->nhg;
  cands.erase(same);
  --candidates_;
  const bool still_multi = cands.size() > 1;
  SetBest(*e, cands.front(), still_multi);
  ch.new_best = e->nhg;
  if (!still_multi) multi_.erase(it);
  return ch;
}

RibChange Rib::Upsert(const Prefix& p, const RibCand& c) {
  const auto len = static_cast<uint8_t>(p.len());
  return p.family() == Family::kV4 ? UpsertIn(v4_, v4_len_, Key4(p), len, c) : UpsertIn(v6_, v6_len_, Key6(p), len, c);
}

RibChange Rib::Erase(const Prefix& p, RouteSource s) {
  const auto len = static_cast<uint8_t>(p.len());
  return p.family() == Family::kV4 ? EraseIn(v4_, v4_len_, Key4(p), len, s) : EraseIn(v6_, v6_len_, Key6(p), len, s);
}

RibChange Rib::UpsertV4(uint32_t addr, uint8_t len, const RibCand& c) {
  return UpsertIn(v4_, v4_len_, addr & MaskV4(len), len, c);
}

RibChange Rib::EraseV4(uint32_t addr, uint8_t len, RouteSource s) {
  return EraseIn(v4_, v4_len_, addr & MaskV4(len), len, s);
}

void Rib::ReserveV4(size_t more) { Reserve(v4_, v4_.size + more); }

void Rib::PrefetchV4(uint32_t addr, uint8_t len) const { __builtin_prefetch(&v4_.slots[Home(v4_, addr, len)]); }

size_t Rib::PresenceBit(uint32_t addr, int len) {
  return (size_t{1} << len) - 1 + (len == 0 ? 0 : addr >> (32 - len));
}

void Rib::MarkPresent(uint32_t addr, uint8_t len, bool present) {
  if (len >= kPresenceLens) return;
  const size_t bit = PresenceBit(addr, len);
  uint64_t& word = present_v4_[bit >> 6];
  word = present ? (word | uint64_t{1} << (bit & 63)) : (word & ~(uint64_t{1} << (bit & 63)));
}

std::optional<std::pair<int, RibCand>> Rib::ParentV4(uint32_t addr, int len) const {
  for (int l = std::min(len, kPresenceLens) - 1; l >= 0; --l) {
    if (v4_len_[l] == 0) continue;
    const size_t bit = PresenceBit(addr, l);
    if (!(present_v4_[bit >> 6] >> (bit & 63) & 1)) continue;
    const auto* e = Find(v4_, addr & MaskV4(l), static_cast<uint8_t>(l));
    return std::make_pair(l, e->cand());
  }
  return std::nullopt;
}

std::optional<RibCand> Rib::Best(const Prefix& p) const {
  const uint8_t len = static_cast<uint8_t>(p.len());
  if (p.family() == Family::kV4) {
    if (v4_len_[len] == 0) return std::nullopt;
    const auto* e = Find(v4_, Key4(p), len);
    if (e == nullptr) return std::nullopt;
    return e->cand();
  }
  if (v6_len_[len] == 0) return std::nullopt;
  const auto* e = Find(v6_, Key6(p), len);
  if (e == nullptr) return std::nullopt;
  return e->cand();
}

std::vector<RibCand> Rib::Candidates(const Prefix& p) const {
  auto it = multi_.find(p);
  if (it != multi_.end()) return it->second;
  auto b = Best(p);
  if (!b) return {};
  return {*b};
}

std::optional<std::pair<RibCand, bool>> Rib::CandidateOf(const Prefix& p, RouteSource source) const {
  const auto best = Best(p);
  if (!best) return std::nullopt;
  if (best->source == source) return std::make_pair(*best, true);
  // Only a prefix with several candidates can hold another source's.
  const auto it = multi_.find(p);
  if (it == multi_.end()) return std::nullopt;
  for (const RibCand& c : it->second) {
    if (c.source == source) return std::make_pair(c, false);
  }
  return std::nullopt;
}

void Rib::ForEach(Family f, const std::function<void(const Prefix&, const RibCand&)>& fn) const {
  if (f == Family::kV4) {
    for (const auto& e : v4_.slots) {
      if (e.len != kEmpty) fn(Prefix::V4(e.addr, e.len), e.cand());
    }
    return;
  }
  for (const auto& e : v6_.slots) {
    if (e.len == kEmpty) continue;
    fn(Prefix::V6((U128{e.addr.hi} << 64) | e.addr.lo, e.len), e.cand());
  }
}

}  // namespace fibnic
