// Turns "the TCAM holds these slots, it should hold this entry set" into TCAM6
// writes such that every prefix of the write sequence, applied to the old
// slots, answers each destination with its old answer, its new answer or punt
// (the spec's update rules; docs/tcam6.md has the argument).
//
// Every write either fills an empty slot or empties a full one, so hwif's
// VALID dance never exposes a half-written entry and no write has a hidden
// intermediate state. Each candidate step is verified with SafeState (exact,
// over the regions the entries cut the address space into); when the cheap
// plan runs into a corner, the always-safe plan is used instead: empty the old
// entries shortest first, then fill the new ones longest first.
#pragma once

#include <cstdint>
#include <vector>

#include "device/fibnic_image.h"

namespace fibnic::tcam6 {

struct WritePlan {
  std::vector<TcamWrite> writes;
  std::vector<regs::Tcam6Entry> slots;  // the TCAM after all writes
  bool fallback = false;                // the always-safe plan was needed
};

// old_slots: the TCAM now (prefix masks, LPM-consistent order). target: the
// valid entries wanted (prefix masks, at most one per prefix, any order,
// at most old_slots.size() of them). max_writes: the step-by-step plan is
// abandoned for the always-safe one beyond this many writes (0: 4*slots+8).
WritePlan PlanWrites(const std::vector<regs::Tcam6Entry>& old_slots, const std::vector<regs::Tcam6Entry>& target,
                     size_t max_writes = 0);

// True if for every destination the first valid match in `cur` says punt or
// the same code as `old_slots` or `new_slots` would (exact, not sampled).
bool SafeState(const std::vector<regs::Tcam6Entry>& cur, const std::vector<regs::Tcam6Entry>& old_slots,
               const std::vector<regs::Tcam6Entry>& new_slots);

// Prefix length of a prefix mask (number of leading ones).
int MaskLen(uint64_t mask);

}  // namespace fibnic::tcam6
