#include "hwif/fibnic_device.h"

#include <cstring>

#include "hwif/bar_words.h"
#include "hwif/bpf_bar.h"
#include "hwif/probe.h"

namespace fibnic {
namespace {

void PutLe32(std::vector<uint8_t>& out, uint32_t offset, uint32_t v) { std::memcpy(out.data() + offset, &v, 4); }

// What the register map leaves room for: the CSR block's port arrays end at
// NEXTHOP, NEXTHOP/TCAM6 have their 4 KiB / 8 KiB windows, NEIGH runs up to SRAM4.
Status CheckCapsDrivable(const regs::Caps& c) {
  auto bad = [&](const std::string& why) {
    return FailedPrecondition("FIBNIC CAPS (" + Hex32(c.caps0()) + " " + Hex32(c.caps1()) + " " + Hex32(c.caps2()) +
                              ") describe a model this software cannot drive: " + why);
  };
  if (c.sram_addr_bits != 22) return bad("SRAM address bits " + std::to_string(c.sram_addr_bits) + ", expected 22");
  if (c.code_bits != 2 && c.code_bits != 4) return bad("code bits " + std::to_string(c.code_bits) + ", expected 2 or 4");
  if (c.nexthop_entries != (1u << c.code_bits)) {
    return bad("next-hop entries " + std::to_string(c.nexthop_entries) + ", expected 2^code bits");
  }
  if (c.ports == 0 || regs::PortCountersOffset(c.ports) > regs::kOffNexthop ||
      regs::PortMacOffset(c.ports) > regs::kOffPortCounters) {
    return bad("port count " + std::to_string(c.ports));
  }
  if (c.tcam_entries == 0 || regs::Tcam6Offset(c.tcam_entries) > regs::kOffNeigh) {
    return bad("TCAM entries " + std::to_string(c.tcam_entries));
  }
  if (regs::NeighOffset(c.neigh_entries) > regs::kOffSram4) {
    return bad("neighbour entries " + std::to_string(c.neigh_entries));
  }
  return OkStatus();
}

}  // namespace

std::vector<uint8_t> FibnicCsrPreset(const regs::Caps& caps) {
  std::vector<uint8_t> out(regs::kOffControl, 0);
  PutLe32(out, regs::kOffId, regs::kId);
  PutLe32(out, regs::kOffVersion, regs::kVersion);
  PutLe32(out, regs::kOffCaps0, caps.caps0());
  PutLe32(out, regs::kOffCaps1, caps.caps1());
  PutLe32(out, regs::kOffCaps2, caps.caps2());
  return out;
}

std::string DescribeModel(const regs::Caps& caps) {
  const size_t mib = caps.sram_bytes() >> 20;
  return std::to_string(caps.code_bits) + "-bit (" + std::to_string(mib) + " MiB SRAM, " +
         std::to_string(caps.slots()) + " next-hops, " + std::to_string(caps.tcam_entries) + " TCAM entries)";
}

StatusOr<regs::Caps> ProbeFibnic(Bar& bar, const regs::Caps* expected) {
  RETURN_IF_ERROR(CheckRange("FIBNIC probe", 0, regs::kOffControl, bar.size()));
  RETURN_IF_ERROR(ExpectRegister(bar, "FIBNIC ID", regs::kOffId, regs::kId));
  RETURN_IF_ERROR(ExpectRegister(bar, "FIBNIC VERSION (major)", regs::kOffVersion, regs::kVersion & 0xFFFF0000u,
                                 0xFFFF0000u));
  ASSIGN_OR_RETURN(uint32_t c0, bar.Read32(regs::kOffCaps0));
  ASSIGN_OR_RETURN(uint32_t c1, bar.Read32(regs::kOffCaps1));
  ASSIGN_OR_RETURN(uint32_t c2, bar.Read32(regs::kOffCaps2));
  const auto caps = regs::Caps::Decode(c0, c1, c2);
  RETURN_IF_ERROR(CheckCapsDrivable(caps));
  if (caps.bar_bytes() > bar.size()) {
    return FailedPrecondition("FIBNIC CAPS at " + HexOffset(regs::kOffCaps0) + " describe a " +
                              std::to_string(caps.bar_bytes()) + "-byte BAR but it has only " +
                              std::to_string(bar.size()) + " bytes");
  }
  // The model must be the one configured; DROP is the device's to announce
  // (a card built before it drives as before, its blackholes punted).
  if (expected != nullptr && !caps.SameModel(*expected)) {
    return FailedPrecondition("FIBNIC CAPS at " + HexOffset(regs::kOffCaps0) + ": expected model " +
                              DescribeModel(*expected) + " (CAPS " + Hex32(expected->caps0()) + " " +
                              Hex32(expected->caps1()) + " " + Hex32(expected->caps2()) + "), found " +
                              DescribeModel(caps) + " (CAPS " + Hex32(c0) + " " + Hex32(c1) + " " + Hex32(c2) + ")");
  }
  return caps;
}

StatusOr<std::unique_ptr<MappedBar>> OpenFibnicFile(const std::string& path, const regs::Caps& caps) {
  std::unique_ptr<MappedBar> bar;
  if (IsBpfFsPath(path)) {
    ASSIGN_OR_RETURN(bar, BpfBar::OpenOrCreate(path, caps.bar_bytes(), FibnicCsrPreset(caps)));
  } else {
    ASSIGN_OR_RETURN(bar, FileBar::OpenOrCreate(path, caps.bar_bytes(), FibnicCsrPreset(caps)));
  }
  auto probed = ProbeFibnic(*bar, &caps);
  if (!probed.ok()) return probed.status().WithContext("BAR file " + path);
  return bar;
}

}  // namespace fibnic
