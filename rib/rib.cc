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
  static_assert(sizeof(Entry<uint32_t>) == 8 && sizeof(Entry<V6Hi>) == 12 && sizeof(Entry<V6Addr>) == 24);
  v4_.slots.resize(1024);
  v6_short_.slots.resize(1024);
  v6_.slots.resize(64);
}

template <typename Addr>
size_t Rib::Home(const Table<Addr>& t, const Addr& a, uint8_t len) {
  return static_cast<size_t>((U128{HashOf(a, len)} * t.slots.size()) >> 64);
}

template <typename Addr>
size_t Rib::ProbeOf(const Table<Addr>& t, size_t i) {
  const size_t home = Home(t, t.slots[i].addr, t.slots[i].len());
  return i >= home ? i - home : i + t.slots.size() - home;
}

template <typename Addr>
Rib::Probe Rib::Locate(const Table<Addr>& t, const Addr& a, uint8_t len) {
  size_t i = Home(t, a, len);
  // Robin Hood order: once an entry sits closer to its home than we are to
  // ours, the key cannot be further on — and that slot is where it would go.
  for (size_t probe = 0;; ++probe, i = t.Next(i)) {
    const auto& e = t.slots[i];
    if (e.empty()) return {i, probe, false};
    if (e.len() == len && e.addr == a) return {i, probe, true};
    if (ProbeOf(t, i) < probe) return {i, probe, false};
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
void Rib::PlaceFrom(Table<Addr>& t, Entry<Addr> e, size_t i, size_t probe) {
  for (;; i = t.Next(i)) {
    auto& slot = t.slots[i];
    if (slot.empty()) {
      slot = e;
      ++t.size;
      return;
    }
    const size_t theirs = ProbeOf(t, i);
    if (theirs < probe) {  // the richer entry moves on
      std::swap(slot, e);
      probe = theirs;
    }
    if (++probe == kMaxProbe) {  // a pathological cluster: a bigger table breaks it up
      Rehash(t, t.slots.size() * 3 / 2);
      PlaceFrom(t, e, Home(t, e.addr, e.len()), 0);
      return;
    }
  }
}

template <typename Addr>
void Rib::Reserve(Table<Addr>& t, size_t entries) {
  if (entries * 8 <= t.slots.size() * 7) return;
  // Grow by a quarter: a table that stopped growing sits at 70-87% load
  // (by half it was 58-87%: up to 13.7 B per IPv4 prefix instead of 11.4). A
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
  for (const auto& e : old) {
    if (!e.empty()) PlaceFrom(t, e, Home(t, e.addr, e.len()), 0);
  }
}

// Backward-shift deletion keeps probe chains intact without tombstones.
template <typename Addr>
void Rib::RemoveAt(Table<Addr>& t, size_t i) {
  for (size_t j = t.Next(i); !t.slots[j].empty() && ProbeOf(t, j) > 0; j = t.Next(j)) {
    t.slots[i] = t.slots[j];
    i = j;
  }
  t.slots[i] = Entry<Addr>{};
  --t.size;
}

std::optional<uint32_t> Rib::InlineWord(uint8_t len, const RibCand& c) {
  if (c.nhg >= kInlineGroups) return std::nullopt;
  uint32_t k = 0;
  while (k < kinds_.size() && !(kinds_[k].source == c.source && kinds_[k].distance == c.distance)) ++k;
  if (k == kinds_.size()) {
    if (k == kKinds) return std::nullopt;
    kinds_.push_back({c.source, c.distance});
  }
  return uint32_t{len} | k << kKindShift | c.nhg << kGroupShift;
}

template <typename Addr>
RibCand Rib::CandOf(const Entry<Addr>& e) const {
  if (e.multi()) return multi_.at(PrefixOf(e.addr, e.len())).front();
  const Kind& k = kinds_[e.kind()];
  return {k.source, k.distance, e.nhg()};
}

template <typename Addr>
void Rib::Settle(Entry<Addr>& e, std::vector<RibCand> cands) {
  const uint8_t len = e.len();
  if (cands.size() == 1) {
    if (auto w = InlineWord(len, cands.front())) {
      if (e.multi()) multi_.erase(PrefixOf(e.addr, len));
      e.word = *w;
      return;
    }
  }
  e.word = uint32_t{len} | kMultiBit;
  multi_[PrefixOf(e.addr, len)] = std::move(cands);
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
    fresh.word = len;
    if (auto w = InlineWord(len, c)) {
      fresh.word = *w;
    } else {
      Settle(fresh, {c});
    }
    PlaceFrom(t, fresh, at.slot, at.probe);
    ++lens[len];
    ++candidates_;
    MarkPresent(a, len, true);
    ch.new_best = c.nhg;
    return ch;
  }
  Entry<Addr>& e = t.slots[at.slot];
  if (!e.multi()) {
    const RibCand old = CandOf(e);
    if (old.source == c.source) {  // the common case: a source replaces its own route
      ch.old_best = ch.dropped = old.nhg;
      ch.new_best = c.nhg;
      if (auto w = InlineWord(len, c)) {
        e.word = *w;
      } else {
        Settle(e, {c});
      }
      return ch;
    }
  }
  std::vector<RibCand> cands = e.multi() ? multi_.at(PrefixOf(a, len)) : std::vector<RibCand>{CandOf(e)};
  ch.old_best = cands.front().nhg;
  auto same = std::find_if(cands.begin(), cands.end(), [&](const RibCand& x) { return x.source == c.source; });
  if (same != cands.end()) {
    ch.dropped = same->nhg;
    cands.erase(same);
  } else {
    ++candidates_;
  }
  cands.insert(std::upper_bound(cands.begin(), cands.end(), c, Better), c);
  ch.new_best = cands.front().nhg;
  Settle(e, std::move(cands));
  return ch;
}

template <typename Addr>
RibChange Rib::EraseIn(Table<Addr>& t, std::vector<uint32_t>& lens, const Addr& a, uint8_t len, RouteSource s) {
  RibChange ch;
  Entry<Addr>* e = Find(t, a, len);
  if (e == nullptr) return ch;
  if (!e->multi()) {
    ch.old_best = ch.new_best = e->nhg();
    if (CandOf(*e).source != s) return ch;
    ch.dropped = e->nhg();
  } else {
    auto it = multi_.find(PrefixOf(a, len));
    std::vector<RibCand> cands = it->second;
    ch.old_best = ch.new_best = cands.front().nhg;
    auto same = std::find_if(cands.begin(), cands.end(), [&](const RibCand& x) { return x.source == s; });
    if (same == cands.end()) return ch;
    ch.dropped = same->nhg;
    cands.erase(same);
    if (!cands.empty()) {
      --candidates_;
      ch.new_best = cands.front().nhg;
      Settle(*e, std::move(cands));
      return ch;
    }
    multi_.erase(it);
  }
  --candidates_;
  ch.new_best = kNoGroup;
  RemoveAt(t, static_cast<size_t>(e - t.slots.data()));
  --lens[len];
  MarkPresent(a, len, false);
  return ch;
}

RibChange Rib::Upsert(const Prefix& p, const RibCand& c) {
  const auto len = static_cast<uint8_t>(p.len());
  if (p.family() == Family::kV4) return UpsertIn(v4_, v4_len_, Key4(p), len, c);
  return len <= 64 ? UpsertIn(v6_short_, v6_len_, KeyHi(p), len, c) : UpsertIn(v6_, v6_len_, Key6(p), len, c);
}

RibChange Rib::Erase(const Prefix& p, RouteSource s) {
  const auto len = static_cast<uint8_t>(p.len());
  if (p.family() == Family::kV4) return EraseIn(v4_, v4_len_, Key4(p), len, s);
  return len <= 64 ? EraseIn(v6_short_, v6_len_, KeyHi(p), len, s) : EraseIn(v6_, v6_len_, Key6(p), len, s);
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
    return std::make_pair(l, CandOf(*e));
  }
  return std::nullopt;
}

std::optional<RibCand> Rib::Best(const Prefix& p) const {
  const uint8_t len = static_cast<uint8_t>(p.len());
  if (p.family() == Family::kV4) {
    if (v4_len_[len] == 0) return std::nullopt;
    const auto* e = Find(v4_, Key4(p), len);
    if (e == nullptr) return std::nullopt;
    return CandOf(*e);
  }
  if (v6_len_[len] == 0) return std::nullopt;
  if (len <= 64) {
    const auto* e = Find(v6_short_, KeyHi(p), len);
    if (e == nullptr) return std::nullopt;
    return CandOf(*e);
  }
  const auto* e = Find(v6_, Key6(p), len);
  if (e == nullptr) return std::nullopt;
  return CandOf(*e);
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
      if (!e.empty()) fn(Prefix::V4(e.addr, e.len()), CandOf(e));
    }
    return;
  }
  for (const auto& e : v6_short_.slots) {
    if (!e.empty()) fn(PrefixOf(e.addr, e.len()), CandOf(e));
  }
  for (const auto& e : v6_.slots) {
    if (!e.empty()) fn(PrefixOf(e.addr, e.len()), CandOf(e));
  }
}

}  // namespace fibnic
