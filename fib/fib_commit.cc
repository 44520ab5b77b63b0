// Commit(): resolve → retire delta → main delta → the TCAM's best entries
// (docs/fib.md "Why the deltas never misforward"). The resolver gives the
// codes of this commit, old and new; each table compiler — NEXTHOP entries,
// SRAM4, TCAM6, NEIGH CAM — writes its part of both deltas from them. In the
// pipeline's two steps (CommitSafe, CommitBest) the TCAM's part of them only
// punts the entries the changed routes make wrong (Tcam6Compiler::Protect):
// choosing the best entries again is the costly part of a commit, so it comes
// last, in a delta of its own that the pipeline pushes after the others.
#include <algorithm>
#include <unordered_map>

#include "fib/fib_impl.h"

namespace fibnic {
namespace {

// The Fib's key safety invariant: a code is zeroed everywhere before its
// NEXTHOP entry changes owner, and written again only once the entry is valid
// for the new owner. The retire delta goes first: every SRAM word and TCAM
// entry naming a code whose owner changes is rewritten with that code at 0
// (punt), and only then, in the contract's last phase (nexthop_retire), is its
// entry made VALID=0; CAM indexes about to be reused are cleared. The main
// delta follows: entries are written valid for their owners (nexthop_activate,
// the first phase) before the TCAM and SRAM writes that name them. So every
// intermediate state answers a destination with its old answer, its new one,
// or a punt.
std::vector<DeviceDelta> RetireThenMain(DeviceDelta retire, DeviceDelta main) {
  std::vector<DeviceDelta> out;
  if (!retire.empty()) out.push_back(std::move(retire));
  if (!main.empty()) out.push_back(std::move(main));
  return out;
}

}  // namespace

// Pushed together, the deltas need no punts first: the TCAM goes straight to
// its best entries (and a warm restart's unchanged table to the device's own
// slots, which punts would have moved); CommitBest() then finds nothing to do.
std::vector<DeviceDelta> Fib::Impl::Commit() {
  std::vector<DeviceDelta> out = CommitSafe(/*protect=*/false);
  for (DeviceDelta& d : CommitBest()) out.push_back(std::move(d));
  return out;
}

std::vector<DeviceDelta> Fib::Impl::CommitSafe(bool protect) {
  Settle();
  heap.Now();  // the previous commit's delta, pushed and dropped by now
  // 1. Resolve: the slots from this commit's weights; each group's old and new code.
  const CommitCodes codes = resolver.Resolve(GroupWeights());
  // 2. and 3.: each table's retire writes and main writes, from those codes.
  DeviceDelta retire, main;
  main.port_macs.swap(port_macs_changed);
  CompileNexthops(codes, retire, main);
  CompileSram4(codes, retire, main);
  CompileTcam6(codes, retire, main, protect);
  CompileNeighCam(retire, main);  // after the TCAM: an IPv6 entry needs its TCAM answer
  heap.Now();  // this commit's scratch
  if (main.sram_words.size() > (size_t{1} << 18)) heap.Request();  // the delta: freed by the caller once pushed
  return RetireThenMain(std::move(retire), std::move(main));
}

// The TCAM's entry choice (the optimizer's work) for what CommitSafe() made
// safe — every choice, until each change is in a finished one — then the CAM
// for the TCAM's final answers (nothing else changed since CommitSafe()
// placed it: an unchanged TCAM leaves it as it is).
std::vector<DeviceDelta> Fib::Impl::CommitBest() { return FinishBest(tcam6.CompileBest()); }

// One step of it: nothing while the choice under way is unfinished.
std::vector<DeviceDelta> Fib::Impl::CommitBest(std::chrono::steady_clock::time_point deadline) {
  auto writes = tcam6.CompileBest(deadline);
  if (!writes) return {};
  return FinishBest(std::move(*writes));
}

std::vector<DeviceDelta> Fib::Impl::FinishBest(std::vector<TcamWrite> writes) {
  DeviceDelta retire, best;
  best.tcam = std::move(writes);
  if (!best.tcam.empty()) {
    image.tcam = tcam6.compiler().entries();
    CompileNeighCam(retire, best);
  }
  if (tcam6.compiler().settled()) ++commits;  // complete: offload states and counts are final
  return RetireThenMain(std::move(retire), std::move(best));
}

// What each group answers: its IPv4 /24s and its IPv6 routes up to /64.
std::vector<Resolver::GroupWeight> Fib::Impl::GroupWeights() const {
  std::vector<Resolver::GroupWeight> w(nht.group_bound());
  for (NhgId g = 1; g < w.size(); ++g) {
    if (!nht.GroupLive(g)) continue;
    w[g].slash24s = g < Sram4Compiler::kOverflowGroup ? sram.Count24(g) : 0;
    w[g].v6_routes = tcam6.ShortRoutes(g);
  }
  return w;
}

// Retire: a code changing owner goes VALID=0 (the delta's last phase, after
// its SRAM and TCAM writes stopped naming it). Main: each owner's entry — a
// new owner's is written VALID=0, fields, VALID=1 while nothing names it; a
// MAC change is rewritten in place; an unresolved owner's goes VALID=0.
void Fib::Impl::CompileNexthops(const CommitCodes& codes, DeviceDelta& retire, DeviceDelta& main) {
  const int slots = cfg.caps.slots();
  for (int c = 1; c <= slots; ++c) {
    if (!codes.retired[c]) continue;
    image.nexthop[c] = regs::NexthopEntry{};
    retire.nexthop_retire.push_back({static_cast<uint32_t>(c), image.nexthop[c]});
  }
  for (int c = 1; c <= slots; ++c) {
    const auto e = resolver.EntryFor(c, image.nexthop[c]);
    if (!e || *e == image.nexthop[c]) continue;
    image.nexthop[c] = *e;
    main.nexthop_activate.push_back({static_cast<uint32_t>(c), *e});
  }
}

// Retire: every word holding a retired code, with that code zeroed. Main:
// the words of every group whose answer or code moved (one pass over the
// cells) and every word changed since, with the final codes.
void Fib::Impl::CompileSram4(const CommitCodes& codes, DeviceDelta& retire, DeviceDelta& main) {
  const int bits = cfg.caps.code_bits;
  if (codes.any_retired) sram.ZeroCodes(codes.retired, image.sram.data(), bits, retire);
  const size_t bound = std::min<size_t>(codes.after.group_answer.size(), Sram4Compiler::kOverflowGroup);
  moved.resize(size_t{Sram4Compiler::kOverflowGroup} + 1);  // ids >= bound stay 0
  std::fill_n(moved.begin(), bound, 0);
  bool any_moved = false;
  for (NhgId g = 1; g < bound; ++g) {
    const int64_t was = g < codes.before.group_answer.size() ? codes.before.group_answer[g] : -1;
    if (codes.after.group_answer[g] != was || codes.after.GroupCode(g) != codes.before.GroupCode(g)) {
      moved[g] = 1;
      any_moved = true;
    }
  }
  if (any_moved) sram.MarkGroupsDirty(moved);
  sram.Flush(codes.after, image.sram.data(), bits, main);
}

// Retire: entries off the routes moving off codes that change owner. Main:
// entries off the routes that changed (Tcam6Feed::Compile).
void Fib::Impl::CompileTcam6(const CommitCodes& codes, DeviceDelta& retire, DeviceDelta& main, bool protect) {
  if (tcam6.Compile(rib, resolver, codes, retire, main, protect)) heap.Request();
  image.tcam = tcam6.compiler().entries();
}

// Retire: CAM indexes reused by this commit. Main: activations (into free
// indexes only), then entries no longer wanted.
void Fib::Impl::CompileNeighCam(DeviceDelta& retire, DeviceDelta& main) {
  CamPlan cam = PlanCam(image.neigh, EligibleNeighbors());
  for (const auto& w : cam.retire_first) image.neigh[w.index] = w.entry;
  for (const auto& w : cam.activate) image.neigh[w.index] = w.entry;
  for (const auto& w : cam.retire) image.neigh[w.index] = w.entry;
  retire.neigh_retire = std::move(cam.retire_first);
  main.neigh_activate = std::move(cam.activate);
  main.neigh_retire = std::move(cam.retire);
}

// Usable neighbours whose longest-match route answers with a coded connected
// next-hop that has a connected path on the neighbour's port (IPv6: and the
// compiled TCAM answers the neighbour's address with that code). The CAM is
// keyed by address: of one address on several such ports, the one on the
// answer's port (else the lowest port) is entered.
std::vector<CamWant> Fib::Impl::EligibleNeighbors() const {
  std::vector<CamWant> out;
  std::unordered_map<IpAddr, std::pair<size_t, bool>> seen;  // address → (index in out, on the answer's port)
  for (const auto& [key, rec] : resolver.neighbors()) {
    const Neighbor& n = rec.n;
    const IpAddr& addr = n.addr;
    if (!NeighUsable(n.state)) continue;
    // The CAM keys IPv4 neighbours as ::ffff:a.b.c.d: an IPv6 neighbour with
    // such an address would answer IPv4 lookups of a.b.c.d.
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
    const Resolver::Answer a = resolver.AnswerOf(g);
    if (a.nh < 0) continue;
    const NextHop& nh = nht.Get(static_cast<NhId>(a.nh));
    const uint8_t code = resolver.CodeOf(nh);
    if (!nh.connected() || code == 0) continue;
    // IPv6: only where the TCAM actually answers with that connected code.
    if (!addr.is_v4() && TcamCodeOf(addr) != code) continue;
    // The neighbour's own port must be one of the route's connected paths.
    bool on_path = false;
    for (NhId id : nht.Paths(g)) {
      const NextHop& p = nht.Get(id);
      on_path |= p.connected() && p.port == n.port;
    }
    if (!on_path || n.port >= cfg.caps.ports) continue;
    const CamWant want{addr, n.mac, n.port, rec.touch};
    const bool on_answer = n.port == nh.port;
    auto [it, fresh] = seen.try_emplace(addr, out.size(), on_answer);
    if (fresh) {
      out.push_back(want);
    } else if (on_answer > it->second.second || (on_answer == it->second.second && n.port < out[it->second.first].port)) {
      out[it->second.first] = want;
      it->second.second = on_answer;
    }
  }
  return out;
}

}  // namespace fibnic
