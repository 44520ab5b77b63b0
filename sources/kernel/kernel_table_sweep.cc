// KernelTable's resync half: a dump under a new generation marks what the
// kernel still holds, and what it did not mark is swept — in steps, so a
// million routes never hold the event loop — except what the kernel's own
// IPv6 dump may have hidden (MayBeHiddenByTheDump) and what a dump the
// tables changed under did not list (BeginSweep).
#include <algorithm>

#include "sources/kernel/kernel_table.h"

namespace fibnic {

// Whether an IPv6 entry's paths are several routes of one metric: its
// gateway paths are one (multipath) route, each path without a gateway one
// of its own.
bool KernelTable::SeveralRoutes(const std::vector<NlPath>& paths) {
  const auto without_gateway = std::count_if(paths.begin(), paths.end(), [](const NlPath& y) { return !y.gateway; });
  const bool with_gateway = static_cast<size_t>(without_gateway) != paths.size();
  return without_gateway + (with_gateway ? 1 : 0) > 1;
}

void KernelTable::BeginResync() {
  ++gen_;
  routes_.ClearSeen();
  dump_named_.clear();
  dump_copies_.clear();
}

// A dump's listing r of entry e of IPv6 prefix p, held before the dump or
// listed earlier in it. The first listing notes the paths the entry holds
// and r does not name (a handful of prefixes, not the table: the rest go at
// the dump's end) and counts a whole route's copies again (those the dump
// may hide: DropPathsTheDumpDidNotName). Returns whether the dump listed
// the route already, so that the kernel holds it twice: a whole route of
// the entry's, or a route without a gateway named as often as it was listed.
bool KernelTable::NoteDumpListing(const Prefix& p, const Key& key, Entry& e, const NlRoute& r) {
  const auto& held = e.route.paths;
  if (e.gen != gen_) {
    if (std::any_of(held.begin(), held.end(), [&](const NlPath& x) { return !NamesHop(r.paths, x); })) {
      dump_named_[p][key].assign(r.paths.begin(), r.paths.end());
    }
    if (Whole(e.route) && e.copies > 1) dump_copies_[p][key] = e.copies;
    e.copies = 1;
    return false;
  }
  if (Whole(r)) return true;
  auto named = dump_named_.find(p);
  std::vector<NlPath>* noted = named != dump_named_.end() && named->second.count(key) ? &named->second[key] : nullptr;
  const std::vector<NlPath>& listed = noted ? *noted : held;
  const bool again = !r.paths.empty() && std::all_of(r.paths.begin(), r.paths.end(), [&](const NlPath& x) {
    auto same = [&](const NlPath& y) { return y.SameHop(x); };
    return !x.gateway && std::count_if(listed.begin(), listed.end(), same) >= std::count_if(held.begin(), held.end(), same);
  });
  if (noted) noted->insert(noted->end(), r.paths.begin(), r.paths.end());
  return again;
}

// The IPv6 paths the dump did not name leave their entries (ApplyRouteTo).
void KernelTable::DropPathsTheDumpDidNotName() {
  for (auto& [p, by_key] : dump_named_) {
    ChangeRoutes(p, [&](Entries& entries) {
      for (const auto& [key, named] : by_key) {
        auto e = entries.find(key);
        if (e == entries.end() || e->second.gen != gen_) continue;
        auto& paths = e->second.route.paths;
        const size_t before = paths.size();
        // A path without a gateway is a route of its own, which the dump
        // may have left out when it listed a multipath route of the same
        // metric (MayBeHiddenByTheDump): kept.
        const bool multipath_named =
            std::count_if(named.begin(), named.end(), [](const NlPath& x) { return x.gateway.has_value(); }) > 1;
        // A torn dump (BeginSweep) may have left out any route: nothing goes.
        std::erase_if(paths, [&](const NlPath& x) {
          if (NamesHop(named, x) || (!x.gateway && multipath_named)) return false;
          if (!sweep_.torn) return true;
          ++sweep_.kept;
          return false;
        });
        if (std::any_of(paths.begin(), paths.end(), [&](const NlPath& x) { return !NamesHop(named, x); })) {
          e->second.unlisted = true;
        }
        if (paths.empty()) {
          entries.erase(e);
        } else if (paths.size() != before) {
          // Left: its gateway paths (one route) and each path without a gateway.
          e->second.several = SeveralRoutes(paths);
        }
      }
    });
  }
  dump_named_.clear();
  // A whole route's copies the dump listed fewer times than were held: one
  // between a multipath route's siblings is never listed (MayBeHiddenByTheDump),
  // and a torn dump may have left any out. Kept, the prefix punting, as a
  // route the dump did not list is.
  for (auto& [p, by_key] : dump_copies_) {
    ChangeRoutes(p, [&](Entries& entries) {
      for (const auto& [key, held] : by_key) {
        auto e = entries.find(key);
        if (e == entries.end() || e->second.gen != gen_ || e->second.copies >= held) continue;
        if (!sweep_.torn && !MayBeHiddenByTheDump(p, entries, key)) continue;
        sweep_.kept += sweep_.torn ? held - e->second.copies : 0;
        e->second.copies = held;
        e->second.unlisted = true;
      }
    });
  }
  dump_copies_.clear();
}

size_t KernelTable::EndResync() {
  BeginSweep(false);
  while (!SweepStep(SIZE_MAX)) {
  }
  return EndSweep();
}

void KernelTable::BeginSweep(bool torn) {
  sweep_ = Sweep{};
  sweep_.torn = torn;
  counts_.torn_dumps += torn ? 1 : 0;
  for (auto it = link_gen_.begin(); it != link_gen_.end();) {
    if (it->second == gen_) {
      ++it;
      continue;
    }
    sweep_.links_changed |= ports_.RemoveLink(it->first);
    sweep_.links_changed |= no_carrier_.erase(it->first) != 0;
    vrf_.ForgetLink(it->first);
    admin_down_.erase(it->first);
    v4_addrs_.erase(it->first);
    it = link_gen_.erase(it);
  }
  sweep_.links_changed |= UpdateContext();
}

// The routes the dump did not show, a slice at a time: the walk goes on
// from where the last step stopped; routes a step's removals moved behind
// its cursor are found by one more walk of what is left, at the end.
bool KernelTable::SweepStep(size_t max) {
  std::vector<Prefix> unseen;
  if (!sweep_.last_pass) {
    sweep_.cursor = routes_.UnseenFrom(sweep_.cursor, max, gen_, unseen);
    if (sweep_.cursor == 0) sweep_.last_pass = true;
  } else {
    unseen = routes_.Unseen(gen_);
    if (unseen.size() > max) unseen.resize(max);
  }
  for (const Prefix& p : unseen) {
    ChangeRoutes(p, [&](Entries& entries) {
      for (auto e = entries.begin(); e != entries.end();) {
        if (e->second.gen == gen_) {
          ++e;
        } else if (sweep_.torn || MayBeHiddenByTheDump(p, entries, e->first)) {
          e->second.gen = gen_;
          e->second.unlisted = true;  // kept; the prefix punts while it is held
          sweep_.kept += sweep_.torn ? 1 : 0;
          ++e;
        } else {
          e = entries.erase(e);
          ++sweep_.swept;
        }
      }
    });
  }
  return sweep_.last_pass && unseen.empty();
}

// The kernel's IPv6 route dump lists a multipath route at its first sibling
// and goes on after its last (fib6_dump_node), so a route of the same metric
// that sits between the siblings in the kernel's list is never listed: one
// the multipath route replaced around (a device route beside a blackhole,
// the blackhole replaced by the first sibling, the second sibling appended
// after the device route; checked on 6.18). The kernel still holds it, and
// an IPv6 replace of its kind later takes it rather than the multipath
// route. So a route the dump did not list is not swept where a listed
// multipath route of its rank may have hidden it.
bool KernelTable::MayBeHiddenByTheDump(const Prefix& p, const Entries& entries, const Key& key) const {
  if (p.family() != Family::kV6) return false;
  return std::any_of(entries.begin(), entries.end(), [&](const auto& e) {
    const NlRoute& r = e.second.route;
    return e.second.gen == gen_ && e.first != key && SameRank(e.first, key) && r.nh_id == 0 && r.paths.size() > 1 &&
           std::count_if(r.paths.begin(), r.paths.end(), [](const NlPath& x) { return x.gateway.has_value(); }) > 1;
  });
}

size_t KernelTable::EndSweep() {
  DropPathsTheDumpDidNotName();
  if (sweep_.kept != 0) {
    counts_.kept_unlisted += sweep_.kept;
    redump_wanted_ = true;  // a dump that lists the tables whole decides
  }
  size_t swept = sweep_.swept;
  std::vector<Prefix> touched;
  for (const Prefix& p : SweepObjects()) touched.push_back(p);
  SweepAddrs();
  const std::vector<Prefix> ruled = rules_.Sweep(gen_);
  swept += ruled.size();
  std::vector<NeighKey> gone;
  for (const auto& [k, n] : neighs_) {
    if (n.gen != gen_) gone.push_back(k);
  }
  for (const NeighKey& k : gone) neighs_.erase(k);
  swept += gone.size();
  if (sweep_.links_changed) {
    ReevaluateAll();
  } else {
    for (const Prefix& p : touched) EmitRoute(p);
    for (const Prefix& p : ruled) EmitInside(p);
    for (const NeighKey& k : gone) EmitNeigh(k);
  }
  counts_.swept += swept;
  return swept;
}

}  // namespace fibnic
