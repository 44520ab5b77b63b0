#include "hwif/counters.h"

namespace fibnic {

StatusOr<uint64_t> ReadCounter64(Bar& bar, uint64_t offset) {
  ASSIGN_OR_RETURN(uint32_t hi, bar.Read32(offset + 4));
  ASSIGN_OR_RETURN(uint32_t lo, bar.Read32(offset));
  ASSIGN_OR_RETURN(uint32_t hi2, bar.Read32(offset + 4));
  if (hi2 != hi) {
    ASSIGN_OR_RETURN(lo, bar.Read32(offset));
    hi = hi2;
  }
  return (uint64_t{hi} << 32) | lo;
}

StatusOr<std::vector<PortCounters>> ReadPortCounters(Bar& bar, const regs::Caps& caps) {
  std::vector<PortCounters> out(caps.ports);
  for (uint32_t p = 0; p < caps.ports; ++p) {
    std::array<uint64_t, regs::kPortCounterCount> v{};
    for (int i = 0; i < regs::kPortCounterCount; ++i) {
      auto c = ReadCounter64(bar, regs::PortCountersOffset(p) + 8 * uint64_t(i));
      if (!c.ok()) {
        return c.status().WithContext("reading FIBNIC port " + std::to_string(p) + " counter " +
                                      regs::kPortCounterNames[i]);
      }
      v[i] = *c;
    }
    out[p] = PortCounters{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], 0};
  }
  for (uint32_t p = 0; caps.drop && p < caps.ports; ++p) {
    auto d = ReadCounter64(bar, regs::DropCounterOffset(p));
    if (!d.ok()) return d.status().WithContext("reading FIBNIC port " + std::to_string(p) + " DROP_COUNTERS");
    out[p].drop_route = *d;
  }
  return out;
}

StatusOr<ipnuma_regs::Counters> ReadIpnumaCounters(Bar& bar) {
  ipnuma_regs::Counters c;
  for (int i = 0; i < ipnuma_regs::kCounterCount; ++i) {
    auto v = ReadCounter64(bar, ipnuma_regs::kOffCounters + 8 * uint64_t(i));
    if (!v.ok()) return v.status().WithContext(std::string("reading IP-NUMA counter ") + ipnuma_regs::kCounterNames[i]);
    c.v[i] = *v;
  }
  return c;
}

}  // namespace fibnic
