#include "hwif/fibnic_transition.h"

#include <cstring>

#include "device/fibnic_image_codec.h"
#include "hwif/entry_plan.h"
#include "hwif/fibnic_device.h"

namespace fibnic {
namespace {

template <typename Entry>
bool Valid(const Entry& e) {
  return e.valid();
}

size_t ChangedBytes(const uint8_t* a, const uint8_t* b, size_t n) {
  size_t c = 0;
  for (size_t i = 0; i < n; ++i) c += a[i] != b[i];
  return c;
}

// Steps 3 and 6 for one table: invalidate everything that differs, then
// (after the caller's middle steps) fill it.
template <typename Entry>
void InvalidateChanged(WritePlan& plan, const std::vector<Entry>& from, const std::vector<Entry>& to,
                       uint32_t (*offset)(uint32_t), const EntryLayout& layout) {
  for (uint32_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i]) continue;
    const auto a = from[i].Encode(), b = to[i].Encode();
    plan.AddChangedBytes(ChangedBytes(a.data(), b.data(), a.size()));
    auto now = a;
    PlanInvalidate(plan, offset(i), a, b, layout, now);
  }
}

template <typename Entry>
void FillChanged(WritePlan& plan, const std::vector<Entry>& from, const std::vector<Entry>& to,
                 uint32_t (*offset)(uint32_t), const EntryLayout& layout) {
  for (uint32_t i = 0; i < from.size(); ++i) {
    if (from[i] == to[i]) continue;
    auto a = from[i].Encode();
    const auto b = to[i].Encode();
    // What step 3 left: the flags word already final but with VALID=0.
    if (Valid(from[i])) {
      const size_t fw = layout.flags_byte / 4;
      std::memcpy(a.data() + 4 * fw, b.data() + 4 * fw, 4);
      a[layout.flags_byte] &= static_cast<uint8_t>(~layout.valid_bit);
    }
    PlanFill(plan, offset(i), a, b, layout);
  }
}

uint32_t NexthopOff(uint32_t i) { return regs::NexthopOffset(i); }
uint32_t NeighOff(uint32_t i) { return regs::NeighOffset(i); }

void PlanTcam(WritePlan& plan, const DeviceImage& from, const DeviceImage& to, uint32_t& control) {
  std::vector<uint32_t> adds, code_changes, removals, others;
  bool rematch = false;  // a live entry changes the addresses it matches
  for (uint32_t i = 0; i < from.tcam.size(); ++i) {
    const auto& a = from.tcam[i];
    const auto& b = to.tcam[i];
    if (a == b) continue;
    if (!a.valid() && b.valid()) adds.push_back(i);
    else if (a.valid() && !b.valid()) removals.push_back(i);
    else if (a.valid() && b.valid() && (a.value != b.value || a.mask != b.mask)) rematch = true;
    else if (a.valid() && b.valid()) code_changes.push_back(i);
    else others.push_back(i);  // both invalid: bytes only
  }
  if (adds.empty() && removals.empty() && code_changes.empty() && others.empty() && !rematch) return;
  auto entry = [&](uint32_t i) {
    const auto a = from.tcam[i].Encode(), b = to.tcam[i].Encode();
    plan.AddChangedBytes(ChangedBytes(a.data(), b.data(), a.size()));
    // An invalid TCAM entry does not punt, it lets the next matching entry
    // win — so only removals write VALID=0 first. Additions, code changes
    // (value/mask equal: the other differing words are reserved) and
    // both-invalid entries are filled with the flags word last.
    if (from.tcam[i].valid() && !to.tcam[i].valid()) {
      PlanEntry(plan, regs::Tcam6Offset(i), a, b, kTcamLayout);
    } else {
      PlanFill(plan, regs::Tcam6Offset(i), a, b, kTcamLayout);
    }
  };
  if (rematch) {
    // No write-by-write order is safe in general: IPv6 punts meanwhile.
    const bool v6_on = control & regs::kControlV6Enable;
    if (v6_on) {
      control &= ~regs::kControlV6Enable;
      plan.Add(regs::kOffControl, control);
    }
    for (uint32_t i = 0; i < from.tcam.size(); ++i) {
      if (!(from.tcam[i] == to.tcam[i])) entry(i);
    }
    if (v6_on && (to.control & regs::kControlV6Enable)) {
      control |= regs::kControlV6Enable;
      plan.Add(regs::kOffControl, control);
    }
    return;
  }
  for (uint32_t i : others) entry(i);
  for (uint32_t i : adds) entry(i);  // ascending
  for (uint32_t i : code_changes) entry(i);
  for (auto it = removals.rbegin(); it != removals.rend(); ++it) entry(*it);  // descending
}

void PlanSram(WritePlan& plan, const std::vector<uint8_t>& from, const std::vector<uint8_t>& to) {
  const size_t n = to.size();
  // Room for every changed word first (a table load changes most of them;
  // growing by doubling would hold twice that for a moment).
  size_t changed = 0;
  for (size_t w = 0; w < n; w += 4) changed += std::memcmp(from.data() + w, to.data() + w, 4) != 0;
  plan.Reserve(changed);
  // Compare 8 bytes at a time; most of a table is unchanged.
  for (size_t off = 0; off < n; off += 8) {
    uint64_t a, b;
    std::memcpy(&a, from.data() + off, 8);
    std::memcpy(&b, to.data() + off, 8);
    if (a == b) continue;
    for (size_t w = off; w < off + 8; w += 4) {
      uint32_t x, y;
      std::memcpy(&x, from.data() + w, 4);
      std::memcpy(&y, to.data() + w, 4);
      if (x == y) continue;
      plan.AddChangedBytes(ChangedBytes(from.data() + w, to.data() + w, 4));
      plan.Add(regs::kOffSram4 + w, y);
    }
  }
}

}  // namespace

StatusOr<WritePlan> PlanTransition(const DeviceImage& from, const DeviceImage& to) {
  if (!(from.caps == to.caps)) {
    return FailedPrecondition("device is model " + DescribeModel(from.caps) + ", the compiled tables are for " +
                              DescribeModel(to.caps));
  }
  if (from.sram.size() % 8 != 0 || from.sram.size() != to.sram.size()) {
    return InvalidArgument("SRAM images of " + std::to_string(from.sram.size()) + " and " +
                           std::to_string(to.sram.size()) + " bytes");
  }
  for (uint32_t i = 0; i < to.caps.nexthop_entries && i < to.nexthop.size(); ++i) {
    RETURN_IF_ERROR(CheckNexthopEntry(to.caps, i, to.nexthop[i]));
  }
  WritePlan plan;
  uint32_t control = from.control;
  plan.AddChangedBytes(ChangedBytes(reinterpret_cast<const uint8_t*>(&from.control),
                                    reinterpret_cast<const uint8_t*>(&to.control), 4));
  // 1. Disable what the target disables.
  if ((control & to.control) != control) {
    control &= to.control;
    plan.Add(regs::kOffControl, control);
  }
  // 2. Port source MACs.
  for (uint32_t p = 0; p < to.caps.ports; ++p) {
    if (from.port_macs[p] == to.port_macs[p]) continue;
    const auto& a = from.port_macs[p].b;
    const auto& b = to.port_macs[p].b;
    plan.AddChangedBytes(ChangedBytes(a.data(), b.data(), 6));
    uint32_t lo, hi = uint32_t{b[4]} | (uint32_t{b[5]} << 8);
    std::memcpy(&lo, b.data(), 4);
    plan.Add(regs::PortMacOffset(p), lo);
    plan.Add(regs::PortMacOffset(p) + 4, hi);
  }
  // 3. Changed NEXTHOP and NEIGH entries stop being used.
  InvalidateChanged(plan, from.nexthop, to.nexthop, NexthopOff, kNexthopLayout);
  InvalidateChanged(plan, from.neigh, to.neigh, NeighOff, kNeighLayout);
  // 4. TCAM6 (counts its own changed bytes).
  PlanTcam(plan, from, to, control);
  // 5. SRAM4.
  PlanSram(plan, from.sram, to.sram);
  // 6. New NEIGH and NEXTHOP entries, VALID last.
  FillChanged(plan, from.neigh, to.neigh, NeighOff, kNeighLayout);
  FillChanged(plan, from.nexthop, to.nexthop, NexthopOff, kNexthopLayout);
  // 7. Enable what the target enables.
  if (control != to.control) {
    plan.Add(regs::kOffControl, to.control);
  }
  return plan;
}

}  // namespace fibnic
