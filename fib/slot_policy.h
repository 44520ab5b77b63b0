// Which adjacencies (fib/adjacency.h) own the hardware codes (slots 1 ..
// 2^bits - 1), given each one's weight (fib/resolver.cc: its share of the
// table in both families, held through a routing daemon's restart).
//
// A free slot goes to the heaviest resolved adjacency without one that
// carries something now (its last code if that one is free, so a returning
// adjacency is not renumbered). An owner is displaced only by a challenger at
// least `hysteresis` times (and strictly) heavier: a displacement rewrites the
// space of both (the owner's to punt, the challenger's to the code), so the
// space gained, c - v, must be at least (h - 1)/(h + 1) of the space
// rewritten, c + v. An owner whose weight drops to 0 frees its slot. An owner
// that becomes unresolved keeps its slot (its entry goes VALID=0: one write
// punts all its space, and one write restores it when the neighbour comes
// back). Pinned adjacencies (the operator's) rank above every other and are
// never displaced by an unpinned one. A kept owner (one a warm start adopted
// from the device, within its first hold) is neither freed nor displaced:
// the previous run may have held its weight higher than anything this run
// can see, so only after that hold does the policy judge it again.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "fib/adjacency.h"

namespace fibnic {

struct SlotCandidate {
  Adjacency adj;
  double weight = 0;     // what it is ranked by (held)
  bool carries = false;  // it answers some space now (a free slot is worth giving)
  bool resolved = false;
  bool pinned = false;
  bool kept = false;  // adopted at a warm start, within its first hold
  int last_code = 0;  // the code it last owned (0: none)
  NextHop first;      // its lowest next-hop: breaks ties between equal weights
};

// owners[c - 1] = owner of code c. Pure: same inputs, same result; from empty
// owners the result is the top-`owners.size()` resolved adjacencies that
// carry something, pinned first, then by weight (ties: the lower first
// next-hop first).
// `remembered` (by code; may be empty): codes an adjacency not waiting now
// last owned, given to newcomers only when no other code is free.
std::vector<std::optional<Adjacency>> AssignSlots(const std::vector<std::optional<Adjacency>>& owners,
                                                  const std::vector<SlotCandidate>& candidates, double hysteresis,
                                                  std::vector<bool> remembered = {});

}  // namespace fibnic
