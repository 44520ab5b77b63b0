// Which adjacencies (fib/adjacency.h) own the hardware codes (slots 1 ..
// 2^bits - 1).
//
// Weight of an adjacency = the address space its next-hops answer (IPv4 /24s
// + IPv6 routes). A free slot goes to the heaviest resolved one without one; an
// owner is displaced only by a challenger at least `hysteresis` times (and
// strictly) heavier, so small changes never reshuffle codes. An owner whose
// weight drops to 0 frees its slot. An owner that becomes unresolved keeps its
// slot (its entry goes VALID=0: one write punts all its space, and one write
// restores it when the neighbour comes back).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fib/adjacency.h"

namespace fibnic {

struct SlotCandidate {
  Adjacency adj;
  uint64_t weight = 0;
  bool resolved = false;
  NextHop first;  // its lowest next-hop: breaks ties between equal weights
};

// owners[c - 1] = owner of code c. Pure: same inputs, same result; from empty
// owners the result is the top-`owners.size()` resolved adjacencies by weight
// (ties: the lower first next-hop first).
std::vector<std::optional<Adjacency>> AssignSlots(const std::vector<std::optional<Adjacency>>& owners,
                                                  const std::vector<SlotCandidate>& candidates, double hysteresis);

}  // namespace fibnic
