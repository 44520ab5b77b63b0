// Chooses what the IPv6 TCAM holds: at most `budget` prefix entries over the
// first 64 bits of the destination that never misforward and fully offload the
// greatest total weight of routes (docs/tcam6.md has the model and the proof).
//
// Method: a tree DP over the compressed binary trie of the route prefixes
// (truncated to /64) — the candidate entry positions are the trie's nodes
// (route prefixes and their branching points). Entries are nested prefixes
// ordered longest first, so the TCAM behaves as an LPM over the chosen
// entries; an entry's "colour" is a next-hop code or punt. The DP is exact for
// that entry model: no set of <= budget entries placed on trie nodes offloads
// more weight. Code-0 routes and non-uniform /64s are holes the DP must keep
// punting; ties prefer entries already in the TCAM (fewer writes), then fewer
// entries.
#pragma once

#include <cstdint>
#include <vector>

#include "common/ip.h"
#include "fibsync/offload_state.h"

namespace fibnic::tcam6 {

struct OptRoute {
  Prefix prefix;        // IPv6, any length 0..128
  uint8_t code = 0;     // 0: the route's addresses must punt
  uint32_t weight = 1;  // what offloading the route is worth
};

// A prefix entry over the first 64 bits: len <= 64, value has no host bits.
struct OptEntry {
  uint64_t value = 0;
  uint8_t len = 0;
  uint8_t code = 0;  // 0 = punt hole
  bool operator==(const OptEntry&) const = default;
};

struct OptRouteState {
  OffloadState state = OffloadState::kPunted;
  PuntReason reason = PuntReason::kNone;  // why not (fully) offloaded
};

struct OptResult {
  std::vector<OptEntry> entries;        // at most one per prefix; LPM semantics
  std::vector<OptRouteState> states;    // parallel to the input routes (code-0 routes: punted, kNone)
  // Routes (<= /64, code != 0) whose every address outside mixed /64s is
  // answered in hardware — the objective — and their total weight.
  uint64_t covered_weight = 0;
  uint64_t covered_routes = 0;
};

// `prefer`: entries currently in the TCAM; among optimal answers, the one
// reusing most of them wins.
OptResult Optimize(const std::vector<OptRoute>& routes, uint32_t budget, const std::vector<OptEntry>& prefer);

uint64_t Mask64(int len);

}  // namespace fibnic::tcam6
