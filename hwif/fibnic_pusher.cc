#include "hwif/fibnic_pusher.h"

#include <algorithm>
#include <cstring>

#include "device/fibnic_image_codec.h"
#include "hwif/entry_plan.h"
#include "hwif/fibnic_device.h"
#include "hwif/fibnic_readback.h"
#include "hwif/fibnic_transition.h"

namespace fibnic {
namespace {

size_t ChangedBytes32(uint32_t a, uint32_t b) {
  size_t n = 0;
  for (int i = 0; i < 4; ++i) n += ((a >> (8 * i)) & 0xff) != ((b >> (8 * i)) & 0xff);
  return n;
}

template <typename Entry>
void PlanEntryChange(WritePlan& plan, uint32_t offset, Entry& now, const Entry& to, const EntryLayout& layout) {
  PlanEntry(plan, offset, now.Encode(), to.Encode(), layout);
  now = to;
}

}  // namespace

Status FibnicPusher::Sync(const DeviceImage& target) {
  in_sync_ = false;
  ASSIGN_OR_RETURN(FibnicReadback rb, ReadFibnic(bar_));
  return SyncFrom(rb, target);
}

Status FibnicPusher::SyncFrom(const FibnicReadback& rb, const DeviceImage& target) {
  in_sync_ = false;
  ASSIGN_OR_RETURN(WritePlan plan, PlanTransition(rb.image, target));
  generation_ = rb.generation;
  KeepTables(target);
  last_ = PushStats{};
  if (plan.empty()) {
    in_sync_ = true;
    return OkStatus();
  }
  RETURN_IF_ERROR(RunBatch(plan).WithContext("warm restart"));
  in_sync_ = true;
  return OkStatus();
}

Status FibnicPusher::CheckDelta(const DeviceDelta& d) const {
  const auto& c = shadow_.caps;
  auto bad = [](const char* what, uint32_t i, uint32_t n) {
    return InvalidArgument(std::string("delta names ") + what + " " + std::to_string(i) + ", device has " +
                           std::to_string(n));
  };
  for (const auto* v : {&d.nexthop_activate, &d.nexthop_retire}) {
    for (const auto& w : *v) {
      if (w.index == 0 || w.index >= c.nexthop_entries) return bad("NEXTHOP", w.index, c.nexthop_entries);
      RETURN_IF_ERROR(CheckNexthopEntry(c, w.index, w.entry));
    }
  }
  for (const auto* v : {&d.neigh_activate, &d.neigh_retire}) {
    for (const auto& w : *v) {
      if (w.index >= c.neigh_entries) return bad("NEIGH", w.index, c.neigh_entries);
    }
  }
  for (const auto& w : d.tcam) {
    if (w.index >= c.tcam_entries) return bad("TCAM6", w.index, c.tcam_entries);
  }
  if (d.sram_values.size() != d.sram_words.size() || d.sram_before.size() != d.sram_words.size()) {
    return InvalidArgument("delta has " + std::to_string(d.sram_words.size()) + " SRAM4 word indexes but " +
                           std::to_string(d.sram_values.size()) + " values and " +
                           std::to_string(d.sram_before.size()) + " values before");
  }
  const uint32_t max_value = c.code_bits == 4 ? 0xFFFFu : 0xFFu;
  for (size_t i = 0; i < d.sram_words.size(); ++i) {
    if (d.sram_words[i] >= shadow_.sram_words()) return bad("SRAM4 word", d.sram_words[i], shadow_.sram_words());
    if (i > 0 && d.sram_words[i] <= d.sram_words[i - 1]) {
      return InvalidArgument("delta SRAM4 word indexes are not ascending at position " + std::to_string(i));
    }
    if (d.sram_values[i] > max_value || d.sram_before[i] > max_value) {
      return InvalidArgument("delta SRAM4 word " + std::to_string(d.sram_words[i]) + " value " +
                             std::to_string(std::max(d.sram_values[i], d.sram_before[i])) + " does not fit a " +
                             std::to_string(c.code_bits * 4) + "-bit word");
    }
  }
  for (uint32_t p : d.port_macs) {
    if (p >= c.ports) return bad("port", p, c.ports);
  }
  return OkStatus();
}

namespace {

// Position of SRAM word w in a delta's ascending word list, or -1.
ptrdiff_t Find(const DeviceDelta& d, uint32_t w) {
  auto it = std::lower_bound(d.sram_words.begin(), d.sram_words.end(), w);
  return it != d.sram_words.end() && *it == w ? it - d.sram_words.begin() : -1;
}

}  // namespace

void FibnicPusher::PlanSramWords(const std::vector<DeviceDelta>& deltas, size_t i, const DeviceImage& target,
                                 WritePlan& plan) {
  const DeviceDelta& d = deltas[i];
  const uint32_t wb = regs::SramWordBytes(shadow_.caps.code_bits);
  const uint32_t per_bus = 4 / wb;
  // What the device holds in word w as delta i begins: what an earlier delta
  // of this commit wrote, else what the first delta from i on that names it
  // found there, else the target's (this commit leaves it as it was).
  auto device_word = [&](uint32_t w) -> uint16_t {
    for (size_t j = i; j-- > 0;) {
      if (const ptrdiff_t k = Find(deltas[j], w); k >= 0) return deltas[j].sram_values[size_t(k)];
    }
    for (size_t j = i; j < deltas.size(); ++j) {
      if (const ptrdiff_t k = Find(deltas[j], w); k >= 0) return deltas[j].sram_before[size_t(k)];
    }
    const uint8_t* at = target.sram.data() + size_t{w} * wb;
    return wb == 2 ? static_cast<uint16_t>(at[0] | at[1] << 8) : at[0];
  };
  auto put = [wb](uint8_t* bytes, uint32_t slot, uint16_t v) {
    bytes[slot * wb] = static_cast<uint8_t>(v);
    if (wb == 2) bytes[slot * wb + 1] = static_cast<uint8_t>(v >> 8);
  };
  // Apply the delta's words to the device's bytes of each touched 32-bit bus
  // word, then write each bus word once (ascending, as the indexes are).
  size_t k = 0;
  while (k < d.sram_words.size()) {
    const uint32_t bus = d.sram_words[k] / per_bus;
    uint8_t now[4], want[4];
    for (uint32_t s = 0; s < per_bus; ++s) {
      const uint32_t w = bus * per_bus + s;
      const ptrdiff_t named = k < d.sram_words.size() && d.sram_words[k] == w ? ptrdiff_t(k) : -1;
      put(now, s, named >= 0 ? d.sram_before[size_t(named)] : device_word(w));
      put(want, s, named >= 0 ? d.sram_values[size_t(named)] : device_word(w));
      if (named >= 0) ++k;
    }
    uint32_t was, value;
    std::memcpy(&was, now, 4);
    std::memcpy(&value, want, 4);
    if (value == was) continue;
    plan.AddChangedBytes(ChangedBytes32(was, value));
    plan.Add(regs::kOffSram4 + 4 * uint64_t{bus}, value);
  }
}

void FibnicPusher::PlanDelta(const std::vector<DeviceDelta>& deltas, size_t i, const DeviceImage& target,
                             WritePlan& plan) {
  const DeviceDelta& d = deltas[i];
  // Families the target switches off go off before anything else changes.
  if ((shadow_.control & target.control) != shadow_.control) {
    shadow_.control &= target.control;
    plan.Add(regs::kOffControl, shadow_.control);
  }
  for (uint32_t p = 0; p < shadow_.caps.ports; ++p) {
    if (shadow_.port_macs[p] == target.port_macs[p]) continue;
    const auto& m = target.port_macs[p].b;
    uint32_t lo;
    std::memcpy(&lo, m.data(), 4);
    plan.Add(regs::PortMacOffset(p), lo);
    plan.Add(regs::PortMacOffset(p) + 4, uint32_t{m[4]} | (uint32_t{m[5]} << 8));
    shadow_.port_macs[p] = target.port_macs[p];
  }
  for (const auto& w : d.nexthop_activate) {
    PlanEntryChange(plan, regs::NexthopOffset(w.index), shadow_.nexthop[w.index], w.entry, kNexthopLayout);
  }
  for (const auto& w : d.neigh_activate) {
    PlanEntryChange(plan, regs::NeighOffset(w.index), shadow_.neigh[w.index], w.entry, kNeighLayout);
  }
  for (const auto& w : d.tcam) {
    PlanEntryChange(plan, regs::Tcam6Offset(w.index), shadow_.tcam[w.index], w.entry, kTcamLayout);
  }
  PlanSramWords(deltas, i, target, plan);
  for (const auto& w : d.neigh_retire) {
    PlanEntryChange(plan, regs::NeighOffset(w.index), shadow_.neigh[w.index], w.entry, kNeighLayout);
  }
  for (const auto& w : d.nexthop_retire) {
    PlanEntryChange(plan, regs::NexthopOffset(w.index), shadow_.nexthop[w.index], w.entry, kNexthopLayout);
  }
  if (shadow_.control != target.control) {
    shadow_.control = target.control;
    plan.Add(regs::kOffControl, shadow_.control);
  }
}

Status FibnicPusher::RunBatch(WritePlan& plan) {
  plan.Add(regs::kOffGeneration, generation_ + 1);
  Status st = ExecutePlan(bar_, plan);
  if (st.ok() && options_.verify) st = VerifyPlan(bar_, plan);
  if (st.ok()) st = bar_.Flush();
  PushStats s = plan.Stats();
  s.batches = 1;
  last_.Add(s);
  total_.Add(s);
  if (!st.ok()) {
    in_sync_ = false;
    return st;
  }
  ++generation_;
  return OkStatus();
}

Status FibnicPusher::Push(const std::vector<DeviceDelta>& deltas, const DeviceImage& target) {
  if (!in_sync_) {
    return FailedPrecondition("FIBNIC push refused: the device state is not known (no Sync yet, or a write failed); "
                              "Sync first");
  }
  if (!(target.caps == shadow_.caps)) {
    return FailedPrecondition("compiled tables are for model " + DescribeModel(target.caps) + ", device is " +
                              DescribeModel(shadow_.caps));
  }
  for (size_t i = 0; i < deltas.size(); ++i) {
    RETURN_IF_ERROR(CheckDelta(deltas[i]).WithContext("delta " + std::to_string(i + 1) + " of " +
                                                      std::to_string(deltas.size())));
  }
  last_ = PushStats{};
  last_target_ = &target;
  for (size_t i = 0; i < deltas.size(); ++i) {
    WritePlan plan;
    PlanDelta(deltas, i, target, plan);
    if (plan.empty()) continue;
    RETURN_IF_ERROR(RunBatch(plan));
  }
  return OkStatus();
}

void FibnicPusher::KeepTables(const DeviceImage& target) {
  shadow_.caps = target.caps;
  shadow_.control = target.control;
  shadow_.port_macs = target.port_macs;
  shadow_.nexthop = target.nexthop;
  shadow_.tcam = target.tcam;
  shadow_.neigh = target.neigh;
  last_target_ = &target;
}

}  // namespace fibnic
