#include "fib/fib.h"

#include <malloc.h>

#include <algorithm>
#include <array>
#include <unordered_map>

#include "fib/martians.h"
#include "fib/neigh_cam.h"
#include "rib/nexthop_table.h"
#include "rib/rib.h"
#include "fib/slot_policy.h"
#include "fib/sram4/sram4_compiler.h"
#include "fib/tcam6/tcam6_compiler.h"

namespace fibnic {
struct Fib::Impl : public RibSink {
  struct NeighRec {
    Neighbor n;
    uint64_t touch = 0;
  };
  // What the hardware should do for a group: use next-hop `nh` (-1 = punt, why).
  struct Answer {
    int64_t nh = -1;
    PuntReason reason = PuntReason::kNone;
  };

  struct PendingV4 {
    uint32_t addr = 0;
    uint8_t len = 0;
    bool erase = false;  // delete cand.source's route
    RibCand cand;
  };

  explicit Impl(const FibConfig& c)
      : cfg(c), image(c.caps), tcam6(c.caps.tcam_entries), owners(static_cast<size_t>(c.caps.slots())) {
    for (const Prefix& m : MartianPrefixesV6()) tcam6.Upsert(m, kMartianPunt);
  }
  // Routes in a martian range (fib/martians.h) reach the TCAM with code 0.
  static constexpr Tcam6Route kMartianPunt{0, PuntReason::kToHost, 1};

  // --- RibSink ----------------------------------------------------------------
  void UpsertRoute(const Route& route) override {
    // Canonical paths (sorted, unique, never empty); copied only when the
    // caller's are not already canonical, the common case in a table load.
    const std::vector<NextHop>* paths = &route.paths;
    std::vector<NextHop> fixed;
    if (route.paths.empty() || !std::is_sorted(route.paths.begin(), route.paths.end()) ||
        std::adjacent_find(route.paths.begin(), route.paths.end()) != route.paths.end()) {
      fixed = route.paths;
      std::sort(fixed.begin(), fixed.end());
      fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
      // A route without paths is still a route: the host decides, the hardware punts.
      if (fixed.empty()) fixed.push_back(NextHop::ToHost());
      paths = &fixed;
    }
    const NhgId g = nht.Acquire(*paths);
    const RibCand cand{route.source, route.distance, g};
    if (route.prefix.family() == Family::kV4) {
      pending_v4.push_back({route.prefix.addr().v4(), static_cast<uint8_t>(route.prefix.len()), false, cand});
      return;
    }
    Apply(route.prefix, rib.Upsert(route.prefix, cand));
  }

  void DeleteRoute(const Prefix& prefix, RouteSource source) override {
    if (prefix.family() == Family::kV4) {
      pending_v4.push_back({prefix.addr().v4(), static_cast<uint8_t>(prefix.len()), true, RibCand{source, 0, kNoGroup}});
      return;
    }
    Settle();
    Apply(prefix, rib.Erase(prefix, source));
  }

  // IPv4 upserts and deletes wait in pending_v4 until anything reads or
  // commits; a large batch (a table load or flush) then goes into the RIB
  // with its slots prefetched a few routes ahead, in arrival order (address
  // order for a sorted table, so the /24 cells are painted sequentially).
  // Same end state as one by one.
  void Settle() {
    if (pending_v4.empty()) return;
    constexpr size_t kAhead = 16;  // routes between a slot's prefetch and its use
    const size_t n = pending_v4.size();
    rib.ReserveV4(static_cast<size_t>(
        std::count_if(pending_v4.begin(), pending_v4.end(), [](const PendingV4& it) { return !it.erase; })));
    for (size_t k = 0; k < n; ++k) {
      if (k + kAhead < n) rib.PrefetchV4(pending_v4[k + kAhead].addr, pending_v4[k + kAhead].len);
      const auto& it = pending_v4[k];
      ApplyV4(it.addr, it.len, it.erase ? rib.EraseV4(it.addr, it.len, it.cand.source) : rib.UpsertV4(it.addr, it.len, it.cand));
    }
    if (n > kKeepScratch) {
      std::vector<PendingV4>().swap(pending_v4);
      trim_heap = true;
    } else {
      pending_v4.clear();  // a small queue keeps its capacity for the next batch
    }
  }

  // Big scratch (a table load's queue, 14 MB; its delta, 18 MB; the IPv6
  // change list) can stay in malloc's heap once glibc has raised its mmap
  // threshold; Commit() gives it back to the system at its end (its own
  // scratch) and at its start (the previous commit's delta).
  static constexpr size_t kKeepScratch = 4096;  // entries
  bool trim_heap = false;
  void TrimHeap() {
    if (!trim_heap) return;
    malloc_trim(0);
    trim_heap = false;
  }

  void UpsertNeighbor(const Neighbor& n) override {
    neigh[n.addr] = NeighRec{n, ++touch_clock};
    neigh_changed = true;
  }

  void DeleteNeighbor(const IpAddr& addr) override { neigh_changed |= neigh.erase(addr) > 0; }

  // A best-route change reaches the compilers, then the dropped candidate's
  // group reference is released (after no /24 can refer to it any more).
  void Apply(const Prefix& p, const RibChange& ch) {
    if (p.family() == Family::kV4) {
      ApplyV4(p.addr().v4(), static_cast<uint8_t>(p.len()), ch);
      return;
    }
    if (ch.best_changed()) {
      const bool fits = p.len() <= 64;  // only these can be answered by the TCAM
      if (ch.old_best != kNoGroup) {
        V6Use& u = V6Count(ch.old_best);
        --u.routes;
        u.short_routes -= fits;
      }
      if (ch.new_best != kNoGroup) {
        V6Use& u = V6Count(ch.new_best);
        ++u.routes;
        u.short_routes += fits;
      }
      v6_dirty.push_back(V6Key::Of(p, kNoGroup));
      v6_changed = true;
    }
    if (ch.dropped != kNoGroup) nht.Release(ch.dropped);
  }

  struct V6Use {
    uint32_t routes = 0;        // IPv6 best routes using the group
    uint32_t short_routes = 0;  // ... of them up to /64
    int16_t pushed = -1;        // the code its routes hold in tcam6 (-1: none there)
  };
  V6Use& V6Count(NhgId g) {
    if (v6_count.size() <= g) v6_count.resize(g + 1);
    return v6_count[g];
  }

  void ApplyV4(uint32_t a, uint8_t len, const RibChange& ch) {
    if (ch.best_changed()) PaintV4(a, len, ch.new_best);
    if (ch.dropped != kNoGroup) nht.Release(ch.dropped);
  }

  void PaintV4(uint32_t a, uint8_t len, NhgId best) {
    if (len > 24) {
      if (best != kNoGroup) {
        sram.SetLonger(a, len, best);
      } else {
        sram.RemoveLonger(a, len);
      }
      return;
    }
    if (best != kNoGroup) {
      sram.SetShort(a, len, best);
      return;
    }
    if (auto parent = rib.ParentV4(a, len)) {
      sram.RemoveShort(a, len, parent->second.nhg, parent->first);
    } else {
      sram.RemoveShort(a, len, kNoGroup, -1);
    }
  }

  // --- resolution, answers, slots -----------------------------------------------
  bool PortOk(const NextHop& nh) const { return !nh.to_host() && nh.port < cfg.caps.ports; }

  // The neighbour that resolves a gateway next-hop (usable, on the path's port).
  const Neighbor* GatewayNeighbor(const NextHop& nh) const {
    auto it = neigh.find(*nh.gateway);
    if (it == neigh.end() || !NeighUsable(it->second.n.state) || it->second.n.port != nh.port) return nullptr;
    return &it->second.n;
  }

  bool Resolved(const NextHop& nh) const { return PortOk(nh) && (nh.connected() || GatewayNeighbor(nh)); }

  uint8_t SlotOf(const NextHop& nh) const {
    for (size_t i = 0; i < owners.size(); ++i) {
      if (owners[i] == nh) return static_cast<uint8_t>(i + 1);
    }
    return 0;
  }

  Answer AnswerOf(NhgId g) const {
    const auto& paths = nht.Paths(g);
    if (paths.size() == 1) {
      const NextHop& nh = nht.Get(paths[0]);
      if (!PortOk(nh)) return {-1, PuntReason::kToHost};
      return {paths[0], PuntReason::kNone};
    }
    if (cfg.ecmp == EcmpPolicy::kPunt) return {-1, PuntReason::kEcmpPolicy};
    bool any_resolved = false, any_fibnic = false;
    for (NhId id : paths) {
      const NextHop& nh = nht.Get(id);
      if (!PortOk(nh)) continue;
      any_fibnic = true;
      if (!Resolved(nh)) continue;
      any_resolved = true;
      if (SlotOf(nh) != 0) return {id, PuntReason::kNone};
    }
    if (!any_fibnic) return {-1, PuntReason::kToHost};
    return {-1, any_resolved ? PuntReason::kNoSlot : PuntReason::kUnresolved};
  }

  // Why a group's space punts in hardware now (kNone = it forwards).
  PuntReason GroupPuntReason(NhgId g) const {
    const Answer a = AnswerOf(g);
    if (a.nh < 0) return a.reason;
    const NextHop& nh = nht.Get(static_cast<NhId>(a.nh));
    if (!Resolved(nh)) return PuntReason::kUnresolved;
    if (SlotOf(nh) == 0) return PuntReason::kNoSlot;
    return PuntReason::kNone;
  }

  // The next-hop a group's address space is credited to when slots are chosen.
  std::optional<NhId> WeightOwner(NhgId g) const {
    const auto& paths = nht.Paths(g);
    if (paths.size() == 1) return PortOk(nht.Get(paths[0])) ? std::optional<NhId>(paths[0]) : std::nullopt;
    if (cfg.ecmp == EcmpPolicy::kPunt) return std::nullopt;
    for (NhId id : paths) {
      if (Resolved(nht.Get(id))) return id;
    }
    return std::nullopt;
  }

  regs::NexthopEntry EntryFor(const NextHop& nh, const regs::NexthopEntry& current) const {
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

  std::vector<DeviceDelta> Commit();
  DeviceAdoption AdoptDevice(const DeviceImage& device);
  void SyncTcam6(const std::vector<uint8_t>& nh_code, const std::vector<bool>& fresh, bool two_phase,
                 DeviceDelta& retire, DeviceDelta& main);
  std::optional<std::pair<Prefix, RibCand>> MatchV6(const IpAddr& dst) const;
  uint8_t TcamCodeOf(const IpAddr& dst) const;
  std::vector<CamWant> EligibleNeighbors() const;
  RouteInfo Info(const Prefix& p, const RibCand& c, bool best) const;
  template <typename Key, typename ToKey, typename ToPrefix>
  void List(const RouteQuery& q, ToKey to_key, ToPrefix to_prefix, const std::function<bool(const RouteInfo&)>& fn) const;
  std::array<uint64_t, 3> CountV4() const;

  FibConfig cfg;
  NexthopTable nht;
  Rib rib;
  std::vector<PendingV4> pending_v4;  // see Settle
  Sram4Compiler sram;
  DeviceImage image;
  Tcam6Compiler tcam6;
  // An IPv6 prefix (and a group) in half the bytes of a Prefix: a table load
  // queues 160k of them.
  struct V6Key {
    uint64_t hi = 0, lo = 0;
    uint8_t len = 0;
    NhgId group = kNoGroup;
    static V6Key Of(const Prefix& p, NhgId g) {
      const U128 a = p.addr().v6();
      return {static_cast<uint64_t>(a >> 64), static_cast<uint64_t>(a), static_cast<uint8_t>(p.len()), g};
    }
    Prefix prefix() const { return Prefix::V6((U128{hi} << 64) | lo, len); }
    auto operator<=>(const V6Key&) const = default;
  };
  std::vector<V6Key> v6_dirty;  // IPv6 prefixes whose best route changed since the last commit
  std::unordered_map<IpAddr, NeighRec> neigh;
  uint64_t touch_clock = 0;
  bool neigh_changed = false;
  bool v6_changed = false;
  std::vector<V6Use> v6_count;                 // by group
  std::vector<std::optional<NextHop>> owners;  // by code - 1
  std::vector<uint64_t> owner_weight;          // by code - 1, as of the last commit
  Sram4Compiler::Codes codes;                  // as of the last commit
  std::vector<uint32_t> port_macs_changed;
  std::vector<uint8_t> changed;  // by clamped group id: code moved this commit (kept to avoid reallocation)
  uint64_t commits = 0;
};

std::vector<CamWant> Fib::Impl::EligibleNeighbors() const {
  std::vector<CamWant> out;
  for (const auto& [addr, rec] : neigh) {
    const Neighbor& n = rec.n;
    if (!NeighUsable(n.state)) continue;
    // The CAM keys IPv4 neighbours as ::ffff:a.b.c.d: an IPv6 neighbour with
    // such an address would answer IPv4 lookups of a.b.c.d (issue #14, bug 4).
    if (!addr.is_v4() && (addr.v6() >> 32) == 0xffff) continue;
    NhgId g = kNoGroup;
    if (addr.is_v4()) {
      auto m = sram.Match(addr.v4());
      if (!m || m->first >= Sram4Compiler::kOverflowGroup) continue;
      g = m->first;
    } else {
      auto m = MatchV6(addr);
      if (!m) continue;
      g = m->second.nhg;
    }
    const Answer a = AnswerOf(g);
    if (a.nh < 0) continue;
    const NextHop& nh = nht.Get(static_cast<NhId>(a.nh));
    if (!nh.connected() || SlotOf(nh) == 0) continue;
    // IPv6: only where the TCAM actually answers with that connected code.
    if (!addr.is_v4() && TcamCodeOf(addr) != SlotOf(nh)) continue;
    // The neighbour's own port must be one of the route's connected paths.
    bool on_path = false;
    for (NhId id : nht.Paths(g)) {
      const NextHop& p = nht.Get(id);
      on_path |= p.connected() && p.port == n.port;
    }
    if (on_path && n.port < cfg.caps.ports) out.push_back({addr, n.mac, n.port, rec.touch});
  }
  return out;
}

DeviceAdoption Fib::Impl::AdoptDevice(const DeviceImage& device) {
  Settle();  // live next-hops as after every queued upsert (replaced paths released)
  DeviceAdoption got;
  if (commits > 0 || !(device.caps == cfg.caps)) return got;
  // Which live next-hop a device entry describes; among equal candidates
  // (two gateways behind one MAC) each code takes the lowest not yet taken.
  auto describes = [&](const NextHop& nh, const regs::NexthopEntry& e) {
    if (!PortOk(nh) || nh.port != e.port) return false;
    if (nh.connected()) return e.connected();
    if (e.connected()) return false;
    auto it = neigh.find(*nh.gateway);
    return it != neigh.end() && it->second.n.port == e.port && it->second.n.mac == e.dst_mac;
  };
  for (int c = 1; c <= cfg.caps.slots(); ++c) {
    const regs::NexthopEntry& e = device.nexthop[c];
    if (e == regs::NexthopEntry{}) continue;
    std::optional<NextHop> pick;
    for (NhId id = 0; id < nht.nh_bound(); ++id) {
      if (!nht.NhLive(id)) continue;
      const NextHop& nh = nht.Get(id);
      if (!describes(nh, e) || SlotOf(nh) != 0 || (pick && !(nh < *pick))) continue;
      pick = nh;
    }
    if (!pick) continue;
    owners[c - 1] = pick;
    ++got.slots;
  }
  // CAM entries stay where they are; the first Commit() retires the unwanted.
  image.neigh = device.neigh;
  for (const auto& e : image.neigh) got.neighbors += e.valid();
  return got;
}

std::vector<DeviceDelta> Fib::Impl::Commit() {
  Settle();
  TrimHeap();
  const int slots = cfg.caps.slots();
  // 1. Weights per next-hop and the slot assignment.
  // IPv4 /24s rank first; IPv6 routes (up to /64) only order next-hops with
  // equal IPv4 space, so IPv6 takes the slots IPv4 does not need (docs/fibsync.md).
  std::unordered_map<NhId, uint64_t> weight, weight6;
  for (NhgId g = 1; g < nht.group_bound(); ++g) {
    if (!nht.GroupLive(g)) continue;
    const uint64_t w = g < Sram4Compiler::kOverflowGroup ? sram.Count24(g) : 0;
    const uint64_t w6 = g < v6_count.size() ? v6_count[g].short_routes : 0;
    if (w == 0 && w6 == 0) continue;
    if (auto owner = WeightOwner(g)) {
      if (w) weight[*owner] += w;
      if (w6) weight6[*owner] += w6;
    }
  }
  constexpr int kV6Bits = 24;  // 2^24 /24s << 24 stays exact in the policy's double arithmetic
  constexpr uint64_t kV6Cap = (uint64_t{1} << (kV6Bits - 1)) - 1;  // any IPv4 weight beats it by > hysteresis
  std::vector<SlotCandidate> cands;
  for (const auto& [id, w] : weight) {
    auto it = weight6.find(id);
    const uint64_t w6 = it == weight6.end() ? 0 : std::min(it->second, kV6Cap);
    cands.push_back({nht.Get(id), (w << kV6Bits) + w6, Resolved(nht.Get(id))});
  }
  for (const auto& [id, w6] : weight6) {
    if (!weight.count(id)) cands.push_back({nht.Get(id), std::min(w6, kV6Cap), Resolved(nht.Get(id))});
  }
  const auto new_owners = AssignSlots(owners, cands, cfg.slot_hysteresis);
  std::vector<bool> fresh(size_t(slots) + 1, false);  // code whose owner changes (its entry is not live yet)
  for (int c = 1; c <= slots; ++c) fresh[c] = owners[c - 1] != new_owners[c - 1];

  DeviceDelta retire;  // slots changing owner, CAM indexes being reused
  std::vector<bool> zero(size_t(slots) + 1, false);
  bool any_zero = false;
  for (int c = 1; c <= slots; ++c) {
    if (owners[c - 1] && owners[c - 1] != new_owners[c - 1]) zero[c] = any_zero = true;
  }
  if (any_zero) {
    sram.ZeroCodes(zero, image.sram.data(), cfg.caps.code_bits, retire);
    for (int c = 1; c <= slots; ++c) {
      if (!zero[c]) continue;
      image.nexthop[c] = regs::NexthopEntry{};
      retire.nexthop_retire.push_back({static_cast<uint32_t>(c), image.nexthop[c]});
    }
  }
  owners = new_owners;
  owner_weight.assign(owners.size(), 0);
  for (int c = 1; c <= slots; ++c) {
    if (!owners[c - 1]) continue;
    if (auto id = nht.Find(*owners[c - 1])) {
      if (weight.count(*id)) owner_weight[c - 1] += weight[*id];
      if (weight6.count(*id)) owner_weight[c - 1] += weight6[*id];
    }
  }

  // 2. Each group's answer and code; groups whose code moved repaint their /24s.
  Sram4Compiler::Codes next;
  next.nh_code.assign(nht.nh_bound(), 0);
  for (int c = 1; c <= slots; ++c) {
    if (!owners[c - 1]) continue;
    if (auto id = nht.Find(*owners[c - 1])) next.nh_code[*id] = static_cast<uint8_t>(c);
  }
  next.group_answer.assign(nht.group_bound(), -1);
  changed.resize(size_t{Sram4Compiler::kOverflowGroup} + 1);  // ids >= group_bound stay 0
  std::fill_n(changed.begin(), std::min<size_t>(nht.group_bound(), Sram4Compiler::kOverflowGroup), 0);
  bool any_changed = false;
  for (NhgId g = 1; g < nht.group_bound() && g < Sram4Compiler::kOverflowGroup; ++g) {
    if (nht.GroupLive(g)) next.group_answer[g] = AnswerOf(g).nh;
    const int64_t old_answer = g < codes.group_answer.size() ? codes.group_answer[g] : -1;
    if (next.group_answer[g] != old_answer || next.GroupCode(g) != codes.GroupCode(g)) {
      changed[g] = 1;
      any_changed = true;
    }
  }
  if (any_changed) sram.MarkGroupsDirty(changed);

  // 3. The final delta: entries, CAM, SRAM words.
  DeviceDelta main;
  main.port_macs.swap(port_macs_changed);
  for (int c = 1; c <= slots; ++c) {
    if (!owners[c - 1]) continue;
    const auto e = EntryFor(*owners[c - 1], image.nexthop[c]);
    if (!(e == image.nexthop[c])) {
      image.nexthop[c] = e;
      main.nexthop_activate.push_back({static_cast<uint32_t>(c), e});
    }
  }
  sram.Flush(next, image.sram.data(), cfg.caps.code_bits, main);
  SyncTcam6(next.nh_code, fresh, any_zero, retire, main);
  codes = std::move(next);

  CamPlan cam = PlanCam(image.neigh, EligibleNeighbors());
  for (const auto& w : cam.retire_first) image.neigh[w.index] = w.entry;
  for (const auto& w : cam.activate) image.neigh[w.index] = w.entry;
  for (const auto& w : cam.retire) image.neigh[w.index] = w.entry;
  retire.neigh_retire = std::move(cam.retire_first);
  main.neigh_activate = std::move(cam.activate);
  main.neigh_retire = std::move(cam.retire);

  neigh_changed = v6_changed = false;
  TrimHeap();  // this commit's scratch
  trim_heap = main.sram_words.size() > (size_t{1} << 18);  // the delta: freed by the caller once pushed
  ++commits;
  std::vector<DeviceDelta> out;
  if (!retire.empty()) out.push_back(std::move(retire));
  if (!main.empty()) out.push_back(std::move(main));
  return out;
}

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
  const uint64_t hi = static_cast<uint64_t>(dst.v6() >> 64);
  for (const auto& e : image.tcam) {
    if (e.Matches(hi)) return e.code;
  }
  return 0;
}

// Brings tcam6 to the best IPv6 routes with their groups' codes. A route's
// code changes only with its group's answer or slot, so only routes whose
// best route changed or whose group's code moved are re-upserted. When slots
// change owner (two_phase), the retire delta first takes every TCAM entry off
// the codes being retired or not yet activated (they punt, code 0), before its
// NEXTHOP retires; the final codes follow in the main delta, after activation.
void Fib::Impl::SyncTcam6(const std::vector<uint8_t>& nh_code, const std::vector<bool>& fresh, bool two_phase,
                          DeviceDelta& retire, DeviceDelta& main) {
  auto route_for = [&](NhgId g, bool final_code) {
    const Answer a = AnswerOf(g);
    uint8_t code = a.nh < 0 ? 0 : nh_code[static_cast<size_t>(a.nh)];
    if (!final_code && fresh[code]) code = 0;
    if (code != 0) return Tcam6Route{code, PuntReason::kNone, 1};
    const PuntReason why = GroupPuntReason(g);
    return Tcam6Route{0, why != PuntReason::kNone ? why : PuntReason::kNoSlot, 1};
  };
  if (v6_count.size() < nht.group_bound()) v6_count.resize(nht.group_bound());
  std::vector<uint8_t> moved(v6_count.size(), 0);  // group: its routes in tcam6 need another code
  bool any_moved = false;
  for (NhgId g = 1; g < v6_count.size(); ++g) {
    V6Use& u = v6_count[g];
    if (u.routes == 0) {
      u.pushed = -1;
      continue;
    }
    if (u.pushed < 0) continue;  // every route of it is in v6_dirty
    const uint8_t fin = route_for(g, true).code, mid = two_phase ? route_for(g, false).code : fin;
    if (fin != u.pushed || mid != u.pushed) moved[g] = any_moved = true;
  }
  if (v6_dirty.empty() && !any_moved) return;

  // (prefix, group) to upsert; kNoGroup = erase. In prefix order: tcam6
  // then walks from one route's trie node to the next instead of from the
  // root for each (a recolour of the real table: ~15 ms instead of ~0.2 s).
  std::vector<V6Key> todo;
  todo.swap(v6_dirty);
  for (V6Key& k : todo) {
    auto best = rib.Best(k.prefix());
    k.group = best ? best->nhg : kNoGroup;
  }
  if (any_moved) {
    rib.ForEach(Family::kV6, [&](const Prefix& p, const RibCand& c) {
      if (moved[c.nhg]) todo.push_back(V6Key::Of(p, c.nhg));
    });
  }
  std::sort(todo.begin(), todo.end());
  todo.erase(std::unique(todo.begin(), todo.end()), todo.end());
  auto push = [&](bool final_code) {
    for (const V6Key& k : todo) {
      const Prefix p = k.prefix();
      const Prefix* martian = MartianV6Containing(p);
      if (k.group == kNoGroup) {
        // A martian range keeps its punt entry when a route of the same prefix goes.
        if (martian && *martian == p) tcam6.Upsert(p, kMartianPunt);
        else tcam6.Erase(p);
      } else {
        tcam6.Upsert(p, martian ? kMartianPunt : route_for(k.group, final_code));
      }
    }
    return tcam6.Commit();
  };
  if (two_phase) retire.tcam = push(false);
  main.tcam = push(true);
  if (todo.capacity() > kKeepScratch) {
    trim_heap = true;  // freed on return
  } else {
    todo.clear();
    todo.swap(v6_dirty);  // a small list keeps its capacity for the next commit
  }
  image.tcam = tcam6.entries();
  for (NhgId g = 1; g < v6_count.size(); ++g) {
    if (v6_count[g].routes) v6_count[g].pushed = route_for(g, true).code;
  }
}

RouteInfo Fib::Impl::Info(const Prefix& p, const RibCand& c, bool best) const {
  RouteInfo info;
  info.route = Route{p, c.source, c.distance, nht.PathsAsNextHops(c.nhg)};
  info.best = best;
  if (!best) {
    info.reason = PuntReason::kNotBest;
    return info;
  }
  if (p.family() == Family::kV6) {
    // Its space punts whatever the TCAM holds: to-host, ECMP policy, no slot,
    // or an unresolved slot owner (entry VALID=0).
    const PuntReason why = GroupPuntReason(c.nhg);
    if (why != PuntReason::kNone) {
      info.reason = why;
      return info;
    }
    const auto st = tcam6.StateOf(p);
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
    const PuntReason why = GroupPuntReason(c.nhg);
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
    const PuntReason why = c.nhg >= Sram4Compiler::kOverflowGroup ? PuntReason::kNoSlot : GroupPuntReason(c.nhg);
    const bool all = info.slash24_punted == info.slash24_total;
    info.state = all ? OffloadState::kPunted : OffloadState::kPartial;
    info.reason = why != PuntReason::kNone && mixed_punts < info.slash24_punted ? why : PuntReason::kMixedSlash24;
  }
  return info;
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

// Offload states of the best IPv4 routes, as Info gives them. A <= /24
// route's state follows from its own /24s (the cells at depth len + 1 in its
// range), so one pass over all 2^24 cells tallies every route at once, where
// Info would walk each route's whole range (a /8 alone is 65536 cells).
std::array<uint64_t, 3> Fib::Impl::CountV4() const {
  std::array<uint64_t, 3> n{};
  auto count = [&](OffloadState s) { ++n[static_cast<int>(s)]; };
  std::array<bool, 16> forwards{};
  for (size_t code = 1; code < forwards.size() && code < image.nexthop.size(); ++code) {
    forwards[code] = image.nexthop[code].valid();
  }
  // Routes nest, so at each length only one route's cells are open at a time:
  // once a cell of another route of that length shows up, the open one is done.
  struct Tally {
    uint32_t first = ~0u;  // the route's first /24
    uint32_t total = 0, punted = 0;
  };
  std::array<Tally, 25> open{};
  uint64_t with_cells = 0, longer = 0;
  auto close = [&](Tally& t) {
    if (t.total == 0) return;
    ++with_cells;
    count(t.punted == 0 ? OffloadState::kOffloaded
                        : t.punted == t.total ? OffloadState::kPunted : OffloadState::kPartial);
    t = Tally{};
  };
  for (uint32_t i = 0; i < Sram4Compiler::kSlash24s; ++i) {
    if ((i & 3) == 0 && sram.EmptyWord(i >> 2)) {  // unrouted space: nothing opens or closes
      i += 3;
      continue;
    }
    const auto cell = sram.cell(i);
    if (cell.has_longer) {
      // Routes longer than /24 are few; Info answers each from its /24's code.
      for (const auto& l : *sram.LongerIn(i)) {
        count(Info(Prefix::V4(i << 8 | l.offset, l.len), RibCand{RouteSource::kStatic, 0, l.group}, true).state);
        ++longer;
      }
    }
    if (cell.len_plus1 == 0) continue;
    const int shift = 25 - cell.len_plus1;
    Tally& t = open[cell.len_plus1 - 1u];
    if (const uint32_t first = i >> shift << shift; first != t.first) {
      close(t);
      t.first = first;
    }
    ++t.total;
    t.punted += !forwards[image.CodeOf24(i)];
  }
  for (Tally& t : open) close(t);
  // Shadowed routes (more-specifics cover all their /24s) punt.
  n[static_cast<int>(OffloadState::kPunted)] += rib.size(Family::kV4) - longer - with_cells;
  return n;
}

// --- Fib ------------------------------------------------------------------------

Fib::Fib(const FibConfig& config) : impl_(std::make_unique<Impl>(config)) {}
Fib::~Fib() = default;

const FibConfig& Fib::config() const { return impl_->cfg; }
void Fib::UpsertRoute(const Route& route) { impl_->UpsertRoute(route); }
void Fib::DeleteRoute(const Prefix& prefix, RouteSource source) { impl_->DeleteRoute(prefix, source); }
void Fib::UpsertNeighbor(const Neighbor& n) { impl_->UpsertNeighbor(n); }
void Fib::DeleteNeighbor(const IpAddr& addr) { impl_->DeleteNeighbor(addr); }
RibSink& Fib::sink() { return *impl_; }
std::vector<DeviceDelta> Fib::Commit() { return impl_->Commit(); }
DeviceAdoption Fib::AdoptDevice(const DeviceImage& device) { return impl_->AdoptDevice(device); }
const DeviceImage& Fib::image() const { return impl_->image; }

void Fib::SetPortMac(PortId port, const MacAddr& mac) {
  auto& img = impl_->image;
  if (port >= img.port_macs.size() || img.port_macs[port] == mac) return;
  img.port_macs[port] = mac;
  impl_->port_macs_changed.push_back(port);
}

// Queries settle pending upserts first (logically const: the answer is the
// same as if every upsert had been applied when it arrived).
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
  const auto a = m.AnswerOf(best->nhg);
  if (a.nh < 0) {
    ans.reason = a.reason;
    return ans;
  }
  const NextHop nh = m.nht.Get(static_cast<NhId>(a.nh));
  auto it = m.neigh.find(nh.connected() ? dst : *nh.gateway);
  if (it != m.neigh.end()) ans.neighbor = it->second.n;
  ans.reason = m.GroupPuntReason(best->nhg);
  if (ans.reason == PuntReason::kNone && !dst.is_v4() && m.TcamCodeOf(dst) != m.SlotOf(nh)) {
    const PuntReason why = m.tcam6.StateOf(*ans.matched).reason;
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
    first = false;
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
  for (const auto& [a, rec] : impl_->neigh) out.push_back(rec.n);
  std::sort(out.begin(), out.end(), [](const Neighbor& x, const Neighbor& y) { return x.addr < y.addr; });
  return out;
}

std::vector<SlotInfo> Fib::Slots() const {
  std::vector<SlotInfo> out;
  const auto& m = *impl_;
  for (size_t i = 0; i < m.owners.size(); ++i) {
    SlotInfo s;
    s.code = static_cast<int>(i + 1);
    s.owner = m.owners[i];
    s.entry = m.image.nexthop[i + 1];
    s.weight = i < m.owner_weight.size() ? m.owner_weight[i] : 0;
    out.push_back(s);
  }
  return out;
}

uint64_t Fib::commits() const { return impl_->commits; }

FibCounts Fib::Counts() const {
  impl_->Settle();
  const Impl& m = *impl_;
  FibCounts c;
  const auto v4 = m.CountV4();
  std::copy(v4.begin(), v4.end(), c.routes[0]);
  // IPv6 routes have no cells to walk: each one's Info is a group and a TCAM probe.
  m.rib.ForEach(Family::kV6, [&](const Prefix& p, const RibCand& cand) {
    ++c.routes[1][static_cast<int>(m.Info(p, cand, true).state)];
  });
  c.candidates = m.rib.candidates();
  c.neighbors = m.neigh.size();
  for (const auto& o : m.owners) c.slots_used += o.has_value();
  c.commits = m.commits;
  return c;
}

}  // namespace fibnic
