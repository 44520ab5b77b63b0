// The safe way from any FIBNIC table state to any other (warm restart: the
// device holds what a previous daemon left, the host has just compiled the
// current routes). Unlike a DeviceDelta, nothing is known about why entries
// differ — a NEXTHOP slot may have a new owner, the TCAM may be reshuffled —
// so the planner relies only on the lookup semantics. Order (docs/hwif.md has
// the argument):
//   1. CONTROL: families the target disables are disabled first.
//   2. PORT_MAC of ports that differ.
//   3. Every NEXTHOP and NEIGH entry that differs and is VALID: VALID=0.
//      From here on any code naming a changed slot punts, so codes may move.
//   4. TCAM6 entries that differ: if no live entry changes what it matches,
//      additions in ascending index order, code-only changes, removals in
//      descending index order (each intermediate TCAM answers every address
//      as the old or the new TCAM does); otherwise IPv6 forwarding is switched
//      off around the rewrite (everything IPv6 punts for a few writes).
//   5. SRAM4: every 32-bit word that differs, ascending.
//   6. The differing NEIGH entries, then NEXTHOP entries, written with VALID last.
//   7. CONTROL: families the target enables.
// Equal images give an empty plan; k differing words/entries give O(k) writes.
#pragma once

#include "device/fibnic_image.h"
#include "hwif/write_plan.h"

namespace fibnic {

StatusOr<WritePlan> PlanTransition(const DeviceImage& from, const DeviceImage& to);

}  // namespace fibnic
