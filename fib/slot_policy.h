// Which next-hops own the hardware codes (slots 1 .. 2^bits - 1).
//
// Weight of a next-hop = the address space it answers (IPv4 /24s + IPv6
// routes). A free slot goes to the heaviest resolved next-hop without one; an
// owner is displaced only by a challenger at least `hysteresis` times (and
// strictly) heavier, so small changes never reshuffle codes. An owner whose
// weight drops to 0 frees its slot. An owner that becomes unresolved keeps its
// slot (its entry goes VALID=0: one write punts all its space, and one write
// restores it when the neighbour comes back).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "rib/route.h"

namespace fibnic {

struct SlotCandidate {
  NextHop nh;
  uint64_t weight = 0;
  bool resolved = false;
};

// owners[c - 1] = owner of code c. Pure: same inputs, same result; from empty
// owners the result is the top-`owners.size()` resolved next-hops by weight
// (ties: lower NextHop first).
std::vector<std::optional<NextHop>> AssignSlots(const std::vector<std::optional<NextHop>>& owners,
                                                const std::vector<SlotCandidate>& candidates, double hysteresis);

}  // namespace fibnic
