// FpmTable: zebra's inline routes against the kernel's object (docs/oracle.md,
// "zebra's update carries a path the kernel's group does not hold").
//
// In inline mode (`no fpm use-next-hop-groups`) zebra still installs its
// routes in the kernel by next-hop objects, but its FPM frames carry paths,
// no object. The kernel's word on a route is compared with FPM's when the
// kernel's event arrives (fpm_flux.cc); when they agree nothing is kept —
// but the kernel's event may be read before zebra's next frame for the same
// prefix, and that frame may carry paths the kernel's route does not: the
// kernel refused or delayed the update, or its group lost a member without a
// route message (FIBSYNC_SEED=80385425264765 FRRDIFF_NHG=0: zebra's route via
// k1, the kernel's group 2140 had lost its k1 member, the device followed
// zebra). So each inline route remembers the kernel's object of the last
// kernel word that agreed with it (FpmRouteRef::kernel_nh, in the route's
// kind: zebra shares one object among a path set's routes, so kinds barely
// multiply), and
// - a frame that gives the route a new set is compared with that object as
//   the kernel holds it now: different, the prefix is in flux with the
//   kernel's route by that object (the device does what the kernel does)
//   until the kernel's word or FPM's brings agreement — in the usual order
//   (zebra installs, then sends) the kernel's event that follows agrees and
//   ends it, so the device changes at the kernel's word;
// - the kernel changing or deleting that object (a group losing a member,
//   announced or by the carrier rule's kernel side) compares the route again.
// Routes by object (next-hop group mode) keep 0: their set is the kernel's
// id, compared as such. Only frames that change a route's set and whose route
// has an object pay a digest; a full-table load pays nothing.
#include <linux/rtnetlink.h>

#include "sources/fpm/fpm_table.h"

namespace fibnic {

std::optional<FpmFluxEntry> FpmTable::KernelObjectEntry(uint32_t id) const {
  if (!options_.kernel_object) return std::nullopt;
  const std::optional<NexthopObjects::Resolved> k = options_.kernel_object(id);
  if (!k) return std::nullopt;
  FpmFluxEntry e;
  e.present = true;
  e.nh_id = id;
  // As the kernel source tells a unicast route by the object (TellIgnoredRoute).
  e.digest = RouteMeaningDigest(k->type, k->paths, !k->unsupported.empty());
  return e;
}

void FpmTable::NoteKernelNh(const Prefix& p, const std::optional<FpmRouteRef>& now, uint32_t nh) {
  if (!now) return;
  const uint32_t want = (now->set & kInlineBit) && !NotInKernel(now->set) ? nh : 0;
  if (now->kernel_nh == want) return;
  FpmRouteRef ref = *now;
  ref.kernel_nh = want;
  PutRef(p, ref, now);
}

// Where FPM's route `ref` no longer agrees with the kernel's state `kernel`
// (of the object it agreed with; nullopt: not known), the ref forgets that
// object and the prefix goes into flux on the kernel's state (StepFlux, in
// Finish, punts it: the device gets the kernel's answer). Returns whether an
// entry was made; a full flux map leaves FPM's word, as before the rule.
bool FpmTable::FollowKernelObject(const Prefix& p, const FpmRouteRef& ref, const std::optional<FpmFluxEntry>& kernel,
                                  bool by_frame) {
  if (kernel && Agrees(ref, *kernel)) return false;  // the kernel's object forwards so too: still agreeing
  FpmRouteRef cleared = ref;
  cleared.kernel_nh = 0;  // a flux entry holds the kernel's state from here
  PutRef(p, cleared, ref);
  if (!kernel) return false;
  if (flux_.size() >= options_.flux_max && !EvictWaiting()) return false;
  FpmFluxEntry e = *kernel;
  e.by_frame = by_frame;
  flux_.emplace(p, e);
  return true;
}

void FpmTable::CheckFrameAgainstKernelNh(const Prefix& p, const FpmRouteRef& now) {
  if (!flux_.empty() && flux_.count(p)) return;  // StepFlux compares it with the kernel's last word
  FollowKernelObject(p, now, KernelObjectEntry(now.kernel_nh), true);
}

void FpmTable::RecheckKernelNhUsers(const std::set<uint32_t>& ids, bool gone) {
  bool named = false;
  for (uint32_t id : ids) named = named || refs_.NamesKernelNh(id);
  if (!named) return;
  FrameWork work;
  work.kernel_word = true;
  std::vector<std::pair<Prefix, FpmRouteRef>> users;
  refs_.Walk(0, refs_.size(), [&](const Prefix& p, FpmRouteRef& ref) {
    if (ref.kernel_nh != 0 && ids.count(ref.kernel_nh) && (flux_.empty() || !flux_.count(p))) users.emplace_back(p, ref);
  });
  for (auto& [p, ref] : users) {
    // Deleted: the kernel deleted the routes using the object with it.
    const std::optional<FpmFluxEntry> kernel = gone ? FpmFluxEntry{} : KernelObjectEntry(ref.kernel_nh);
    if (!FollowKernelObject(p, ref, kernel, false)) continue;
    ref.kernel_nh = 0;
    work.touched.emplace(p, ref);
  }
  if (!work.touched.empty()) Finish(work);
}

}  // namespace fibnic
