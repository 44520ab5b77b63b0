// FpmTable and the kernel's links (issue #14, "FPM carries routes the kernel
// does not hold or use"). zebra 8.4 keeps its next-hop objects as installed
// whatever the kernel does with them, and FPM carries them on, replays
// included. The kernel source says when a link goes down, loses carrier or
// goes away (LinkState), and this table then does what the kernel does
// (net/ipv4/nexthop.c; each rule checked with `ip monitor route nexthop` on
// 6.18, both families):
// - Every single next-hop object through the link is removed (blackholes
//   stay), without a message. A group holding one loses it and keeps its
//   other members; a group losing its last member is removed too. Every
//   route naming a removed object is deleted (IPv4 silently, IPv6 announced
//   or not by nexthop_compat_mode) and the kernel forwards by what covers
//   it: here it leaves the RIB (the table holds it for zebra's word; flux
//   counts it absent) until zebra sends it again — "not in the kernel".
// - zebra installs its inline routes (`no fpm use-next-hop-groups` is about
//   FPM only) with next-hop objects in the kernel too, one per path: such a
//   route loses its paths through the link, and is not in the kernel when none is left
//   (seen with FIBSYNC_SEED=16447697085535 FRRDIFF_NHG=0: after the carrier
//   came back zebra still had the route, the kernel none). Were a route
//   in the kernel without objects, the kernel would keep such paths flagged
//   linkdown and skip them, and use them again with the carrier: here they
//   stay away until zebra sends the route again — the cover, or fewer paths.
// - While the link is down or without carrier, an object through it is
//   refused ("Carrier for nexthop device is down"), and so are a group
//   naming a removed object and a route naming one ("Nexthop id does not
//   exist"): such routes are not in the kernel. zebra logs the failure; FRR
//   8.4 sends the objects over FPM, and such a route at least in its
//   replays (its refused install went nowhere: frrdiff
//   FIBSYNC_SEED=192865517202028). A group zebra made before its member was
//   removed still holds its other members in the kernel, and its replay
//   looks the same as a new one: the kernel's objects tell them apart
//   (KernelRefuses).
// - An inline route zebra sends with paths through such a link is taken
//   without them (not in the kernel when none is left): zebra does not install a path
//   through an interface it knows is down, so this is a replay of a route
//   that lost those paths with the carrier — the same answer as when the
//   carrier went while the route was here, also after a fibnicd restart.
// - The carrier coming back brings nothing back: zebra must send the object
//   and its routes again, as it does when it re-installs.
#include <linux/rtnetlink.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "sources/fpm/fpm_table.h"

namespace fibnic {

void FpmTable::LinkState(uint32_t ifindex, bool carrier) {
  if (carrier) {
    no_carrier_.erase(ifindex);
    return;
  }
  no_carrier_.insert(ifindex);
  // Again at every such message: what zebra sent meanwhile was refused or
  // trimmed already (KernelRefuses, SetOfLive), so this finds only what came
  // before the link state was known (fibnicd's start-up).
  FrameWork work;
  RemoveObjectsVia(ifindex, work);
  RemoveInlinePathsVia(ifindex, work);
  if (!work.groups.empty() || !work.touched.empty()) Finish(work);
}

bool FpmTable::KernelRefuses(NlNexthop& n) const {
  if (n.del || n.blackhole) return false;
  if (n.group.empty()) return n.path.ifindex != 0 && no_carrier_.count(n.path.ifindex) != 0;
  auto removed = [&](const NlGroupMember& m) {
    auto it = nhgs_.find(m.id);
    return it != nhgs_.end() && it->second.removed;
  };
  if (std::none_of(n.group.begin(), n.group.end(), removed)) return false;
  // zebra replays a group it made before the removal as it made it: the
  // kernel kept it without those members (and the routes using it), a
  // fibnicd that saw the removal forwards along the rest — so does one that
  // starts now. A group the kernel does not hold was refused.
  if (!options_.kernel_holds_object || !options_.kernel_holds_object(n.id)) return true;
  std::erase_if(n.group, removed);
  return n.group.empty();
}

uint32_t FpmTable::SetOfLive(const NlRoute& r) {
  if (r.type != RTN_UNICAST || r.nh_id >= kInlineBit) return SetOf(r);
  if (r.nh_id != 0) {
    auto it = nhgs_.find(r.nh_id);
    return it != nhgs_.end() && it->second.removed ? RemovedRouteSet() : SetOf(r);
  }
  auto dead = [&](const NlPath& p) { return no_carrier_.count(p.ifindex) != 0; };
  if (std::none_of(r.paths.begin(), r.paths.end(), dead)) return SetOf(r);
  // Paths through a link without carrier: zebra's replay of a route whose
  // objects the kernel removed with the carrier (zebra does not install a
  // path through an interface it knows is down), so the kernel holds the
  // rest, as when the carrier went while the route was here.
  NlRoute live = r;
  std::erase_if(live.paths, dead);
  return live.paths.empty() ? RemovedRouteSet() : SetOf(live);
}

namespace {
constexpr const char* kNotInKernel = "not in the kernel: a next-hop of it went down or lost carrier";
}  // namespace

uint32_t FpmTable::RemovedRouteSet() {
  NlRoute gone;
  gone.type = RTN_UNICAST;
  gone.unsupported = kNotInKernel;
  return SetOf(gone);
}

bool FpmTable::NotInKernel(uint32_t set) const {
  if (set & kInlineBit) return inline_[set & ~kInlineBit].unsupported == kNotInKernel;
  auto it = nhgs_.find(set);
  if (it == nhgs_.end() || it->second.removed) return false;  // punts (PathsOf)
  if (it->second.unheld) return true;
  return std::any_of(it->second.nh.group.begin(), it->second.nh.group.end(), [&](const NlGroupMember& m) {
    auto mi = nhgs_.find(m.id);
    return mi != nhgs_.end() && mi->second.unheld;
  });
}

void FpmTable::TouchObject(uint32_t id, FrameWork& work) {
  std::vector<uint32_t> pending{id};
  while (!pending.empty()) {
    const uint32_t cur = pending.back();
    pending.pop_back();
    if (!work.groups.insert(cur).second) continue;
    if (auto g = parents_.find(cur); g != parents_.end()) pending.insert(pending.end(), g->second.begin(), g->second.end());
  }
}

size_t FpmTable::CheckKernelObjects() {
  if (!options_.kernel_holds_object) return 0;
  FrameWork work;
  size_t marked = 0;
  for (auto& [id, g] : nhgs_) {
    if (g.removed || g.unheld) continue;
    if (options_.kernel_holds_object(id)) {
      if (FollowKernelMembers(id, g)) {
        ++marked;
        TouchObject(id, work);
      }
      continue;
    }
    g.unheld = true;
    ++marked;
    TouchObject(id, work);
  }
  if (marked != 0) Finish(work);
  return marked;
}

// frrdiff FIBSYNC_SEED=180586213070414 FRRDIFF_NHG=1 …CHURN=6: k2 lost its
// carrier, the kernel took member 1014 out of group 1015 and deleted it;
// with the carrier back zebra made 1014 again but never re-sent 1015, so the
// kernel's 1015 is {1016} while zebra's is {1014, 1016}. A restarted fibnicd
// read zebra's replay of 1015 and sent half the flows via k2. At a replay's
// end a group the kernel holds keeps only the members whose paths the
// kernel's group still has; if the rest is not the kernel's group, it punts.
bool FpmTable::FollowKernelMembers(uint32_t id, StoredNhg& g) {
  if (g.nh.group.empty() || !options_.kernel_object) return false;
  const std::optional<NexthopObjects::Resolved> kernel = options_.kernel_object(id);
  if (!kernel) return false;
  auto same_hop = [](const NlPath& a, const NlPath& b) { return a.ifindex == b.ifindex && a.gateway == b.gateway; };
  auto in_kernel = [&](const NlPath& p) {
    return std::any_of(kernel->paths.begin(), kernel->paths.end(), [&](const NlPath& k) { return same_hop(k, p); });
  };
  auto path_of = [&](const NlGroupMember& m) -> const NlPath* {
    auto it = nhgs_.find(m.id);
    return it == nhgs_.end() || !it->second.nh.group.empty() || it->second.nh.blackhole ? nullptr : &it->second.nh.path;
  };
  std::vector<NlGroupMember> kept;
  for (const NlGroupMember& m : g.nh.group) {
    const NlPath* p = path_of(m);
    if (p == nullptr) return false;  // groups of groups punt anyway (PathsOf)
    if (in_kernel(*p)) kept.push_back(m);
  }
  if (kept.size() == g.nh.group.size()) return false;
  g.nh.group = std::move(kept);
  // Every path of the kernel's group must be one of zebra's members left.
  const bool whole = !g.nh.group.empty() && std::all_of(kernel->paths.begin(), kernel->paths.end(), [&](const NlPath& k) {
    return std::any_of(g.nh.group.begin(), g.nh.group.end(), [&](const NlGroupMember& m) { return same_hop(*path_of(m), k); });
  });
  if (!whole) g.removed = true;
  return true;
}

void FpmTable::KernelObjectAdded(uint32_t id) {
  FluxOfKernelObjects({id}, false);
  RecheckKernelNhUsers({id}, false);
  auto it = nhgs_.find(id);
  if (it == nhgs_.end() || !it->second.unheld) return;
  FrameWork work;
  TouchObject(id, work);
  KeepRoutesOutOfTheKernel(work.groups);
  it->second.unheld = false;
  Finish(work);
}

// The kernel held no route naming an object marked unheld; the object's
// return (the kernel's add, or zebra sending it again) says nothing of them
// — zebra installs the object first, its routes after, and they may never
// come (FIBSYNC_SEED=51050717267298 forwarded a replayed block for seconds
// before the kernel had it). So each stays out of the kernel — in flux, the
// kernel holding no route — until the kernel reports it.
void FpmTable::KeepRoutesOutOfTheKernel(const std::set<uint32_t>& ids) {
  bool used = false;
  for (uint32_t g : ids) used = used || users_.count(g);
  if (!used) return;
  std::vector<Prefix> absent;
  refs_.ForEach([&](const Prefix& p, uint32_t set, bool) {
    if (!(set & kInlineBit) && ids.count(set) && NotInKernel(set) && !flux_.count(p)) absent.push_back(p);
  });
  for (const Prefix& p : absent) {
    if (flux_.size() >= options_.flux_max && !EvictWaiting()) break;  // beyond: FPM's word, as before the flux rule
    FpmFluxEntry e;
    e.punted = true;  // the RIB holds no route for it already (NotInKernel)
    flux_.emplace(p, e);
  }
}

void FpmTable::RemoveObjectsVia(uint32_t ifindex, FrameWork& work) {
  std::vector<uint32_t> gone;
  for (auto& [id, g] : nhgs_) {
    if (g.removed || g.nh.blackhole || !g.nh.group.empty() || g.nh.path.ifindex != ifindex) continue;
    g.removed = true;
    gone.push_back(id);
  }
  // Groups holding a removed object lose it; one left without members goes
  // too (and so on up, though groups of groups punt anyway).
  for (size_t i = 0; i < gone.size(); ++i) {
    const uint32_t id = gone[i];
    work.groups.insert(id);
    auto holders = parents_.find(id);
    if (holders == parents_.end()) continue;
    for (uint32_t gid : holders->second) {
      auto g = nhgs_.find(gid);
      if (g == nhgs_.end()) continue;
      work.groups.insert(gid);
      std::vector<NlGroupMember>& members = g->second.nh.group;
      std::erase_if(members, [id](const NlGroupMember& m) { return m.id == id; });
      if (members.empty() && !g->second.removed) {
        g->second.removed = true;
        gone.push_back(gid);
      }
    }
    parents_.erase(holders);
  }
  // The routes naming a removed object are deleted by the kernel: they punt
  // until zebra sends them again (its object revived or not).
  const std::unordered_set<uint32_t> removed(gone.begin(), gone.end());
  if (std::none_of(gone.begin(), gone.end(), [&](uint32_t id) { return users_.count(id) != 0; })) return;
  std::vector<std::pair<Prefix, FpmRouteRef>> users;
  refs_.Walk(0, refs_.size(), [&](const Prefix& p, FpmRouteRef& ref) {
    if (!(ref.set & kInlineBit) && removed.count(ref.set)) users.emplace_back(p, ref);
  });
  for (const auto& [p, before] : users) {
    work.touched.emplace(p, before);
    PutRef(p, FpmRouteRef{RemovedRouteSet(), before.stale, before.protocol, before.replied}, before);
    Release(before.set);
  }
}

void FpmTable::RemoveInlinePathsVia(uint32_t ifindex, FrameWork& work) {
  // What each inline set through the link becomes (interned below, once
  // per route: each route holds a reference).
  std::unordered_map<uint32_t, NlRoute> becomes;
  for (uint32_t index = 0; index < inline_.size(); ++index) {
    const InlineSet& s = inline_[index];
    if (s.refs == 0 || s.type != RTN_UNICAST) continue;
    if (std::none_of(s.paths.begin(), s.paths.end(), [&](const NlPath& p) { return p.ifindex == ifindex; })) continue;
    NlRoute r;
    r.type = RTN_UNICAST;
    r.unsupported = s.unsupported;
    for (const NlPath& p : s.paths) {
      if (p.ifindex != ifindex) r.paths.push_back(p);
    }
    becomes.emplace(index | kInlineBit, std::move(r));
  }
  if (becomes.empty()) return;
  std::vector<std::pair<Prefix, FpmRouteRef>> users;
  refs_.Walk(0, refs_.size(), [&](const Prefix& p, FpmRouteRef& ref) {
    if (becomes.count(ref.set)) users.emplace_back(p, ref);
  });
  for (const auto& [p, before] : users) {
    const NlRoute& r = becomes.at(before.set);
    const uint32_t set = r.paths.empty() ? RemovedRouteSet() : SetOf(r);
    work.touched.emplace(p, before);
    // The kernel's object loses the same member with the carrier: still the one that agrees.
    const uint32_t kernel_nh = r.paths.empty() ? 0 : before.kernel_nh;
    PutRef(p, FpmRouteRef{set, before.stale, before.protocol, before.replied, false, kernel_nh}, before);
    Release(before.set);
  }
}

}  // namespace fibnic
