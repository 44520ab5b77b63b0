#include "fib/resolver.h"

#include <algorithm>

#include "fib/slot_policy.h"

namespace fibnic {

Resolver::Resolver(const FibConfig& config, const NexthopTable& nht)
    : config_(config), nht_(nht), owners_(static_cast<size_t>(config.caps.slots())) {}

void Resolver::UpsertNeighbor(const Neighbor& n) { neigh_[n.addr] = NeighborRec{n, ++touch_clock_}; }

void Resolver::DeleteNeighbor(const IpAddr& addr) { neigh_.erase(addr); }

const Neighbor* Resolver::FindNeighbor(const IpAddr& addr) const {
  auto it = neigh_.find(addr);
  return it == neigh_.end() ? nullptr : &it->second.n;
}

const Neighbor* Resolver::GatewayNeighbor(const NextHop& nh) const {
  const Neighbor* n = FindNeighbor(*nh.gateway);
  return n && NeighUsable(n->state) && n->port == nh.port ? n : nullptr;
}

uint8_t Resolver::CodeOf(const NextHop& nh) const {
  for (size_t i = 0; i < owners_.size(); ++i) {
    if (owners_[i] == nh) return static_cast<uint8_t>(i + 1);
  }
  return 0;
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

CommitCodes Resolver::Resolve(const std::vector<GroupWeight>& weights) {
  const int slots = config_.caps.slots();
  // Weights per next-hop. IPv4 /24s rank first; IPv6 routes (up to /64) only
  // order next-hops with equal IPv4 space, so IPv6 takes the slots IPv4 does
  // not need (docs/fib.md).
  std::unordered_map<NhId, uint64_t> weight, weight6;
  for (NhgId g = 1; g < nht_.group_bound() && g < weights.size(); ++g) {
    if (!nht_.GroupLive(g)) continue;
    const GroupWeight& w = weights[g];
    if (w.slash24s == 0 && w.v6_routes == 0) continue;
    if (auto owner = WeightOwner(g)) {
      if (w.slash24s) weight[*owner] += w.slash24s;
      if (w.v6_routes) weight6[*owner] += w.v6_routes;
    }
  }
  constexpr int kV6Bits = 24;  // 2^24 /24s << 24 stays exact in the policy's double arithmetic
  constexpr uint64_t kV6Cap = (uint64_t{1} << (kV6Bits - 1)) - 1;  // any IPv4 weight beats it by > hysteresis
  std::vector<SlotCandidate> cands;
  for (const auto& [id, w] : weight) {
    auto it = weight6.find(id);
    const uint64_t w6 = it == weight6.end() ? 0 : std::min(it->second, kV6Cap);
    cands.push_back({nht_.Get(id), (w << kV6Bits) + w6, Resolved(nht_.Get(id))});
  }
  for (const auto& [id, w6] : weight6) {
    if (!weight.count(id)) cands.push_back({nht_.Get(id), std::min(w6, kV6Cap), Resolved(nht_.Get(id))});
  }
  const auto new_owners = AssignSlots(owners_, cands, config_.slot_hysteresis);

  CommitCodes out;
  out.owner_changes.assign(size_t(slots) + 1, false);
  out.retired.assign(size_t(slots) + 1, false);
  for (int c = 1; c <= slots; ++c) {
    const auto& was = owners_[c - 1];
    out.owner_changes[c] = was != new_owners[c - 1];
    if (was && was != new_owners[c - 1]) out.retired[c] = out.any_retired = true;
  }
  owners_ = new_owners;
  owner_weight_.assign(owners_.size(), 0);
  for (int c = 1; c <= slots; ++c) {
    if (!owners_[c - 1]) continue;
    if (auto id = nht_.Find(*owners_[c - 1])) {
      if (auto it = weight.find(*id); it != weight.end()) owner_weight_[c - 1] += it->second;
      if (auto it = weight6.find(*id); it != weight6.end()) owner_weight_[c - 1] += it->second;
    }
  }
  out.before = std::move(codes_);
  codes_ = CodesNow();
  out.after = codes_;
  return out;
}

// Each live group's answer and each next-hop's code under the current owners.
GroupCodes Resolver::CodesNow() const {
  GroupCodes now;
  now.nh_code.assign(nht_.nh_bound(), 0);
  for (size_t i = 0; i < owners_.size(); ++i) {
    if (!owners_[i]) continue;
    if (auto id = nht_.Find(*owners_[i])) now.nh_code[*id] = static_cast<uint8_t>(i + 1);
  }
  now.group_answer.assign(nht_.group_bound(), -1);
  for (NhgId g = 1; g < nht_.group_bound(); ++g) {
    if (nht_.GroupLive(g)) now.group_answer[g] = AnswerOf(g).nh;
  }
  return now;
}

std::optional<regs::NexthopEntry> Resolver::EntryFor(int code, const regs::NexthopEntry& current) const {
  const auto& owner = owners_[static_cast<size_t>(code - 1)];
  if (!owner) return std::nullopt;
  const NextHop& nh = *owner;
  regs::NexthopEntry e;
  e.port = nh.port;
  if (nh.connected()) {
    e.flags = regs::kNexthopValid | regs::kNexthopConnected;
    return e;
  }
  if (const Neighbor* n = GatewayNeighbor(nh)) {
    e.dst_mac = n->mac;
    e.flags = regs::kNexthopValid;
  } else {
    // Unresolved owner keeps its slot: same fields, VALID=0.
    e.dst_mac = current.port == nh.port ? current.dst_mac : MacAddr{};
  }
  return e;
}

int Resolver::Adopt(const std::vector<regs::NexthopEntry>& device_nexthop) {
  auto describes = [&](const NextHop& nh, const regs::NexthopEntry& e) {
    if (!OnDevicePort(nh) || nh.port != e.port) return false;
    if (nh.connected()) return e.connected();
    if (e.connected()) return false;
    const Neighbor* n = FindNeighbor(*nh.gateway);
    return n && n->port == e.port && n->mac == e.dst_mac;
  };
  int adopted = 0;
  for (int c = 1; c <= config_.caps.slots() && static_cast<size_t>(c) < device_nexthop.size(); ++c) {
    const regs::NexthopEntry& e = device_nexthop[static_cast<size_t>(c)];
    if (e == regs::NexthopEntry{}) continue;
    std::optional<NextHop> pick;
    for (NhId id = 0; id < nht_.nh_bound(); ++id) {
      if (!nht_.NhLive(id)) continue;
      const NextHop& nh = nht_.Get(id);
      if (!describes(nh, e) || CodeOf(nh) != 0 || (pick && !(nh < *pick))) continue;
      pick = nh;
    }
    if (!pick) continue;
    owners_[static_cast<size_t>(c - 1)] = pick;
    ++adopted;
  }
  return adopted;
}

uint64_t Resolver::owner_weight(int code) const {
  const size_t i = static_cast<size_t>(code - 1);
  return i < owner_weight_.size() ? owner_weight_[i] : 0;
}

int Resolver::slots_used() const {
  return static_cast<int>(std::count_if(owners_.begin(), owners_.end(), [](const auto& o) { return o.has_value(); }));
}

}  // namespace fibnic
