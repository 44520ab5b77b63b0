// The Fib's queries: a route's offload state (RouteInfo), the RIB's answer
// for a destination, listing in prefix order, slots and neighbours (the
// counts are fib_counts.cc's).
// Each settles the IPv4 queue first (logically const: the answer is the same
// as if every upsert had been applied when it arrived).
#include <algorithm>
#include <tuple>

#include "fib/fib_impl.h"

namespace fibnic {

std::optional<std::pair<Prefix, RibCand>> Fib::Impl::MatchV6(const IpAddr& dst) const {
  for (int l = 128; l >= 0; --l) {
    if (!rib.HasLength(Family::kV6, l)) continue;
    const Prefix p = Prefix::V6(dst.v6(), l);
    if (auto best = rib.Best(p)) return std::make_pair(p, *best);
  }
  return std::nullopt;
}

// The code the compiled TCAM gives an IPv6 destination (0: punt).
uint8_t Fib::Impl::TcamCodeOf(const IpAddr& dst) const {
  return Tcam6Code(image.tcam, static_cast<uint64_t>(dst.v6() >> 64));
}

RouteInfo Fib::Impl::Info(const Prefix& p, const RibCand& c, bool best) const {
  RouteInfo info = StateInfo(p, c, best);
  info.route = Route{p, c.source, c.distance, nht.PathsAsNextHops(c.nhg)};
  return info;
}

RouteInfo Fib::Impl::StateInfo(const Prefix& p, const RibCand& c, bool best, std::vector<int>* walk) const {
  RouteInfo info;
  info.best = best;
  if (!best) {
    info.reason = PuntReason::kNotBest;
    return info;
  }
  if (p.family() == Family::kV6) {
    // Its space punts whatever the TCAM holds: to-host, ECMP policy, no slot,
    // or an unresolved slot owner (entry VALID=0).
    const PuntReason why = resolver.GroupPuntReason(c.nhg);
    if (why != PuntReason::kNone) {
      info.reason = why;
      return info;
    }
    const auto st = tcam6.compiler().StateOf(p, walk);
    info.state = st.state;
    info.reason = st.reason;
    if (st.state != OffloadState::kOffloaded && st.reason == PuntReason::kNone) {
      info.reason = p.len() > 64 ? PuntReason::kLongerThan64 : PuntReason::kTcamFull;  // not compiled yet
    }
    return info;
  }
  auto forwards = [&](uint8_t code) { return code != 0 && image.nexthop[code].valid(); };
  const uint32_t a = p.addr().v4();
  if (p.len() > 24) {
    const uint8_t code = image.CodeOf24(a >> 8);
    const PuntReason why = resolver.GroupPuntReason(c.nhg);
    if (forwards(code) && why == PuntReason::kNone) {
      info.state = OffloadState::kOffloaded;
    } else {
      info.reason = why != PuntReason::kNone ? why : PuntReason::kLongerThan24;
    }
    return info;
  }
  const uint32_t first = a >> 8, n = 1u << (24 - p.len());
  uint32_t mixed_punts = 0;
  for (uint32_t i = first; i < first + n; ++i) {
    const auto cell = sram.cell(i);
    if (cell.len_plus1 != p.len() + 1) continue;
    ++info.slash24_total;
    if (!forwards(image.CodeOf24(i))) {
      ++info.slash24_punted;
      mixed_punts += cell.has_longer;
    }
  }
  if (info.slash24_total == 0) {
    info.reason = PuntReason::kShadowed;
  } else if (info.slash24_punted == 0) {
    info.state = OffloadState::kOffloaded;
  } else {
    const PuntReason why = c.nhg >= Sram4Compiler::kOverflowGroup ? PuntReason::kNoSlot : resolver.GroupPuntReason(c.nhg);
    const bool all = info.slash24_punted == info.slash24_total;
    info.state = all ? OffloadState::kPunted : OffloadState::kPartial;
    info.reason = why != PuntReason::kNone && mixed_punts < info.slash24_punted ? why : PuntReason::kMixedSlash24;
  }
  return info;
}

std::string Fib::Impl::WhyGroup(NhgId g, PuntReason reason) const {
  if (reason != PuntReason::kUnresolved && reason != PuntReason::kNoSlot && reason != PuntReason::kToHost) return "";
  const auto a = resolver.AnswerOf(g);
  if (a.nh >= 0) return resolver.Why(nht.Get(static_cast<NhId>(a.nh)), reason);
  // Multipath without an answer: every device path is unresolved or uncoded.
  std::string out;
  for (NhId id : nht.Paths(g)) {
    const std::string why = resolver.Why(nht.Get(id), reason);
    if (why.empty()) continue;
    out += (out.empty() ? "" : "; ") + why;
  }
  return out;
}

// Collects the keys of the selected routes, then orders only as much as fn
// consumes: each round selects the next smallest chunk (linear) and sorts it,
// so a page of 100 routes never sorts the table, and the chunks double so a
// full walk stays O(n log n). Info runs only for routes handed to fn.
template <typename Key, typename ToKey, typename ToPrefix>
void Fib::Impl::List(const RouteQuery& q, ToKey to_key, ToPrefix to_prefix,
                     const std::function<bool(const RouteInfo&)>& fn) const {
  for (const auto& p : {q.within, q.covering}) {
    if (p && p->family() != q.family) return;
  }
  if (q.after && q.after->family() > q.family) return;
  auto wanted = [&](const Prefix& p, const RibCand& c) {
    return (!q.after || *q.after < p) && (!q.within || q.within->Contains(p)) &&
           (!q.covering || p.Contains(*q.covering)) && (!q.source || c.source == *q.source);
  };
  std::vector<Key> keys;
  if (q.covering) {
    // At most one route per length covers it: probe them instead of scanning.
    for (int len = 0; len <= q.covering->len(); ++len) {
      if (!rib.HasLength(q.family, len)) continue;
      const Prefix p = *Prefix::Make(q.covering->addr(), len);
      if (auto c = rib.Best(p); c && wanted(p, *c)) keys.push_back(to_key(p));
    }
  } else {
    rib.ForEach(q.family, [&](const Prefix& p, const RibCand& c) {
      if (wanted(p, c)) keys.push_back(to_key(p));
    });
  }
  size_t done = 0;
  for (size_t chunk = 128; done < keys.size(); chunk *= 2) {
    const auto begin = keys.begin() + static_cast<ptrdiff_t>(done);
    const auto end = keys.begin() + static_cast<ptrdiff_t>(std::min(keys.size(), done + chunk));
    std::nth_element(begin, end, keys.end());
    std::sort(begin, end);
    for (auto it = begin; it != end; ++it) {
      const Prefix p = to_prefix(*it);
      if (!fn(Info(p, *rib.Best(p), true))) return;
    }
    done = static_cast<size_t>(end - keys.begin());
  }
}

// --- Fib ------------------------------------------------------------------------

RibAnswer Fib::Lookup(const IpAddr& dst) const {
  impl_->Settle();
  const Impl& m = *impl_;
  RibAnswer ans;
  std::optional<RibCand> best;
  if (dst.is_v4()) {
    auto hit = m.sram.Match(dst.v4());
    if (hit) {
      ans.matched = Prefix::V4(dst.v4(), hit->second);
      best = m.rib.Best(*ans.matched);
    }
  } else if (auto hit = m.MatchV6(dst)) {
    ans.matched = hit->first;
    best = hit->second;
  }
  if (!best) return ans;
  const auto a = m.resolver.AnswerOf(best->nhg);
  if (a.nh < 0) {
    ans.reason = a.reason;
    ans.why = m.WhyGroup(best->nhg, a.reason);
    return ans;
  }
  const NextHop nh = m.nht.Get(static_cast<NhId>(a.nh));
  if (nh.drop()) {
    // Dropped in the card: no neighbour, nothing leaves.
  } else if (const Neighbor* n = m.resolver.FindNeighbor(nh.connected() ? dst : *nh.gateway, nh.port)) {
    ans.neighbor = *n;
  }
  ans.reason = m.resolver.GroupPuntReason(best->nhg);
  ans.why = m.WhyGroup(best->nhg, ans.reason);
  if (ans.reason == PuntReason::kNone && !dst.is_v4() && m.TcamCodeOf(dst) != m.resolver.CodeOf(nh)) {
    const PuntReason why = m.tcam6.compiler().StateOf(*ans.matched).reason;
    ans.reason = why != PuntReason::kNone ? why : PuntReason::kTcamFull;
  }
  if (ans.reason == PuntReason::kNone) ans.path = nh;
  return ans;
}

std::vector<RouteInfo> Fib::GetRoute(const Prefix& prefix) const {
  impl_->Settle();
  std::vector<RouteInfo> out;
  bool first = true;
  for (const auto& c : impl_->rib.Candidates(prefix)) {
    out.push_back(impl_->Info(prefix, c, first));
    out.back().why = impl_->WhyGroup(c.nhg, out.back().reason);
    first = false;
  }
  return out;
}

std::optional<Fib::SourceState> Fib::StateOf(const Prefix& prefix, RouteSource source) const {
  return StatesOf({prefix}, source)[0];
}

std::vector<std::optional<Fib::SourceState>> Fib::StatesOf(const std::vector<Prefix>& prefixes,
                                                           RouteSource source) const {
  impl_->Settle();
  // IPv6 states come from the TCAM compiler's trie: asked in ascending order,
  // each walks from the previous one's path instead of from the root.
  std::vector<uint32_t> order(prefixes.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return prefixes[a] < prefixes[b]; });
  std::vector<std::optional<SourceState>> out(prefixes.size());
  std::vector<int> walk;
  for (const uint32_t i : order) {
    const auto found = impl_->rib.CandidateOf(prefixes[i], source);
    if (!found) continue;
    out[i] = SourceState{found->second, impl_->StateInfo(prefixes[i], found->first, found->second, &walk).state};
  }
  return out;
}

std::optional<Route> Fib::FindRoute(const Prefix& prefix, RouteSource source) const {
  impl_->Settle();
  for (const auto& c : impl_->rib.Candidates(prefix)) {
    if (c.source == source) return Route{prefix, c.source, c.distance, impl_->nht.PathsAsNextHops(c.nhg)};
  }
  return std::nullopt;
}

void Fib::ForEachRoute(Family family, const std::function<bool(const RouteInfo&)>& fn) const {
  RouteQuery q;
  q.family = family;
  ForEachRoute(q, fn);
}

void Fib::ForEachRoute(const RouteQuery& q, const std::function<bool(const RouteInfo&)>& fn) const {
  impl_->Settle();
  if (q.family == Family::kV4) {
    // (addr << 8 | len) sorts like Prefix and keeps a full table's list small.
    impl_->List<uint64_t>(
        q, [](const Prefix& p) { return uint64_t{p.addr().v4()} << 8 | static_cast<uint64_t>(p.len()); },
        [](uint64_t k) { return Prefix::V4(static_cast<uint32_t>(k >> 8), static_cast<int>(k & 0xFF)); }, fn);
  } else {
    impl_->List<std::pair<U128, int>>(
        q, [](const Prefix& p) { return std::pair{p.addr().v6(), p.len()}; },
        [](const std::pair<U128, int>& k) { return Prefix::V6(k.first, k.second); }, fn);
  }
}

std::vector<Neighbor> Fib::Neighbors() const {
  std::vector<Neighbor> out;
  for (const auto& [a, rec] : impl_->resolver.neighbors()) out.push_back(rec.n);
  std::sort(out.begin(), out.end(),
            [](const Neighbor& x, const Neighbor& y) { return x.addr != y.addr ? x.addr < y.addr : x.port < y.port; });
  return out;
}

std::vector<SlotInfo> Fib::Slots() const {
  std::vector<SlotInfo> out;
  const auto& m = *impl_;
  const auto& owners = m.resolver.owners();
  for (size_t i = 0; i < owners.size(); ++i) {
    SlotInfo s;
    s.code = static_cast<int>(i + 1);
    s.adjacency = owners[i];
    if (owners[i]) s.next_hops = m.resolver.NextHopsOf(s.code);
    if (!s.next_hops.empty()) s.owner = s.next_hops.front();
    s.entry = m.image.nexthop[i + 1];
    s.weight = m.resolver.owner_weight(s.code);
    out.push_back(s);
  }
  return out;
}

}  // namespace fibnic
