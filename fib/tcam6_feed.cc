#include "fib/tcam6_feed.h"

#include <algorithm>

#include "fib/heap_trim.h"
#include "fib/martians.h"

namespace fibnic {
namespace {

// Routes in a martian range (fib/martians.h) reach the TCAM with code 0.
constexpr Tcam6Route kMartianPunt{0, PuntReason::kToHost, 1};

}  // namespace

Tcam6Feed::Tcam6Feed(uint32_t capacity) : tcam6_(capacity) {
  for (const Prefix& m : MartianPrefixesV6()) tcam6_.Upsert(m, kMartianPunt);
}

void Tcam6Feed::BestChanged(const Prefix& p, NhgId old_best, NhgId new_best) {
  const bool fits = p.len() <= 64;  // only these can be answered by the TCAM
  if (old_best != kNoGroup) {
    GroupUse& u = Use(old_best);
    --u.routes;
    u.short_routes -= fits;
  }
  if (new_best != kNoGroup) {
    GroupUse& u = Use(new_best);
    ++u.routes;
    u.short_routes += fits;
  }
  dirty_.push_back(Key::Of(p, kNoGroup));
}

bool Tcam6Feed::Compile(const Rib& rib, const Resolver& resolver, const CommitCodes& codes, DeviceDelta& retire,
                        DeviceDelta& main, bool protect) {
  auto route_with = [&](NhgId g, uint8_t code) {
    if (code != 0) return Tcam6Route{code, PuntReason::kNone, 1};
    const PuntReason why = resolver.GroupPuntReason(g);
    return Tcam6Route{0, why != PuntReason::kNone ? why : PuntReason::kNoSlot, 1};
  };
  const bool two_phase = codes.any_retired;
  std::vector<uint8_t> moved(use_.size(), 0);  // group: its routes in the compiler need another code
  bool any_moved = false;
  for (NhgId g = 1; g < use_.size(); ++g) {
    GroupUse& u = use_[g];
    if (u.routes == 0) {
      u.pushed = -1;
      continue;
    }
    if (u.pushed < 0) continue;  // every route of it is in dirty_
    const uint8_t fin = codes.after.GroupCode(g), mid = two_phase ? codes.RetirePhaseCode(g) : fin;
    if (fin != u.pushed || mid != u.pushed) moved[g] = any_moved = true;
  }
  if (dirty_.empty() && !any_moved) return false;

  // (prefix, group) to upsert; kNoGroup = erase. In prefix order: the
  // compiler then walks from one route's trie node to the next instead of
  // from the root for each (a recolour of the real table: ~15 ms instead of
  // ~0.2 s).
  std::vector<Key> todo;
  todo.swap(dirty_);
  for (Key& k : todo) {
    auto best = rib.Best(k.prefix());
    k.group = best ? best->nhg : kNoGroup;
  }
  if (any_moved) {
    rib.ForEach(Family::kV6, [&](const Prefix& p, const RibCand& c) {
      if (moved[c.nhg]) todo.push_back(Key::Of(p, c.nhg));
    });
  }
  std::sort(todo.begin(), todo.end());
  todo.erase(std::unique(todo.begin(), todo.end()), todo.end());
  auto push = [&](bool final_code) {
    for (const Key& k : todo) {
      const Prefix p = k.prefix();
      const Prefix* martian = MartianV6Containing(p);
      if (k.group == kNoGroup) {
        // A martian range keeps its punt entry when a route of the same prefix goes.
        if (martian && *martian == p) tcam6_.Upsert(p, kMartianPunt);
        else tcam6_.Erase(p);
      } else if (martian) {
        tcam6_.Upsert(p, kMartianPunt);
      } else {
        const uint8_t code = final_code ? codes.after.GroupCode(k.group) : codes.RetirePhaseCode(k.group);
        tcam6_.Upsert(p, route_with(k.group, code));
      }
    }
    return protect ? tcam6_.Protect() : tcam6_.Commit();
  };
  if (two_phase) retire.tcam = push(false);
  main.tcam = push(true);
  for (NhgId g = 1; g < use_.size(); ++g) {
    if (use_[g].routes) use_[g].pushed = codes.after.GroupCode(g);
  }
  if (todo.capacity() > HeapTrim::kKeepScratch) return true;  // freed on return
  todo.clear();
  todo.swap(dirty_);  // a small list keeps its capacity for the next commit
  return false;
}

}  // namespace fibnic
