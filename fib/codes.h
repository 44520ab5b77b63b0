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
  // retired[c]: code c had an owner that loses it: zeroed everywhere and its
  // entry retired in the retire delta (a subset of owner_changes).
  std::vector<bool> retired;
  bool any_retired = false;

  // A group's code while the retire delta lands: its final code, or 0 when
  // that code changes owner (nothing may name it before its entry is valid).
  uint8_t RetirePhaseCode(NhgId g) const {
    const uint8_t c = after.GroupCode(g);
    return owner_changes[c] ? 0 : c;
  }
};

}  // namespace fibnic
