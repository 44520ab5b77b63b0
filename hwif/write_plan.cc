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

std::vector<BusWrite> WritePlan::writes() const {
  std::vector<BusWrite> out;
  out.reserve(size());
  ForEach([&out](size_t, uint64_t offset, uint32_t value) {
    out.push_back({offset, value});
    return true;
  });
  return out;
}

PushStats WritePlan::Stats() const {
  PushStats s;
  s.bus_writes = size();
  for (const Run& r : runs_) s.writes_by_region[static_cast<size_t>(RegionOf(r.offset))] += r.count;
  s.changed_bytes = changed_bytes_;
  return s;
}

Status ExecutePlan(Bar& bar, const WritePlan& plan) {
  Status failed;
  plan.ForEach([&](size_t i, uint64_t offset, uint32_t value) {
    Status st = bar.Write32(offset, value);
    if (st.ok()) return true;
    failed = st.WithContext("bus write " + std::to_string(i + 1) + " of " + std::to_string(plan.size()) + " (" +
                            BarRegionName(RegionOf(offset)) + " at " + HexOffset(offset) + ")");
    return false;
  });
  return failed;
}

Status VerifyPlan(Bar& bar, const WritePlan& plan) {
  std::unordered_map<uint64_t, uint32_t> last;
  plan.ForEach([&last](size_t, uint64_t offset, uint32_t value) {
    last[offset] = value;
    return true;
  });
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
