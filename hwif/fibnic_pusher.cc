#include "hwif/fibnic_pusher.h"

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

uint32_t Load32(const std::vector<uint8_t>& v, size_t off) {
  uint32_t x;
  std::memcpy(&x, v.data() + off, 4);
  return x;
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
  shadow_ = target;
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
  if (d.sram_values.size() != d.sram_words.size()) {
    return InvalidArgument("delta has " + std::to_string(d.sram_words.size()) + " SRAM4 word indexes but " +
                           std::to_string(d.sram_values.size()) + " values");
  }
  const uint32_t max_value = c.code_bits == 4 ? 0xFFFFu : 0xFFu;
  for (size_t i = 0; i < d.sram_words.size(); ++i) {
    if (d.sram_words[i] >= shadow_.sram_words()) return bad("SRAM4 word", d.sram_words[i], shadow_.sram_words());
    if (i > 0 && d.sram_words[i] <= d.sram_words[i - 1]) {
      return InvalidArgument("delta SRAM4 word indexes are not ascending at position " + std::to_string(i));
    }
    if (d.sram_values[i] > max_value) {
      return InvalidArgument("delta SRAM4 word " + std::to_string(d.sram_words[i]) + " value " +
                             std::to_string(d.sram_values[i]) + " does not fit a " +
                             std::to_string(c.code_bits * 4) + "-bit word");
    }
  }
  for (uint32_t p : d.port_macs) {
    if (p >= c.ports) return bad("port", p, c.ports);
  }
  return OkStatus();
}

void FibnicPusher::PlanSramWords(const DeviceDelta& d, WritePlan& plan) {
  const uint32_t wb = regs::SramWordBytes(shadow_.caps.code_bits);
  // Apply the delta's words to a copy of each touched 32-bit bus word, then
  // write each bus word once (ascending, as the indexes are).
  size_t i = 0;
  while (i < d.sram_words.size()) {
    const size_t bus = size_t{d.sram_words[i]} * wb / 4;
    const uint32_t now = Load32(shadow_.sram, 4 * bus);
    uint8_t bytes[4];
    std::memcpy(bytes, &now, 4);
    for (; i < d.sram_words.size() && size_t{d.sram_words[i]} * wb / 4 == bus; ++i) {
      const size_t at = size_t{d.sram_words[i]} * wb - 4 * bus;
      bytes[at] = static_cast<uint8_t>(d.sram_values[i]);
      if (wb == 2) bytes[at + 1] = static_cast<uint8_t>(d.sram_values[i] >> 8);
    }
    uint32_t want;
    std::memcpy(&want, bytes, 4);
    if (want == now) continue;
    plan.AddChangedBytes(ChangedBytes32(now, want));
    plan.Add(regs::kOffSram4 + 4 * uint64_t{bus}, want);
    std::memcpy(shadow_.sram.data() + 4 * bus, &want, 4);
  }
}

void FibnicPusher::PlanDelta(const DeviceDelta& d, const DeviceImage& target, WritePlan& plan) {
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
  PlanSramWords(d, plan);
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
  for (const auto& d : deltas) {
    WritePlan plan;
    PlanDelta(d, target, plan);
    if (plan.empty()) continue;
    RETURN_IF_ERROR(RunBatch(plan));
  }
  return OkStatus();
}

}  // namespace fibnic
