#include "device/fibnic_lookup.h"

#include <cstring>

namespace fibnic {
namespace {

uint32_t Le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }

HwDecision Punt(uint8_t code, const char* why) {
  HwDecision d;
  d.code = code;
  d.why = why;
  return d;
}

}  // namespace

std::string HwDecision::ToString() const {
  if (drop) return "drop code " + std::to_string(code);
  if (!forward) return std::string("punt (") + why + ")";
  return "forward code " + std::to_string(code) + " port " + std::to_string(port) + " mac " + dst_mac.ToString();
}

HwDecision HwLookup(const uint8_t* bar, size_t bar_size, const IpAddr& dst) {
  const auto caps = regs::Caps::Decode(Le32(bar + regs::kOffCaps0), Le32(bar + regs::kOffCaps1),
                                       Le32(bar + regs::kOffCaps2));
  if (bar_size < caps.bar_bytes()) return Punt(0, "short-bar");
  const uint32_t control = Le32(bar + regs::kOffControl);

  uint8_t code = 0;
  int tcam_index = -1;
  if (dst.is_v4()) {
    if (!(control & regs::kControlV4Enable)) return Punt(0, "disabled");
    code = regs::SramCode(bar + regs::kOffSram4, caps.code_bits, dst.v4() >> 8);
  } else {
    if (!(control & regs::kControlV6Enable)) return Punt(0, "disabled");
    for (uint32_t i = 0; i < caps.tcam_entries; ++i) {
      auto e = regs::Tcam6Entry::Decode(bar + regs::Tcam6Offset(i));
      if (e.Matches(dst.v6_hi())) {
        tcam_index = static_cast<int>(i);
        code = e.code;
        break;
      }
    }
    if (tcam_index < 0) return Punt(0, "no-tcam-match");
  }
  if (code == 0 || code >= caps.nexthop_entries) {
    auto d = Punt(code, "code-0");
    d.tcam_index = tcam_index;
    return d;
  }
  const auto nh = regs::NexthopEntry::Decode(bar + regs::NexthopOffset(code));
  if (!nh.valid()) {
    auto d = Punt(code, "nexthop-invalid");
    d.tcam_index = tcam_index;
    return d;
  }
  HwDecision d;
  d.code = code;
  d.tcam_index = tcam_index;
  // Only a device that announces DROP drops; on an older one the bit is
  // reserved, and the host never writes it there (DeviceImage::Check).
  if (caps.drop && nh.drop()) {
    d.drop = true;
    d.why = "drop";
    return d;
  }
  d.port = nh.port;
  d.dst_mac = nh.dst_mac;
  if (nh.connected()) {
    const auto want = dst.mapped16();
    bool hit = false;
    for (uint32_t i = 0; i < caps.neigh_entries; ++i) {
      auto n = regs::NeighEntry::Decode(bar + regs::NeighOffset(i));
      if (n.valid() && n.addr == want) {
        d.dst_mac = n.mac;
        d.port = n.port;
        hit = true;
        break;
      }
    }
    if (!hit) {
      auto p = Punt(code, "neigh-miss");
      p.tcam_index = tcam_index;
      return p;
    }
  }
  d.forward = true;
  d.why = "forward";
  return d;
}

}  // namespace fibnic
