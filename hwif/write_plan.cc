#include "hwif/write_plan.h"

#include <unordered_map>

#include "hwif/bar_words.h"
#include "device/fibnic_regs.h"
#include "hwif/probe.h"

namespace fibnic {

BarRegion RegionOf(uint64_t offset) {
  if (offset >= regs::kOffSram4) return BarRegion::kSram;
  if (offset >= regs::kOffNeigh) return BarRegion::kNeigh;
  if (offset >= regs::kOffTcam6) return BarRegion::kTcam;
  if (offset >= regs::kOffNexthop) return BarRegion::kNexthop;
  return BarRegion::kCsr;
}

const char* BarRegionName(BarRegion r) {
  switch (r) {
    case BarRegion::kCsr: return "csr";
    case BarRegion::kNexthop: return "nexthop";
    case BarRegion::kTcam: return "tcam";
    case BarRegion::kNeigh: return "neigh";
    case BarRegion::kSram: return "sram";
    case BarRegion::kCount: break;
  }
  return "?";
}

void PushStats::Add(const PushStats& o) {
  batches += o.batches;
  bus_writes += o.bus_writes;
  for (size_t i = 0; i < writes_by_region.size(); ++i) writes_by_region[i] += o.writes_by_region[i];
  changed_bytes += o.changed_bytes;
}

PushStats WritePlan::Stats() const {
  PushStats s;
  s.bus_writes = writes_.size();
  for (const auto& w : writes_) ++s.writes_by_region[static_cast<size_t>(RegionOf(w.offset))];
  s.changed_bytes = changed_bytes_;
  return s;
}

Status ExecutePlan(Bar& bar, const WritePlan& plan) {
  const auto& ws = plan.writes();
  for (size_t i = 0; i < ws.size(); ++i) {
    Status st = bar.Write32(ws[i].offset, ws[i].value);
    if (!st.ok()) {
      return st.WithContext("bus write " + std::to_string(i + 1) + " of " + std::to_string(ws.size()) + " (" +
                            BarRegionName(RegionOf(ws[i].offset)) + " at " + HexOffset(ws[i].offset) + ")");
    }
  }
  return OkStatus();
}

Status VerifyPlan(Bar& bar, const WritePlan& plan) {
  std::unordered_map<uint64_t, uint32_t> last;
  for (const auto& w : plan.writes()) last[w.offset] = w.value;
  for (const auto& [offset, want] : last) {
    ASSIGN_OR_RETURN(uint32_t got, bar.Read32(offset));
    if (got != want) {
      return IoError("verify after write: " + std::string(BarRegionName(RegionOf(offset))) + " word at " +
                     HexOffset(offset) + " reads " + Hex32(got) + ", wrote " + Hex32(want));
    }
  }
  return OkStatus();
}

}  // namespace fibnic
