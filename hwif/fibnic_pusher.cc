#include "hwif/fibnic_pusher.h"

#include <cstring>

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
  ASSIGN_OR_RETURN(WritePlan plan, PlanTransition(rb.image, target));
  generation_ = rb.generation;
  shadow_ = target;
  pending_.clear();
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
  for (uint32_t a : d.sram_words) {
    if (a >= shadow_.sram_words()) return bad("SRAM4 word", a, shadow_.sram_words());
  }
  return OkStatus();
}

void FibnicPusher::PlanSramWords(const std::set<uint32_t>& bus_words, const DeviceImage& target, WritePlan& plan) {
  const int cb = shadow_.caps.code_bits;
  const uint32_t field = (1u << cb) - 1;
  // A slot is final when the device already holds the entry the image wants.
  std::vector<bool> final_slot(shadow_.nexthop.size());
  for (size_t s = 0; s < final_slot.size(); ++s) final_slot[s] = shadow_.nexthop[s] == target.nexthop[s];
  for (uint32_t b : bus_words) {
    const uint32_t now = Load32(shadow_.sram, 4 * size_t{b});
    uint32_t want = Load32(target.sram, 4 * size_t{b});
    bool deferred = false;
    for (int k = 0; k < 32 / cb; ++k) {
      const uint32_t shift = static_cast<uint32_t>(k * cb);
      const uint32_t cn = (want >> shift) & field, co = (now >> shift) & field;
      // Naming a slot that does not hold its final entry yet would send this
      // /24 to whatever the slot holds now: punt until the slot is final.
      if (cn != co && cn != 0 && !final_slot[cn]) {
        want &= ~(field << shift);
        deferred = true;
      }
    }
    if (deferred) {
      pending_.insert(b);
    } else {
      pending_.erase(b);
    }
    if (want == now) continue;
    plan.AddChangedBytes(ChangedBytes32(now, want));
    plan.Add(regs::kOffSram4 + 4 * uint64_t{b}, want);
    std::memcpy(shadow_.sram.data() + 4 * size_t{b}, &want, 4);
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
  std::set<uint32_t> bus_words(pending_);
  const uint32_t wb = regs::SramWordBytes(shadow_.caps.code_bits);
  for (uint32_t a : d.sram_words) bus_words.insert(a * wb / 4);
  PlanSramWords(bus_words, target, plan);
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
  if (!pending_.empty()) {
    // Slots became final in a retire phase: the deferred words can take their
    // codes now, in one more batch.
    WritePlan plan;
    PlanDelta(DeviceDelta{}, target, plan);
    if (!plan.empty()) RETURN_IF_ERROR(RunBatch(plan));
  }
  if (!pending_.empty()) {
    in_sync_ = false;
    return Internal("after the commit's deltas " + std::to_string(pending_.size()) +
                    " SRAM4 words still name next-hop slots the deltas never set to the compiled entry; they punt "
                    "until the next Sync");
  }
  return OkStatus();
}

}  // namespace fibnic
