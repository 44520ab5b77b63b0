// The hardware codes of a commit: which next-hop answers each group and which
// code each next-hop holds, as of the last commit and as of this one. The
// resolver (fib/resolver.h) makes them; every table compiler (SRAM4, TCAM6,
// NEXTHOP entries, NEIGH CAM) writes from them.
#pragma once

#include <cstdint>
#include <vector>

#include "rib/nexthop_table.h"

namespace fibnic {

struct GroupCodes {
  std::vector<int64_t> group_answer;  // by NhgId: the NhId the hardware should use (-1 = punt)
  std::vector<uint8_t> nh_code;       // by NhId: the code of its slot (0 = none)
  uint8_t GroupCode(NhgId g) const {
    if (g >= group_answer.size() || group_answer[g] < 0) return 0;
    return nh_code[static_cast<size_t>(group_answer[g])];
  }
};

// What one Commit() works from. Codes are 1 .. caps.slots(); the vectors by
// code have index 0 unused (always false).
struct CommitCodes {
  GroupCodes before;  // as of the last commit (what the device holds)
  GroupCodes after;   // this commit's
  // owner_changes[c]: code c gets another owner (or none) this commit, so its
  // NEXTHOP entry is not valid for the new owner before the main delta.
  std::vector<bool> owner_changes;
  // retired[c]: code c had an owner that loses it, or its entry becomes
  // valid for another MAC while some group's space moves off it: zeroed
  // everywhere and its entry retired in the retire delta (a subset of
  // owner_changes).
  std::vector<bool> retired;
  bool any_retired = false;
  // entry_changes[c]: code c's NEXTHOP entry is written in the main delta
  // (another owner, a MAC followed in place, VALID flipped).
  std::vector<bool> entry_changes;

  // A group's code while the retire delta lands: its final code, or 0 when
  // that code changes owner, or when the group moves onto a code whose entry
  // the main delta rewrites (nothing may name an entry before it is valid
  // for what names it).
  uint8_t RetirePhaseCode(NhgId g) const {
    const uint8_t c = after.GroupCode(g);
    if (owner_changes[c]) return 0;
    return entry_changes[c] && before.GroupCode(g) != c ? 0 : c;
  }
};

}  // namespace fibnic
