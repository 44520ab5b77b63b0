// Does the kernel still hold zebra's route for a prefix? Asked once per
// stale route at the end of a replay (FpmTable::SweepStale): zebra does not
// always delete its predecessor's routes from the kernel — FRR 8.4, when it
// cannot adopt one (a next-hop group naming a member it never learnt), leaves
// it there for good — and a route the host still forwards along must not
// leave the device for a covering route.
#pragma once

#include <cstdint>

#include "common/ip.h"

namespace fibnic {

// One RTM_GETROUTE (RTM_F_FIB_MATCH) for p's address: true when the kernel's
// best match is exactly p, in `table`, with `protocol`. False when it is not,
// or when the kernel could not be asked.
bool KernelHoldsRoute(const Prefix& p, uint32_t table, uint8_t protocol);

}  // namespace fibnic
