// Routes "in flux": zebra installs each route in the kernel first and sends
// it over FPM after, and on a loaded host the FPM stream trails the kernel by
// seconds to minutes. Meanwhile the device must not forward along a route the
// kernel no longer (or does not yet) forward along that way (issue #16).
//
// So the kernel source tells the FPM table the kernel's state of each of
// zebra's routes as it changes (KernelRouteView), without keeping it, and the
// table compares it with what FPM holds for the prefix:
// - they agree (both absent, or both present with the same next-hop object
//   id or the same route type and (gateway, ifindex) paths): nothing is kept
//   and nothing reaches the RIB — the kernel's echo of what FPM already
//   delivered costs one lookup;
// - they disagree: the prefix is in flux, and the device does what the
//   kernel does (FpmTable::KernelAnswer): no route where the kernel holds
//   none (the cover), the kernel's object's paths where its route is by an
//   object the kernel source holds (zebra installs every route by object),
//   a punt where neither is known — a kernel deletion stops forwarding
//   along the old route at once, a kernel addition FPM has not brought yet
//   beats the covering route, and where zebra's RIB is not the kernel's (an
//   install or update the kernel refused, which zebra keeps and replays)
//   the kernel's wins. So until an FPM frame brings a state that agrees
//   with the kernel's last one, or the kernel comes back to FPM's.
//   Agreement is by state, not by the order fibnicd reads the two streams in.
// - The entry itself goes only when FPM's own word agrees with the kernel's
//   last state: after the kernel came back to FPM's state, FPM still has to
//   pass through what the kernel passed through (zebra sends each kernel
//   change over FPM too; a bgpd restart deletes and re-adds), and each of
//   those states punts while it disagrees with the kernel's. When fibnicd
//   read FPM's frames first, no such word comes: the waiting entry (it
//   does not punt) is the first to give way when the map is full.
// Events lost (the kernel source's socket overran) are made up for by its
// re-dump: each route it shows is the kernel's word as an event's is, and
// at its end each prefix believed in the kernel that it did not show is
// taken as deleted there (FpmTable::KernelDumpEnds). Which were shown is a
// mark on FPM's route refs and on the flux entries, not a list of prefixes.
// Only prefixes in flux cost memory: a compact digest of the kernel's state
// (FpmFluxEntry) in a map bounded by FpmTableOptions::flux_max. When it is
// full of entries the RIB follows, a disagreeing prefix gets a punting placeholder in the route table
// instead (counted: flux_overflows) which FPM's next word on it replaces and
// the kernel's deletion removes.
#pragma once

#include <cstdint>
#include <vector>

#include "sources/netlink/kernel_route_view.h"
#include "sources/netlink/netlink_route.h"

namespace fibnic {

// A route's forwarding meaning as one number: its type, whether it is usable,
// and the set of its (gateway, ifindex) paths (order, weights and flags
// aside). Equal meanings have equal digests; unequal ones differ but for a
// 64-bit hash collision.
uint64_t RouteMeaningDigest(uint8_t type, const std::vector<NlPath>& paths, bool unusable);

// The kernel's last state of a prefix in flux.
struct FpmFluxEntry {
  uint64_t digest = 0;   // RouteMeaningDigest of the kernel's route (present)
  uint32_t nh_id = 0;    // the kernel route's next-hop object, 0 = inline
  bool present = false;  // the kernel holds the route
  bool punted = false;   // the RIB has the kernel's answer (KernelAnswer), not FPM's
  bool dumped = false;   // the kernel dump in progress showed the prefix (FpmTable::KernelDumpBegins)
  // Made at an FPM frame that left the kernel's agreeing object (FpmTable::
  // CheckFrameAgainstKernelNh): FPM is ahead, and the kernel's word that
  // agrees with it ends the entry (there is no older FPM state to wait for).
  bool by_frame = false;
  // IPv6 routes the kernel holds behind the one it forwards along (same
  // prefix and metric; KernelRouteView::behind), and the object of the last
  // one added: when the first goes, the next one forwards (fpm_flux_several.cc).
  uint8_t behind = 0;
  uint32_t behind_nh = 0;
};

FpmFluxEntry FluxEntryOf(const KernelRouteView& k);

}  // namespace fibnic
