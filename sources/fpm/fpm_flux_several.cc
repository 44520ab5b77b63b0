// FpmTable: several IPv6 routes of one prefix and metric in the kernel.
//
// IPv6 keeps routes that do not qualify for multipath — routes by next-hop
// object never do — side by side when one is added without NLM_F_REPLACE
// next to one of the same metric: the new one goes behind, and the kernel
// forwards along the first (net/ipv6/ip6_fib.c, fib6_add_rt2node; checked
// on 6.18: `ip -6 route prepend` next to a route by object, then
// `ip route get`). Its notification keeps NLM_F_CREATE and drops
// NLM_F_EXCL (KernelRouteView::behind). zebra does this after a restart:
// the new zebra installs its routes next to its predecessor's and deletes
// those later (FIBSYNC_SEED=80385425264765 FRRDIFF_NHG=0: 97 prefixes, e.g.
// 2001:db8:100:40::/64 by nhid 2140 via k2 in front of zebra's new route by
// 2294 via k1 for seconds; the device took the new one at its add, and
// would have taken the prefix for gone at the old one's deletion).
//
// So a prefix with routes behind the first is in flux (its entry keeps the
// first route as the kernel's state, how many are behind, and the last
// one's object): the device does what the kernel does, along the first
// route, until it goes; then along the one behind it (when it was the only
// one: its object as the kernel holds it now), or a punt where which one
// is next is not known. Such an entry stays until the kernel holds one
// route again. A dump shows the routes in the kernel's order.
#include <linux/rtnetlink.h>

#include <cstdint>

#include "sources/fpm/fpm_table.h"

namespace fibnic {

bool FpmTable::SeveralRoutesWord(const KernelRouteView& k) {
  auto f = flux_.find(k.prefix);
  const bool several = f != flux_.end() && f->second.behind != 0;
  if (!k.behind && !(k.deleted && several)) return false;
  const Prefix& p = k.prefix;
  const std::optional<FpmRouteRef> now = refs_.Find(p);
  if (f == flux_.end()) {
    // No entry: FPM's route agrees with the kernel's, which stays first.
    if (flux_.size() >= options_.flux_max && !EvictWaiting()) return false;  // beyond: as if one route
    f = flux_.emplace(p, FrontOf(now)).first;
    flux_by_paths_ += ByPaths(f->second);
  }
  FpmFluxEntry& e = f->second;
  const bool by_paths = ByPaths(e);
  if (k.behind) {
    if (e.behind != UINT8_MAX) ++e.behind;
    e.behind_nh = k.nh_id;
  } else if (k.nh_id != 0 && k.nh_id == e.behind_nh) {
    --e.behind;  // the last one behind went; the one before it is not known
    e.behind_nh = 0;
  } else if ((k.nh_id != 0 && k.nh_id == e.nh_id) || e.behind == 1) {
    FrontGone(e);  // the first went (with one behind, any other deletion is the first's)
  } else {
    --e.behind;  // one between them (or the unknown first: it stays unknown)
  }
  flux_by_paths_ += ByPaths(e) - by_paths;
  FrameWork work;
  work.kernel_word = true;
  work.touched.emplace(p, now);
  Finish(work);
  return true;
}

FpmFluxEntry FpmTable::FrontOf(const std::optional<FpmRouteRef>& now) const {
  FpmFluxEntry e;
  e.present = true;
  if (!now || NotInKernel(now->set) || IsPlaceholder(now->set)) {
    // FPM's word was "no route", yet the kernel holds one in front: not known.
    e.digest = RouteMeaningDigest(RTN_UNICAST, {}, true);
    return e;
  }
  if (!(now->set & kInlineBit)) {
    e.nh_id = now->set;  // zebra's object id is the kernel's
  } else if (now->kernel_nh != 0) {
    e.nh_id = now->kernel_nh;
  }
  e.digest = DigestOf(now->set);
  return e;
}

void FpmTable::FrontGone(FpmFluxEntry& e) const {
  // With one behind, it forwards now; with more, the next one is not known.
  const uint32_t next = e.behind == 1 ? e.behind_nh : 0;
  --e.behind;
  if (e.behind == 0) e.behind_nh = 0;
  const std::optional<FpmFluxEntry> k = next != 0 ? KernelObjectEntry(next) : std::nullopt;
  e.present = true;
  e.nh_id = next;
  e.digest = k ? k->digest : RouteMeaningDigest(RTN_UNICAST, {}, true);
}

bool FpmTable::ShownInThisDump(const Prefix& p) const {
  if (const std::optional<FpmRouteRef> ref = refs_.Find(p); ref && ref->kernel_seen) return true;
  if (auto f = flux_.find(p); f != flux_.end() && f->second.dumped) return true;
  return dump_shown_erased_.count(p) != 0;
}

}  // namespace fibnic
