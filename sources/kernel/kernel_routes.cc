#include "sources/kernel/kernel_routes.h"

#include <algorithm>

#include "common/hash_mix.h"

namespace fibnic {

KernelRoutes::KernelRoutes(KeyFn key_of, std::function<void(const NlRoute&, int)> kind_changes)
    : key_of_(key_of), kind_changes_(std::move(kind_changes)) {}

uint64_t KernelRoutes::HashOf(const NlRoute& r, int rank) {
  uint64_t h = MixBits((uint64_t{static_cast<uint32_t>(rank)} << 40) ^ (uint64_t{r.table} << 8) ^
                       (r.prefix.family() == Family::kV6 ? 1 : 0));
  h = MixBits(h ^ (uint64_t{r.protocol} | uint64_t{r.type} << 8 | uint64_t{r.scope} << 16 | uint64_t{r.tos} << 24 |
                   uint64_t{r.flags} << 32));
  h = MixBits(h ^ (uint64_t{r.priority} << 32 | r.nh_id));
  for (const NlPath& x : r.paths) {
    const U128 g = x.gateway ? x.gateway->v6() : 0;
    h = MixBits(h ^ static_cast<uint64_t>(g) ^ MixBits(static_cast<uint64_t>(g >> 64) ^ x.ifindex ^
                                                       uint64_t{x.flags} << 32 ^ uint64_t{x.weight} << 40 ^
                                                       uint64_t{x.gateway.has_value()} << 56));
  }
  h ^= std::hash<std::string>()(r.metrics_and_src) ^ (std::hash<std::string>()(r.unsupported) << 1);
  return MixBits(h);
}

bool KernelRoutes::Same(const Kind& k, const NlRoute& r, int rank) {
  const NlRoute& a = k.route;
  return k.rank == rank && a.prefix.family() == r.prefix.family() && a.table == r.table && a.protocol == r.protocol &&
         a.type == r.type && a.scope == r.scope && a.tos == r.tos && a.flags == r.flags && a.priority == r.priority &&
         a.nh_id == r.nh_id && a.paths == r.paths && a.metrics_and_src == r.metrics_and_src &&
         a.unsupported == r.unsupported;
}

uint32_t KernelRoutes::Intern(const NlRoute& r, int rank) {
  if (last_ < kinds_.size() && kinds_[last_].users != 0 && Same(kinds_[last_], r, rank)) {
    ++kinds_[last_].users;
    return last_;
  }
  const uint64_t h = HashOf(r, rank);
  for (auto [it, end] = index_.equal_range(h); it != end; ++it) {
    if (Same(kinds_[it->second], r, rank)) {
      ++kinds_[it->second].users;
      return last_ = it->second;
    }
  }
  uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<uint32_t>(kinds_.size());
    kinds_.emplace_back();
  }
  Kind& k = kinds_[id];
  k.route = r;
  k.route.prefix = r.prefix.family() == Family::kV4 ? Prefix::V4(0, 0) : Prefix::V6(0, 0);
  k.route.del = false;
  k.rank = rank;
  k.key = key_of_(rank, r);
  k.users = 1;
  k.out.clear();
  k.out_known = false;
  index_.emplace(h, id);
  kind_changes_(k.route, +1);
  return last_ = id;
}

void KernelRoutes::Release(uint32_t id) {
  Kind& k = kinds_[id];
  if (--k.users != 0) return;
  const uint64_t h = HashOf(k.route, k.rank);
  for (auto [it, end] = index_.equal_range(h); it != end; ++it) {
    if (it->second == id) {
      index_.erase(it);
      break;
    }
  }
  kind_changes_(k.route, -1);
  k.route = NlRoute{};
  k.out = {};
  free_.push_back(id);
}

KernelRouteEntry KernelRoutes::EntryOf(const Prefix& p, uint32_t kind, uint64_t gen, const Held& flags) const {
  KernelRouteEntry e;
  e.route = kinds_[kind].route;
  e.route.prefix = p;
  e.gen = gen;
  e.several = flags.several;
  e.unlisted = flags.unlisted;
  e.order = flags.order;
  e.copies = flags.copies;
  return e;
}

KernelRouteEntries KernelRoutes::Get(const Prefix& p, uint64_t gen) const {
  KernelRouteEntries out;
  const std::optional<uint32_t> w = words_.Find(p);
  if (!w) return out;
  const uint32_t kind = *w >> kKindShift;
  if (kind != kMulti) {
    out.emplace(kinds_[kind].key, EntryOf(p, kind, (*w & kSeenBit) ? gen : 0, Held{}));
    return out;
  }
  for (const Held& h : side_.at(p)) out.emplace(kinds_[h.kind].key, EntryOf(p, h.kind, h.gen, h));
  return out;
}

KernelRouteEntries KernelRoutes::Take(const Prefix& p, uint64_t gen) {
  KernelRouteEntries out = Get(p, gen);
  const std::optional<uint32_t> w = words_.Erase(p);
  taken_bits_ = 0;
  if (!w) return out;
  taken_bits_ = *w & (kNoteBits | kGivenBits);
  const uint32_t kind = *w >> kKindShift;
  if (kind != kMulti) {
    taken_.push_back(kind);
    return out;
  }
  auto s = side_.find(p);
  for (const Held& h : s->second) taken_.push_back(h.kind);
  side_.erase(s);
  return out;
}

void KernelRoutes::Put(const Prefix& p, KernelRouteEntries entries, uint64_t gen) {
  PutOnly(p, std::move(entries), gen);
  taken_bits_ = 0;
  for (uint32_t kind : taken_) Release(kind);
  taken_.clear();
}

void KernelRoutes::PutOnly(const Prefix& p, KernelRouteEntries entries, uint64_t gen) {
  if (entries.empty()) return;
  if (entries.size() == 1 && !entries.begin()->second.several && !entries.begin()->second.unlisted &&
      entries.begin()->second.copies == 1) {
    const KernelRouteEntry& e = entries.begin()->second;
    const uint32_t kind = Intern(e.route, std::get<0>(entries.begin()->first));
    if (kind < kMulti) {
      words_.Put(p, kind << kKindShift | taken_bits_ | (e.gen == gen ? kSeenBit : 0));
      return;
    }
    Release(kind);  // more kinds than the word names: the side map holds it
  }
  std::vector<Held> held;
  held.reserve(entries.size());
  for (const auto& [key, e] : entries) {
    held.push_back({Intern(e.route, std::get<0>(key)), e.gen, e.several, e.unlisted, e.copies, e.order});
  }
  side_[p] = std::move(held);
  words_.Put(p, kMulti << kKindShift | taken_bits_);
}

bool KernelRoutes::TouchIfSame(const Prefix& p, int rank, const NlRoute& r, bool dump) {
  const std::optional<uint32_t> w = words_.Find(p);
  if (!w || (*w >> kKindShift) == kMulti || !Same(kinds_[*w >> kKindShift], r, rank)) return false;
  if (dump && (*w & kSeenBit)) return false;
  if (!(*w & kSeenBit)) words_.Put(p, *w | kSeenBit);
  return true;
}

std::optional<uint32_t> KernelRoutes::Single(const Prefix& p) const {
  const std::optional<uint32_t> w = words_.Find(p);
  if (!w || (*w >> kKindShift) == kMulti) return std::nullopt;
  return *w >> kKindShift;
}

const std::vector<NextHop>& KernelRoutes::Output(uint32_t id,
                                                 const std::function<std::vector<NextHop>(const Kind&)>& compute) {
  Kind& k = kinds_[id];
  if (!k.out_known) {
    k.out = compute(k);
    k.out_known = true;
  }
  return k.out;
}

std::vector<uint32_t> KernelRoutes::Recompute(const std::function<bool(const Kind&)>& pick,
                                              const std::function<std::vector<NextHop>(const Kind&)>& compute) {
  std::vector<uint32_t> changed;
  for (uint32_t id = 0; id < kinds_.size(); ++id) {
    Kind& k = kinds_[id];
    if (k.users == 0 || !pick(k)) continue;
    std::vector<NextHop> out = compute(k);
    if (!k.out_known || out != k.out) changed.push_back(id);
    k.out = std::move(out);
    k.out_known = true;
  }
  return changed;
}

std::vector<Prefix> KernelRoutes::PrefixesOf(const std::function<bool(uint32_t id, const Kind&)>& pick) const {
  std::vector<char> picked(kinds_.size(), 0);
  bool any = false;
  for (uint32_t id = 0; id < kinds_.size(); ++id) {
    picked[id] = kinds_[id].users != 0 && pick(id, kinds_[id]);
    any |= picked[id] != 0;
  }
  std::vector<Prefix> out;
  if (!any) return out;
  auto hit = [&](const Prefix& p, uint32_t w) {
    bool h = false;
    ForEachKindOf(w, p, [&](uint32_t kind, bool, uint64_t) { h |= picked[kind] != 0; });
    return h;
  };
  // Counted first: an object deleted under a peer's 100k routes would
  // otherwise grow the vector by doubling, briefly holding 1.5 times more.
  size_t n = 0;
  words_.ForEach([&](const Prefix& p, uint32_t w) { n += hit(p, w); });
  out.reserve(n);
  words_.ForEach([&](const Prefix& p, uint32_t w) {
    if (hit(p, w)) out.push_back(p);
  });
  return out;
}

std::vector<Prefix> KernelRoutes::Prefixes() const {
  std::vector<Prefix> out;
  out.reserve(words_.size());
  words_.ForEach([&](const Prefix& p, uint32_t) { out.push_back(p); });
  return out;
}

std::vector<Prefix> KernelRoutes::Unseen(uint64_t gen) const {
  std::vector<Prefix> out;
  words_.ForEach([&](const Prefix& p, uint32_t w) {
    bool unseen = false;
    ForEachKindOf(w, p, [&](uint32_t, bool seen, uint64_t g) { unseen |= (w >> kKindShift) == kMulti ? g != gen : !seen; });
    if (unseen) out.push_back(p);
  });
  return out;
}

size_t KernelRoutes::UnseenFrom(size_t cursor, size_t max, uint64_t gen, std::vector<Prefix>& out) {
  return words_.Walk(cursor, max, [&](const Prefix& p, uint32_t& w) {
    bool unseen = false;
    ForEachKindOf(w, p, [&](uint32_t, bool seen, uint64_t g) { unseen |= (w >> kKindShift) == kMulti ? g != gen : !seen; });
    if (unseen) out.push_back(p);
  });
}

void KernelRoutes::ClearSeen() {
  words_.ForEach([](const Prefix&, uint32_t& w) { w &= ~kSeenBit; });
}

uint8_t KernelRoutes::note(const Prefix& p) const {
  const std::optional<uint32_t> w = words_.Find(p);
  return w ? static_cast<uint8_t>((*w & kNoteBits) >> kNoteShift) : 0;
}

void KernelRoutes::SetNote(const Prefix& p, uint8_t note) {
  const std::optional<uint32_t> w = words_.Find(p);
  if (w) words_.Put(p, (*w & ~kNoteBits) | ((uint32_t{note} << kNoteShift) & kNoteBits));
}

std::optional<uint8_t> KernelRoutes::given(const Prefix& p) const {
  const std::optional<uint32_t> w = words_.Find(p);
  if (!w) return std::nullopt;
  return static_cast<uint8_t>((*w & kGivenBits) >> kGivenShift);
}

void KernelRoutes::SetGiven(const Prefix& p, uint8_t given) {
  const std::optional<uint32_t> w = words_.Find(p);
  if (w) words_.Put(p, (*w & ~kGivenBits) | ((uint32_t{given} << kGivenShift) & kGivenBits));
}

void KernelRoutes::ClearNotes() {
  words_.ForEach([](const Prefix&, uint32_t& w) { w &= ~kNoteBits; });
}

std::vector<const KernelRoutes::Kind*> KernelRoutes::KindsOf(const Prefix& p) const {
  std::vector<const Kind*> out;
  const std::optional<uint32_t> w = words_.Find(p);
  if (w) ForEachKindOf(*w, p, [&](uint32_t kind, bool, uint64_t) { out.push_back(&kinds_[kind]); });
  return out;
}

size_t KernelRoutes::memory() const {
  size_t kinds = kinds_.capacity() * sizeof(Kind);
  for (const Kind& k : kinds_) kinds += k.route.paths.capacity() * sizeof(NlPath) + k.out.capacity() * sizeof(NextHop);
  // Node-based maps: the entry, a next pointer, a cached hash, and a bucket each.
  return words_.memory() + kinds + free_.capacity() * sizeof(uint32_t) + index_.size() * (8 + 4 + 24) +
         side_.size() * (sizeof(Prefix) + sizeof(std::vector<Held>) + 24 + 2 * sizeof(Held));
}

}  // namespace fibnic
