#include "fib/resolver.h"

#include <algorithm>
#include <set>

#include "fib/slot_policy.h"

namespace fibnic {
namespace {

// An entry the previous run kept for an adjacency whose next-hops all
// failed: a gateway's MAC and port, VALID=0.
bool Kept(const regs::NexthopEntry& e) {
  return e != regs::NexthopEntry{} && !e.valid() && !e.connected() && !e.drop();
}

}  // namespace

Resolver::Resolver(const FibConfig& config, const NexthopTable& nht)
    : config_(config),
      nht_(nht),
      owners_(static_cast<size_t>(config.caps.slots())),
      valid_(static_cast<size_t>(config.caps.slots()), false) {}

void Resolver::UpsertNeighbor(const Neighbor& n) { neigh_[NeighborKey{n.addr, n.port}] = NeighborRec{n, ++touch_clock_}; }

void Resolver::DeleteNeighbor(const IpAddr& addr, PortId port) { neigh_.erase(NeighborKey{addr, port}); }

const Neighbor* Resolver::FindNeighbor(const IpAddr& addr, PortId port) const {
  auto it = neigh_.find(NeighborKey{addr, port});
  return it == neigh_.end() ? nullptr : &it->second.n;
}

const Neighbor* Resolver::GatewayNeighbor(const NextHop& nh) const {
  const Neighbor* n = FindNeighbor(*nh.gateway, nh.port);
  return n && NeighUsable(n->state) ? n : nullptr;
}

bool Resolver::Unresolved(const NextHop& nh) const {
  const Neighbor* n = FindNeighbor(*nh.gateway, nh.port);
  return !n || (!NeighUsable(n->state) && n->mac == MacAddr{});
}

std::optional<Adjacency> Resolver::CurrentAdjacency(const NextHop& nh) const {
  if (!OnDevicePort(nh)) return std::nullopt;
  if (nh.drop()) return Adjacency::Drop();
  if (nh.connected()) return Adjacency::Connected(nh.port);
  if (const Neighbor* n = GatewayNeighbor(nh)) return Adjacency::Gateway(nh.port, n->mac);
  return std::nullopt;
}

std::optional<Adjacency> Resolver::AdjacencyOf(const NextHop& nh) const {
  if (auto a = CurrentAdjacency(nh)) return a;
  if (auto it = bound_.find(nh); it != bound_.end() && OnDevicePort(nh)) return it->second;
  return std::nullopt;
}

int Resolver::CodeOfAdjacency(const Adjacency& a) const {
  for (size_t i = 0; i < owners_.size(); ++i) {
    if (owners_[i] == a) return static_cast<int>(i + 1);
  }
  return 0;
}

uint8_t Resolver::CodeOf(const NextHop& nh) const {
  if (auto a = CurrentAdjacency(nh)) return static_cast<uint8_t>(CodeOfAdjacency(*a));
  // Unresolved: its last adjacency's code punts it only while that entry is
  // VALID=0; once another next-hop makes it valid, this one's space must not
  // name it (the kernel would not send there either).
  auto it = bound_.find(nh);
  if (it == bound_.end() || !OnDevicePort(nh)) return 0;
  const int c = CodeOfAdjacency(it->second);
  return c != 0 && !valid_[static_cast<size_t>(c - 1)] ? static_cast<uint8_t>(c) : 0;
}

std::string Resolver::Why(const NextHop& nh, PuntReason reason) const {
  const std::string port = " on port " + std::to_string(nh.port);
  switch (reason) {
    case PuntReason::kToHost:
      if (nh.drop()) return "a blackhole, and this device cannot drop (its CAPS2 do not announce DROP)";
      return nh.to_host() ? "the path is the host's (local, unreachable, prohibit or not through a FIBNIC port)"
                          : "port " + std::to_string(nh.port) + " is not a device port";
    case PuntReason::kUnresolved: {
      if (nh.connected() || nh.drop()) return "";
      const Neighbor* n = FindNeighbor(*nh.gateway, nh.port);
      if (!n) return "no neighbour " + nh.gateway->ToString() + port;
      return "neighbour " + nh.gateway->ToString() + port + " is " + NeighStateName(n->state);
    }
    case PuntReason::kNoSlot: {
      auto a = AdjacencyOf(nh);
      if (!a) return "";
      return "adjacency " + a->ToString() + " holds no code (all " + std::to_string(owners_.size()) +
             " held by heavier adjacencies)";
    }
    default:
      return "";
  }
}

Resolver::Answer Resolver::AnswerOf(NhgId g) const {
  const auto& paths = nht_.Paths(g);
  if (paths.size() == 1) {
    if (!OnDevicePort(nht_.Get(paths[0]))) return {-1, PuntReason::kToHost};
    return {paths[0], PuntReason::kNone};
  }
  if (config_.ecmp == EcmpPolicy::kPunt) return {-1, PuntReason::kEcmpPolicy};
  bool any_resolved = false, any_fibnic = false;
  for (NhId id : paths) {
    const NextHop& nh = nht_.Get(id);
    if (!OnDevicePort(nh)) continue;
    any_fibnic = true;
    if (!Resolved(nh)) continue;
    any_resolved = true;
    if (CodeOf(nh) != 0) return {id, PuntReason::kNone};
  }
  if (!any_fibnic) return {-1, PuntReason::kToHost};
  return {-1, any_resolved ? PuntReason::kNoSlot : PuntReason::kUnresolved};
}

PuntReason Resolver::GroupPuntReason(NhgId g) const {
  const Answer a = AnswerOf(g);
  if (a.nh < 0) return a.reason;
  const NextHop& nh = nht_.Get(static_cast<NhId>(a.nh));
  if (!Resolved(nh)) return PuntReason::kUnresolved;
  if (CodeOf(nh) == 0) return PuntReason::kNoSlot;
  return PuntReason::kNone;
}

std::optional<NhId> Resolver::WeightOwner(NhgId g) const {
  const auto& paths = nht_.Paths(g);
  if (paths.size() == 1) return OnDevicePort(nht_.Get(paths[0])) ? std::optional<NhId>(paths[0]) : std::nullopt;
  if (config_.ecmp == EcmpPolicy::kPunt) return std::nullopt;
  for (NhId id : paths) {
    if (Resolved(nht_.Get(id))) return id;
  }
  return std::nullopt;
}

void Resolver::FollowMacChanges() {
  std::set<Adjacency> resolved_now;
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (!nht_.NhLive(id)) continue;
    if (auto a = CurrentAdjacency(nht_.Get(id))) resolved_now.insert(*a);
  }
  for (auto& owner : owners_) {
    if (!owner || owner->connected || owner->drop || resolved_now.count(*owner)) continue;
    // Every live next-hop last bound to it now resolves to one same MAC on
    // its port that holds no code: the code follows (one in-place entry
    // write instead of a retire and a rewrite of all its space).
    std::optional<Adjacency> to;
    bool one = true, any = false;
    for (const auto& [nh, was] : bound_) {
      if (was != *owner) continue;
      const auto id = nht_.Find(nh);
      if (!id || !nht_.NhLive(*id)) continue;
      auto now = CurrentAdjacency(nh);
      if (!now || (to && *now != *to)) {
        one = false;
        break;
      }
      to = now;
      any = true;
    }
    if (any && one && CodeOfAdjacency(*to) == 0) owner = *to;
  }
}

std::vector<bool> Resolver::ValidNow() const {
  std::vector<bool> valid(owners_.size(), false);
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (!nht_.NhLive(id)) continue;
    if (auto a = CurrentAdjacency(nht_.Get(id))) {
      if (const int c = CodeOfAdjacency(*a)) valid[static_cast<size_t>(c - 1)] = true;
    }
  }
  return valid;
}

CommitCodes Resolver::Resolve(const std::vector<GroupWeight>& weights) {
  const int slots = config_.caps.slots();
  const auto owners_before = owners_;  // what the entries hold now
  const std::vector<bool> valid_before = valid_;
  FollowMacChanges();
  const auto owners_followed = owners_;
  // Each live next-hop's adjacency: the one it resolves to, else its last.
  std::map<NextHop, Adjacency> bound;
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (!nht_.NhLive(id)) continue;
    if (auto a = AdjacencyOf(nht_.Get(id))) bound.emplace(nht_.Get(id), *a);
  }
  bound_ = std::move(bound);

  // Weights per adjacency: the /24s and IPv6 routes its next-hops answer.
  std::map<Adjacency, std::pair<uint64_t, uint64_t>> weight;  // (/24s, IPv6 routes)
  for (NhgId g = 1; g < nht_.group_bound() && g < weights.size(); ++g) {
    if (!nht_.GroupLive(g)) continue;
    const GroupWeight& w = weights[g];
    if (w.slash24s == 0 && w.v6_routes == 0) continue;
    if (auto owner = WeightOwner(g)) {
      if (auto a = AdjacencyOf(nht_.Get(*owner))) {
        auto& [w4, w6] = weight[*a];
        w4 += w.slash24s;
        w6 += w.v6_routes;
      }
    }
  }
  const std::vector<SlotCandidate> cands = Candidates(weight);
  std::vector<bool> remembered(size_t(slots) + 1, false);
  for (const auto& [adj, c] : last_code_) remembered[c] = true;
  owners_ = AssignSlots(owners_, cands, config_.slot_hysteresis, std::move(remembered));
  for (int c = 1; c <= slots; ++c) {
    const auto& now = owners_[c - 1];
    if (!now || owners_followed[c - 1] == now) continue;
    std::erase_if(last_code_, [c](const auto& e) { return e.second == c; });
  }
  for (int c = 1; c <= slots; ++c) {
    if (owners_[c - 1]) last_code_[*owners_[c - 1]] = c;
  }
  valid_ = ValidNow();
  owner_weight_.assign(owners_.size(), 0);
  for (int c = 1; c <= slots; ++c) {
    if (!owners_[c - 1]) continue;
    if (auto it = weight.find(*owners_[c - 1]); it != weight.end()) owner_weight_[c - 1] = it->second.first + it->second.second;
  }

  CommitCodes out;
  out.owner_changes.assign(size_t(slots) + 1, false);
  out.retired.assign(size_t(slots) + 1, false);
  out.entry_changes.assign(size_t(slots) + 1, false);
  for (int c = 1; c <= slots; ++c) {
    const auto& was = owners_followed[c - 1];
    const auto& now = owners_[c - 1];
    out.owner_changes[c] = was != now;
    if (was && was != now) out.retired[c] = out.any_retired = true;
    out.entry_changes[c] = owners_before[c - 1] != now || valid_before[c - 1] != valid_[c - 1];
  }
  out.before = std::move(codes_);
  codes_ = CodesNow();
  out.after = codes_;
  // A code whose entry becomes valid for a MAC while some group's space moves
  // off it (a next-hop left behind unresolved, a MAC followed in place by
  // the others): that space still names the code until its words are
  // rewritten, so the code is zeroed everywhere first, as for a new owner.
  std::vector<bool> moving_off(size_t(slots) + 1, false);
  for (NhgId g = 1; g < out.before.group_answer.size(); ++g) {
    const uint8_t b = out.before.GroupCode(g);
    if (b != 0 && out.after.GroupCode(g) != b) moving_off[b] = true;
  }
  for (int c = 1; c <= slots; ++c) {
    if (moving_off[c] && out.entry_changes[c] && valid_[c - 1] && !out.retired[c]) {
      out.retired[c] = out.owner_changes[c] = out.any_retired = true;
    }
  }
  return out;
}

void Resolver::Held::Update(uint64_t w, Time t, std::chrono::milliseconds hold) {
  now = w;
  if (w >= held || t >= until) {
    held = w;
    until = t + hold;
  }
}

// Each adjacency is ranked by its share of what the adjacencies answer in
// IPv4 (/24s) plus its share in IPv6 (routes up to /64). Shares rather than
// counts: a /24 and an IPv6 route are not comparable, but a third of each
// family's space is, so a connected /24 never outranks a neighbour carrying
// hundreds of IPv6 routes, and neither family's slots depend on the other's
// table size.
//
// Held weights: a routing daemon that restarts takes its routes away for
// seconds, and its adjacencies' weights stay as they were until slot_hold
// has passed — but only as much of them as is missing from the table. Space
// that moved to another adjacency (a peer lost and its routes now through a
// backup, a neighbour's new MAC) is not held: the table's total in that
// family did not fall, the adjacency that carries it now ranks by it at once,
// and the one it left frees its code. A slot adopted at a warm start is kept
// for one hold whatever the table does (the previous run may have held it).
std::vector<SlotCandidate> Resolver::Candidates(const std::map<Adjacency, std::pair<uint64_t, uint64_t>>& weight) {
  const Time t = Now();
  std::map<Adjacency, NextHop> first;  // each adjacency's lowest live next-hop (bound_ is ordered)
  for (const auto& [nh, adj] : bound_) first.emplace(adj, nh);
  for (const auto& [adj, w] : weight) held_[adj];
  uint64_t now4 = 0, now6 = 0;
  for (auto& [adj, h] : held_) {
    auto it = weight.find(adj);
    h.v4.Update(it == weight.end() ? 0 : it->second.first, t, config_.slot_hold);
    h.v6.Update(it == weight.end() ? 0 : it->second.second, t, config_.slot_hold);
    if (auto f = first.find(adj); f != first.end()) h.first = f->second;
    now4 += h.v4.now;
    now6 += h.v6.now;
  }
  table4_.Update(now4, t, config_.slot_hold);
  table6_.Update(now6, t, config_.slot_hold);
  const uint64_t missing4 = table4_.held - now4, missing6 = table6_.held - now6;
  // Each adjacency's weight as ranked: what it carries now, plus of its held
  // weight as much as the table misses (all of it while adopted).
  auto ranked = [&](const AdjacencyWeight& h, const Held& f, uint64_t missing) {
    const bool adopted = t < h.adopted_until;
    return f.now + std::min(f.held - f.now, adopted ? f.held : missing);
  };
  uint64_t total4 = 0, total6 = 0;
  for (const auto& [adj, h] : held_) {
    total4 += ranked(h, h.v4, missing4);
    total6 += ranked(h, h.v6, missing6);
  }
  std::set<Adjacency> resolved;
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (!nht_.NhLive(id)) continue;
    if (auto a = CurrentAdjacency(nht_.Get(id))) resolved.insert(*a);
  }
  const std::set<Adjacency> pinned = PinnedAdjacencies();
  auto candidate = [&](const Adjacency& adj, const NextHop& nh) {
    SlotCandidate c;
    c.adj = adj;
    c.resolved = resolved.count(adj) != 0;
    c.pinned = pinned.count(adj) != 0;
    if (auto l = last_code_.find(adj); l != last_code_.end()) c.last_code = l->second;
    c.first = nh;
    return c;
  };
  std::vector<SlotCandidate> cands;
  for (auto it = held_.begin(); it != held_.end();) {
    const auto& [adj, h] = *it;
    if (h.v4.held == 0 && h.v6.held == 0) {
      it = held_.erase(it);  // carries nothing and holds nothing
      continue;
    }
    SlotCandidate c = candidate(adj, h.first);
    c.kept = t < h.adopted_until;
    const uint64_t w4 = ranked(h, h.v4, missing4), w6 = ranked(h, h.v6, missing6);
    c.weight = (total4 ? static_cast<double>(w4) / static_cast<double>(total4) : 0.0) +
               (total6 ? static_cast<double>(w6) / static_cast<double>(total6) : 0.0);
    c.carries = h.v4.now + h.v6.now > 0 || c.pinned;
    cands.push_back(c);
    ++it;
  }
  for (const Adjacency& adj : pinned) {
    if (held_.count(adj) || !resolved.count(adj)) continue;
    SlotCandidate c = candidate(adj, first.at(adj));
    c.carries = true;
    cands.push_back(c);
  }
  return cands;
}

// The adjacencies of the live next-hops through a pinned gateway.
std::set<Adjacency> Resolver::PinnedAdjacencies() const {
  std::set<Adjacency> out;
  if (config_.slot_pins.empty()) return out;
  for (const auto& [nh, adj] : bound_) {
    if (nh.gateway && std::find(config_.slot_pins.begin(), config_.slot_pins.end(), *nh.gateway) !=
                          config_.slot_pins.end()) {
      out.insert(adj);
    }
  }
  return out;
}

std::optional<Resolver::Time> Resolver::NextReview() const {
  std::optional<Time> out;
  const Time t = Now();
  for (const auto& [adj, h] : held_) {
    // An adopted owner is judged again once its first hold ends.
    if (t < h.adopted_until && (!out || h.adopted_until < *out)) out = h.adopted_until;
    for (const Held* f : {&h.v4, &h.v6}) {
      if (f->held > f->now && (!out || f->until < *out)) out = f->until;
    }
  }
  for (const Held* f : {&table4_, &table6_}) {
    if (f->held > f->now && (!out || f->until < *out)) out = f->until;
  }
  return out;
}

// Each live group's answer and each next-hop's code under the current owners.
GroupCodes Resolver::CodesNow() const {
  GroupCodes now;
  now.nh_code.assign(nht_.nh_bound(), 0);
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (nht_.NhLive(id)) now.nh_code[id] = CodeOf(nht_.Get(id));
  }
  now.group_answer.assign(nht_.group_bound(), -1);
  for (NhgId g = 1; g < nht_.group_bound(); ++g) {
    if (nht_.GroupLive(g)) now.group_answer[g] = AnswerOf(g).nh;
  }
  return now;
}

std::optional<regs::NexthopEntry> Resolver::EntryFor(int code, const regs::NexthopEntry& current) const {
  (void)current;  // an adjacency's entry is its own (MAC, port), valid or not
  const auto& owner = owners_[static_cast<size_t>(code - 1)];
  if (!owner) return std::nullopt;
  regs::NexthopEntry e;
  if (owner->drop) {
    // Port and MAC zero; like an unresolved owner, VALID=0 while no live
    // next-hop drops (its weight held): its space then punts.
    e.flags = valid_[static_cast<size_t>(code - 1)] ? regs::kNexthopValid | regs::kNexthopDrop : regs::kNexthopDrop;
    return e;
  }
  e.port = owner->port;
  if (owner->connected) {
    e.flags = regs::kNexthopValid | regs::kNexthopConnected;
    return e;
  }
  e.dst_mac = owner->mac;
  // Unresolved adjacency keeps its slot: same fields, VALID=0.
  if (valid_[static_cast<size_t>(code - 1)]) e.flags = regs::kNexthopValid;
  return e;
}

std::vector<NhgId> Resolver::SinglePathGroups() const {
  std::vector<NhgId> single(nht_.nh_bound(), kNoGroup);
  for (NhgId g = 1; g < nht_.group_bound(); ++g) {
    if (nht_.GroupLive(g) && nht_.Paths(g).size() == 1) single[nht_.Paths(g)[0]] = g;
  }
  return single;
}

Resolver::KeptEntryQuestion Resolver::AskAboutKeptEntries(const std::vector<regs::NexthopEntry>& device_nexthop) const {
  KeptEntryQuestion q;
  std::set<PortId> ports;  // with a kept entry
  for (int c = 1; c <= config_.caps.slots() && static_cast<size_t>(c) < device_nexthop.size(); ++c) {
    const regs::NexthopEntry& e = device_nexthop[static_cast<size_t>(c)];
    if (!Kept(e) || e.port >= config_.caps.ports) continue;
    q.codes.insert(c);
    ports.insert(e.port);
  }
  if (q.codes.empty()) return q;
  const std::vector<NhgId> single = SinglePathGroups();
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (!nht_.NhLive(id) || single[id] == kNoGroup) continue;
    const NextHop& nh = nht_.Get(id);
    if (OnDevicePort(nh) && !nh.connected() && ports.count(nh.port) && Unresolved(nh)) q.groups.insert(single[id]);
  }
  return q;
}

int Resolver::Adopt(const std::vector<regs::NexthopEntry>& device_nexthop, const ShownCodes& shown) {
  const std::vector<NhgId> single = SinglePathGroups();
  // Every adopted slot is kept for one hold as the previous run may have
  // held it higher than this run can see: neither freed nor displaced
  // (SlotCandidate::kept), ranked by what its adjacency carries (at least a
  // nominal 1). So an adjacency whose weight had
  // fallen (its routes gone, or no longer best, in a routing daemon's
  // restart) keeps its code through a restart of fibnicd in the middle of it,
  // and the restart writes nothing. Without a hold, an entry no live
  // next-hop names (a gateway's kept VALID=0, a connected port's, the drop
  // entry) is free.
  auto hold = [this](const Adjacency& adj) {
    if (config_.slot_hold.count() == 0) return;
    AdjacencyWeight& w = held_[adj];
    w.v4.held = 1;
    w.v4.until = w.adopted_until = Now() + config_.slot_hold;
  };
  int adopted = 0;
  for (int c = 1; c <= config_.caps.slots() && static_cast<size_t>(c) < device_nexthop.size(); ++c) {
    const regs::NexthopEntry& e = device_nexthop[static_cast<size_t>(c)];
    if (e == regs::NexthopEntry{} || e.port >= config_.caps.ports) continue;
    if (e.drop()) {
      if (!config_.caps.drop || CodeOfAdjacency(Adjacency::Drop()) != 0) continue;
      bool named = false;
      for (NhId id = 0; id < nht_.nh_bound() && !named; ++id) named = nht_.NhLive(id) && nht_.Get(id).drop();
      if (!named && config_.slot_hold.count() == 0) continue;
      hold(Adjacency::Drop());
      owners_[static_cast<size_t>(c - 1)] = Adjacency::Drop();
      ++adopted;
      continue;
    }
    const Adjacency adj = e.connected() ? Adjacency::Connected(e.port) : Adjacency::Gateway(e.port, e.dst_mac);
    if (CodeOfAdjacency(adj) != 0) continue;  // a lower code names it already
    // Its next-hops: connected on the port, gateways whose neighbour on the
    // port (any state) has the MAC, and for a kept entry the failed gateways
    // the device shows it held; they are bound to it from now on.
    bool named = false;
    for (NhId id = 0; id < nht_.nh_bound(); ++id) {
      if (!nht_.NhLive(id)) continue;
      const NextHop& nh = nht_.Get(id);
      if (!OnDevicePort(nh) || nh.drop() || nh.port != e.port || nh.connected() != adj.connected) continue;
      if (!nh.connected()) {
        const Neighbor* n = FindNeighbor(*nh.gateway, nh.port);
        const bool held = Kept(e) && Unresolved(nh) && shown.count({single[id], c});
        // A neighbour without a MAC (a FAILED one) names no entry by it.
        const bool same_mac = n && n->mac == e.dst_mac && (n->mac != MacAddr{} || NeighUsable(n->state));
        if (!held && !same_mac) continue;
        bound_[nh] = adj;
      }
      named = true;
    }
    if (!named && !((Kept(e) || e.connected()) && config_.slot_hold.count() != 0)) continue;
    hold(adj);
    owners_[static_cast<size_t>(c - 1)] = adj;
    ++adopted;
  }
  valid_ = ValidNow();
  return adopted;
}

std::vector<NextHop> Resolver::NextHopsOf(int code) const {
  std::vector<NextHop> out;
  for (NhId id = 0; id < nht_.nh_bound(); ++id) {
    if (nht_.NhLive(id) && CodeOf(nht_.Get(id)) == code) out.push_back(nht_.Get(id));
  }
  std::sort(out.begin(), out.end());
  return out;
}

uint64_t Resolver::owner_weight(int code) const {
  const size_t i = static_cast<size_t>(code - 1);
  return i < owner_weight_.size() ? owner_weight_[i] : 0;
}

int Resolver::slots_used() const {
  return static_cast<int>(std::count_if(owners_.begin(), owners_.end(), [](const auto& o) { return o.has_value(); }));
}

}  // namespace fibnic
