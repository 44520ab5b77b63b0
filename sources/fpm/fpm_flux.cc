// FpmTable's routes in flux (fpm_flux.h): the kernel's state of zebra's
// routes gating what FPM says of them.
#include "sources/fpm/fpm_flux.h"

#include <linux/rtnetlink.h>

#include <algorithm>
#include <string>
#include <unordered_set>
#include <utility>

#include "sources/fpm/fpm_table.h"

namespace fibnic {
namespace {

// The placeholder a disagreeing prefix gets when the flux map is full.
constexpr const char* kFluxFull = "the kernel and FPM disagree (flux map full)";

uint64_t Fnv(uint64_t h, const void* data, size_t len) {
  const auto* b = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < len; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

}  // namespace

uint64_t RouteMeaningDigest(uint8_t type, const std::vector<NlPath>& paths, bool unusable) {
  uint64_t h = Fnv(14695981039346656037ull, &type, 1);
  const uint8_t u = unusable;
  h = Fnv(h, &u, 1);
  if (unusable || type != RTN_UNICAST) return h;  // punted or not forwarded: its paths do not matter
  // Each path as bytes; sorted and unique, so the set is what counts.
  std::vector<std::string> keys;
  keys.reserve(paths.size());
  for (const NlPath& p : paths) {
    std::string k;
    if (p.gateway) {
      const auto b = p.gateway->bytes();
      k.push_back(p.gateway->is_v4() ? '4' : '6');
      k.append(reinterpret_cast<const char*>(b.data()), p.gateway->is_v4() ? 4 : 16);
    } else {
      k.push_back('-');
    }
    k.append(reinterpret_cast<const char*>(&p.ifindex), sizeof p.ifindex);
    keys.push_back(std::move(k));
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& k : keys) {
    const uint8_t n = static_cast<uint8_t>(k.size());
    h = Fnv(h, &n, 1);
    h = Fnv(h, k.data(), k.size());
  }
  return h;
}

FpmFluxEntry FluxEntryOf(const KernelRouteView& k) {
  FpmFluxEntry e;
  e.present = !k.deleted;
  if (e.present) {
    e.nh_id = k.nh_id;
    e.digest = RouteMeaningDigest(k.type, k.paths, k.unusable);
  }
  return e;
}

bool FpmTable::IsPlaceholder(uint32_t set) const {
  return (set & kInlineBit) && inline_[set & ~kInlineBit].unsupported == kFluxFull;
}

// What FPM's set forwards along, resolved as PathsOf does, as a digest.
uint64_t FpmTable::DigestOf(uint32_t set) const {
  if (set & kInlineBit) {
    const InlineSet& s = inline_[set & ~kInlineBit];
    return RouteMeaningDigest(s.type, s.paths, !s.unsupported.empty());
  }
  // An object the kernel removed (or never took) has no route there:
  // unusable, never "agreeing" with a kernel route.
  const Singles singles = SinglesOf(set);
  if (!singles.none_why.empty()) return RouteMeaningDigest(RTN_UNICAST, {}, true);
  std::vector<NlPath> paths;
  bool bad = false;
  for (const NlNexthop* s : singles.objects) {
    if (s->blackhole) return RouteMeaningDigest(RTN_BLACKHOLE, {}, false);
    bad = bad || !s->unsupported.empty();
    paths.push_back(s->path);
  }
  return RouteMeaningDigest(RTN_UNICAST, paths, bad);
}

bool FpmTable::Agrees(const std::optional<FpmRouteRef>& fpm, const FpmFluxEntry& kernel) const {
  // A route FPM holds that the kernel removed or refused is no route (NotInKernel).
  const bool fpm_present = fpm && !NotInKernel(fpm->set);
  if (!fpm_present || !kernel.present) return !fpm_present && !kernel.present;
  if (IsPlaceholder(fpm->set)) return false;  // FPM's word on it is not known
  // zebra names its objects over FPM with the ids it gave them in the kernel.
  if (!(fpm->set & kInlineBit) && kernel.nh_id != 0) return fpm->set == kernel.nh_id;
  return DigestOf(fpm->set) == kernel.digest;
}

size_t FpmTable::flux_punting() const {
  size_t n = 0;
  for (const auto& [p, e] : flux_) n += e.punted;
  return n;
}

// An entry waiting for FPM to catch up does not punt: when the map is full
// it gives way first (the oldest), the prefix back to FPM's word alone.
bool FpmTable::EvictWaiting() {
  while (!flux_waiting_.empty()) {
    const Prefix p = flux_waiting_.front();
    flux_waiting_.pop_front();
    auto f = flux_.find(p);
    if (f != flux_.end() && !f->second.punted) {
      flux_by_paths_ -= ByPaths(f->second);
      flux_.erase(f);
      return true;
    }
  }
  return false;
}

// The kernel coming back to FPM's state ends the punt but not the flux: FPM
// has yet to go through the states the kernel went through (zebra sends each
// of its kernel changes over FPM too), e.g. a bgpd restart's delete and
// re-add, read after the kernel's re-add — forwarding FPM's stale delete
// would send the traffic to the covering route while the kernel has the
// route again. The entry goes once FPM's own word agrees with the kernel's.
FpmTable::FluxStep FpmTable::StepFlux(const Prefix& p, const std::optional<FpmRouteRef>& now, bool kernel_word) {
  if (flux_.empty()) return FluxStep::kNone;
  auto f = flux_.find(p);
  if (f == flux_.end()) return FluxStep::kNone;
  if (Agrees(now, f->second)) {
    const bool punted = f->second.punted;
    NoteKernelNh(p, now, f->second.present ? f->second.nh_id : 0);
    // An entry holding IPv6 routes behind the kernel's first stays: it knows
    // which one forwards when the first goes (fpm_flux_several.cc).
    if ((kernel_word && !f->second.by_frame) || f->second.behind != 0) {
      f->second.punted = false;
      flux_waiting_.push_back(p);
    } else {
      flux_by_paths_ -= ByPaths(f->second);
      flux_.erase(f);
    }
    return punted ? FluxStep::kBack : FluxStep::kNone;
  }
  if (f->second.punted) return FluxStep::kStay;
  f->second.punted = true;
  ++counts_.flux_entered;
  return FluxStep::kPunt;
}

// The kernel is the oracle: where it and FPM disagree, the device does what
// the kernel does. zebra installs every route by next-hop object (in both
// FPM modes), and the kernel source holds the kernel's objects, so a route
// the kernel holds forwards along its object's paths as they are now; one it
// does not hold is no route (the kernel forwards by what covers it). A punt
// only where neither is known: an inline kernel route (its paths are not
// kept here), an object the kernel source does not hold, no kernel source.
FibPathsResult FpmTable::KernelAnswer(const Prefix& p, const FpmFluxEntry& kernel) const {
  if (!kernel.present) return FibPathsResult{{}, "not in the kernel"};
  if (kernel.nh_id != 0 && options_.kernel_object) {
    if (const std::optional<NexthopObjects::Resolved> k = options_.kernel_object(kernel.nh_id)) {
      FibPathsResult res = FibPaths(k->type, p.family(), k->paths, k->unsupported, port_of_);
      if (!res.paths.empty()) return res;
    }
  }
  return FibPathsResult{{NextHop::ToHost()}, "the kernel and FPM disagree"};
}

void FpmTable::FluxOfKernelObjects(const std::set<uint32_t>& ids, bool gone) {
  if (flux_.empty() || ids.empty()) return;
  FrameWork work;
  work.kernel_word = true;
  for (auto& [p, e] : flux_) {
    if (!e.present || e.nh_id == 0 || !ids.count(e.nh_id)) continue;
    const std::optional<FpmRouteRef> now = refs_.Find(p);
    if (gone && e.behind != 0) {
      FrontGone(e);  // the kernel deleted the first route with its object: the next one forwards
    } else if (gone) {
      e.present = false;  // the kernel deleted the route with its object, silently
      e.nh_id = 0;
      e.digest = 0;
    } else {
      // FPM's inline route is compared by paths: with the object's as they are now.
      if (const std::optional<FpmFluxEntry> k = KernelObjectEntry(e.nh_id)) e.digest = k->digest;
      // The RIB has FPM's route by the same object, which agrees.
      if (!e.punted && (!now || !(now->set & kInlineBit))) continue;
    }
    work.touched.emplace(p, now);
  }
  if (!work.touched.empty()) Finish(work);
}

void FpmTable::KernelObjectsGone(const std::set<uint32_t>& ids) {
  FluxOfKernelObjects(ids, true);
  KernelRoutesGoneWith(ids);
  RecheckKernelNhUsers(ids, true);
}

// zebra deletes an object once its routes moved off it — in the kernel. When
// the kernel refused a route's move (zebra logs "Route install failed", and
// FRR 8.4 sends nothing over FPM for it), FPM's route still names the
// object; deleting it deletes the kernel's route, silently for IPv4 (and for
// IPv6 with nexthop_compat_mode=0), and the kernel forwards by the cover.
// The device did not: it forwarded along the deleted object until zebra's
// own deletion of it reached FPM, then punted (frrdiff, FIBSYNC_SEED=
// 138807682517951 FRRDIFF_NHG=1: a restart then wrote the cover's code, as
// the kernel forwards). Such a route, which agreed with the kernel (not in
// flux: the kernel source reads route and object events in order, so a move
// the kernel took was read before the deletion), is now a prefix the kernel
// holds no route for. A walk only when a deleted object still has users.
void FpmTable::KernelRoutesGoneWith(const std::set<uint32_t>& ids) {
  if (!AnyUsed(ids)) return;
  std::vector<Prefix> gone;
  refs_.ForEach([&](const Prefix& p, uint32_t set, bool stale) {  // stale ones: DropStaleUsing
    if (!stale && !(set & kInlineBit) && ids.count(set) && (flux_.empty() || !flux_.count(p))) gone.push_back(p);
  });
  for (const Prefix& p : gone) KernelWordGone(p, refs_.Find(p)->protocol);
}

void FpmTable::KernelWordGone(const Prefix& p, uint8_t protocol) {
  KernelRouteView gone;
  gone.prefix = p;
  gone.table = options_.table;
  gone.deleted = true;
  gone.protocol = protocol;
  KernelWord(gone);
}

void FpmTable::TouchFluxOfGroups(FrameWork& work) {
  // Usually none: zebra installs by next-hop object when the kernel has
  // them, and then the kernel's id is compared, whatever the group holds.
  if (flux_by_paths_ == 0) return;
  for (const auto& [p, e] : flux_) {
    if (!ByPaths(e)) continue;
    const std::optional<FpmRouteRef> now = refs_.Find(p);
    if (now && !(now->set & kInlineBit) && work.groups.count(now->set)) work.touched.emplace(p, now);
  }
}

void FpmTable::KernelRoute(const KernelRouteView& k) {
  if (k.table != options_.table) return;
  if (kernel_dump_ && !k.deleted && k.nh_id != 0 && k.prefix.family() == Family::kV6 && ShownInThisDump(k.prefix)) {
    KernelRouteView behind = k;  // a dump shows an IPv6 prefix's routes of one metric in order: the first forwards
    behind.behind = true;
    KernelWord(behind);
    return;
  }
  KernelWord(k);
  if (kernel_dump_ && !k.deleted) MarkDumpShown(k.prefix);
}

void FpmTable::KernelWord(const KernelRouteView& k) {
  if (SeveralRoutesWord(k)) return;
  const Prefix& p = k.prefix;
  std::optional<FpmRouteRef> now = refs_.Find(p);
  const FpmFluxEntry seen = FluxEntryOf(k);
  auto f = flux_.find(p);
  // A stale copy (zebra away, or not replayed since it came back: it will
  // not send the delete) and a placeholder (FPM's word on it is lost) go
  // with the kernel's deletion.
  const bool drop = k.deleted && now && (now->stale || IsPlaceholder(now->set));
  if (!drop && f == flux_.end() && Agrees(now, seen)) {  // the usual echo: nothing to keep or say
    NoteKernelNh(p, now, seen.present ? seen.nh_id : 0);
    return;
  }
  FrameWork work;
  work.kernel_word = true;
  work.touched.emplace(p, now);
  if (drop) {
    EraseRef(p, *now);
    Release(now->set);
    ++counts_.kernel_dropped;
    now.reset();
  }
  if (f != flux_.end()) {
    const FpmFluxEntry was = f->second;
    flux_by_paths_ += ByPaths(seen) - ByPaths(was);
    f->second = seen;
    f->second.punted = was.punted;
    f->second.by_frame = was.by_frame;
    if (k.replace) {  // took the first route's place; those behind it stay (an add had none: NLM_F_EXCL)
      f->second.behind = was.behind;
      f->second.behind_nh = was.behind_nh;
    }
  } else if (!Agrees(now, seen)) {
    if (flux_.size() < options_.flux_max || EvictWaiting()) {
      flux_.emplace(p, seen);
      flux_by_paths_ += ByPaths(seen);
    } else {
      NlRoute placeholder;
      placeholder.type = RTN_UNICAST;
      placeholder.unsupported = kFluxFull;
      PutRef(p, FpmRouteRef{SetOf(placeholder), now && now->stale, k.protocol, 0}, now);
      if (now) Release(now->set);
      ++counts_.flux_overflows;
    }
  }
  Finish(work);
  // The list of waiting entries names some that punt again or are gone:
  // rebuilt when it outgrows the map.
  if (flux_waiting_.size() > 2 * flux_.size() + 1024) {
    flux_waiting_.clear();
    for (const auto& [q, e] : flux_) {
      if (!e.punted) flux_waiting_.push_back(q);
    }
  }
}

// ---- the kernel's re-dump -------------------------------------------------

void FpmTable::KernelDumpBegins() {
  kernel_dump_ = true;
  dump_shown_erased_.clear();
  refs_.Walk(0, refs_.size(), [](const Prefix&, FpmRouteRef& ref) { ref.kernel_seen = false; });
  for (auto& [p, e] : flux_) {
    e.dumped = false;
    e.behind = 0;  // the dump shows them again (KernelRoute)
    e.behind_nh = 0;
  }
}

void FpmTable::MarkDumpShown(const Prefix& p) {
  if (std::optional<FpmRouteRef> ref = refs_.Find(p); ref && !ref->kernel_seen) {
    ref->kernel_seen = true;
    refs_.Put(p, *ref);
  }
  if (auto f = flux_.find(p); f != flux_.end()) f->second.dumped = true;
}

bool FpmTable::DumpShownBefore(const Prefix& p) {
  if (dump_shown_erased_.erase(p)) return true;
  auto f = flux_.find(p);
  return f != flux_.end() && f->second.dumped;
}

void FpmTable::DumpDidNotShow(const Prefix& p, uint8_t protocol) {
  KernelWordGone(p, protocol);
  ++counts_.kernel_dump_gone;
}

// What the dump did not show is no longer in the kernel: the events that
// said so were lost. A prefix in flux whose kernel route was there stops
// punting if FPM has none either; a route FPM holds punts (in flux) until
// FPM's delete — a stale one goes at once — instead of forwarding where the
// kernel no longer does. The routes are walked in bounded rounds (a zebra
// restart may take them all), each route marked once judged; a dropped
// route may move one not yet walked behind the walk, hence walks until one
// finds nothing.
void FpmTable::KernelDumpEnds(bool complete) {
  if (!kernel_dump_) return;
  kernel_dump_ = false;
  std::unordered_set<Prefix>().swap(dump_shown_erased_);
  if (!complete) return;
  std::vector<Prefix> in_flux;
  for (const auto& [p, e] : flux_) {
    if (e.present && !e.dumped) in_flux.push_back(p);
  }
  for (const Prefix& p : in_flux) {
    const std::optional<FpmRouteRef> ref = refs_.Find(p);
    DumpDidNotShow(p, ref ? ref->protocol : 0);
  }
  constexpr size_t kRound = 4096;
  for (bool missed = true; missed;) {
    missed = false;
    size_t cursor = 0;
    do {
      std::vector<std::pair<Prefix, uint8_t>> round;
      cursor = refs_.Walk(cursor, kRound, [&](const Prefix& p, FpmRouteRef& ref) {
        if (!ref.kernel_seen && (flux_.empty() || !flux_.count(p))) round.emplace_back(p, ref.protocol);
        ref.kernel_seen = true;
      });
      const size_t before = refs_.size();
      for (const auto& [p, protocol] : round) {
        DumpDidNotShow(p, protocol);
        // A placeholder put for it (the flux map full) is judged too.
        if (std::optional<FpmRouteRef> ref = refs_.Find(p); ref && !ref->kernel_seen) {
          ref->kernel_seen = true;
          refs_.Put(p, *ref);
        }
      }
      missed = missed || refs_.size() != before;
    } while (cursor != 0);
  }
}

}  // namespace fibnic
