// Ordered bus writes for one table entry (NEXTHOP, NEIGH, TCAM6) going from
// what the device holds to what it must hold. The entry's VALID bit lives in
// one 32-bit "flags word" that also carries other fields (NEXTHOP: MAC tail +
// port; NEIGH: MAC tail + port; TCAM6: code), so the order of word writes is
// what keeps every intermediate state either the old entry, the new entry, or
// an invalid (punting) entry:
//   - new entry invalid:   flags word first (VALID=0), then the other words;
//   - old entry invalid:   other words first, flags word last (VALID=1);
//   - both valid, several words differ: flags word with VALID=0 (and the new
//     tail bytes — harmless while invalid), the other words, flags word last;
//   - both valid, one word differs: that single write — it is atomic on the
//     bus, so the device sees the whole old entry, then the whole new one (a
//     subset of the states the three-write sequence passes through).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "hwif/write_plan.h"

namespace fibnic {

// Layout of one table's entries: where the VALID bit is.
struct EntryLayout {
  uint32_t flags_byte;  // byte offset of the flags byte inside the entry
  uint8_t valid_bit;    // mask inside that byte
};
inline constexpr EntryLayout kNexthopLayout{7, 0x01};
inline constexpr EntryLayout kNeighLayout{23, 0x01};
inline constexpr EntryLayout kTcamLayout{17, 0x01};

// Full transition of one entry (the rules above). No writes if equal.
void PlanEntry(WritePlan& plan, uint64_t base, std::span<const uint8_t> from, std::span<const uint8_t> to,
               const EntryLayout& layout);

// The two halves of an entry transition, for callers that must do other
// writes in between (warm restart): Invalidate writes the flags word with
// VALID=0 if `from` is valid and differs from `to`, and returns the bytes the
// device then holds; Fill writes the remaining differing words, flags word last.
void PlanInvalidate(WritePlan& plan, uint64_t base, std::span<const uint8_t> from, std::span<const uint8_t> to,
                    const EntryLayout& layout, std::span<uint8_t> now);
void PlanFill(WritePlan& plan, uint64_t base, std::span<const uint8_t> from, std::span<const uint8_t> to,
              const EntryLayout& layout);

}  // namespace fibnic
