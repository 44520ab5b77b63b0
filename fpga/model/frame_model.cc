#include "fpga/model/frame_model.h"

#include <cstring>

#include "common/ip.h"
#include "fpga/model/inet_checksum.h"
#include "device/fibnic_lookup.h"
#include "device/fibnic_regs.h"

namespace fibnic::fpga {
namespace {

constexpr size_t kEthHeader = 14;
constexpr size_t kIpv4Header = 20;  // only option-less headers are forwarded
constexpr size_t kIpv6Header = 40;
constexpr size_t kFcsBytes = 4;
static_assert(kInPlaceMinBytes == kEthHeader + kIpv6Header + 1, "the furthest byte PreCheck reads");
constexpr uint16_t kEtherIpv4 = 0x0800;
constexpr uint16_t kEtherArp = 0x0806;
constexpr uint16_t kEtherIpv6 = 0x86dd;
constexpr uint8_t kNextHopByHop = 0;
constexpr uint8_t kNextIcmpv6 = 58;

uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (uint32_t{p[3]} << 24); }

Reason FromHw(const HwDecision& d) {
  if (d.forward) return Reason::kForward;
  if (d.drop) return Reason::kDrop;
  const std::string_view why = d.why;
  if (why == "disabled") return Reason::kDisabled;
  if (why == "no-tcam-match") return Reason::kNoTcamMatch;
  if (why == "nexthop-invalid") return Reason::kNexthopInvalid;
  if (why == "neigh-miss") return Reason::kNeighMiss;
  return Reason::kCode0;  // "code-0" and a BAR too short to decode
}

// The framing and header checks, in the order the device applies them, on a
// frame `size` bytes long on the wire (FCS included). Only the bytes the
// checks reach are read: the headers, never past `size`.
Reason PreCheck(std::span<const uint8_t> bar, uint8_t ingress_port, const uint8_t* f, size_t size) {
  if (size < kEthHeader) return Reason::kRunt;
  const uint16_t type = Be16(&f[12]);
  const uint8_t* ip = &f[kEthHeader];
  if (type == kEtherIpv4 && size < kEthHeader + kIpv4Header) return Reason::kRunt;
  if (type == kEtherIpv6) {
    if (size < kEthHeader + kIpv6Header) return Reason::kRunt;
    if (ip[6] == kNextIcmpv6 && size < kEthHeader + kIpv6Header + 1) return Reason::kRunt;
  }
  static constexpr uint8_t kBroadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
  if (std::memcmp(&f[0], kBroadcast, 6) == 0) return Reason::kBroadcast;
  if (f[0] & 1) return Reason::kMulticast;
  const uint8_t* own = &bar[regs::PortMacOffset(ingress_port)];
  if (ingress_port >= bar[regs::kOffCaps0 + 2] || std::memcmp(&f[0], own, 6) != 0) return Reason::kOwnMacMiss;
  if (type == kEtherArp) return Reason::kArp;
  if (type == kEtherIpv4) {
    if ((ip[0] >> 4) != 4 || (ip[0] & 15) < 5) return Reason::kIpHeader;
    if ((ip[0] & 15) > 5) return Reason::kIpOptions;
    if (!Ipv4HeaderVerifies(ip, kIpv4Header)) return Reason::kBadChecksum;
    if (ip[8] <= 1) return Reason::kTtl;
    return Reason::kForward;
  }
  if (type == kEtherIpv6) {
    if ((ip[0] >> 4) != 6) return Reason::kIpHeader;
    if (ip[6] == kNextHopByHop) return Reason::kIpOptions;
    if (ip[7] <= 1) return Reason::kTtl;
    const uint8_t icmp_type = ip[kIpv6Header];
    if (ip[6] == kNextIcmpv6 && icmp_type >= 133 && icmp_type <= 137) return Reason::kNdp;
    return Reason::kForward;
  }
  return Reason::kNonIp;
}

// The checks and the table decision for a frame `size` bytes long on the
// wire: fills r's reason, code, TCAM entry and egress port; true when it is
// forwarded, with the next hop's MAC in *dst_mac.
bool Decide(std::span<const uint8_t> bar, const uint8_t* frame, size_t size, PipelineResult& r, MacAddr* dst_mac) {
  r.reason = PreCheck(bar, r.ingress_port, frame, size);
  if (r.reason != Reason::kForward) return false;
  const bool v4 = Be16(&frame[12]) == kEtherIpv4;
  const uint8_t* ip = &frame[kEthHeader];
  const IpAddr dst = v4 ? IpAddr::FromBytes(Family::kV4, ip + 16) : IpAddr::FromBytes(Family::kV6, ip + 24);
  const HwDecision d = HwLookup(bar.data(), bar.size(), dst);
  r.code = d.code;
  r.tcam_index = d.tcam_index;
  r.reason = FromHw(d);
  if (r.reason != Reason::kForward) return false;
  const auto caps = regs::Caps::Decode(Le32(&bar[regs::kOffCaps0]), Le32(&bar[regs::kOffCaps1]),
                                       Le32(&bar[regs::kOffCaps2]));
  if (d.port >= caps.ports) {
    r.reason = Reason::kPortInvalid;
    return false;
  }
  r.egress_port = d.port;
  *dst_mac = d.dst_mac;
  return true;
}

// RFC 1812 5.3.1 TTL, RFC 1624 checksum, new MACs: every byte the rewrite
// changes but the FCS.
void Rewrite(std::span<const uint8_t> bar, uint8_t egress_port, const MacAddr& dst_mac, uint8_t* f) {
  std::memcpy(&f[0], dst_mac.b.data(), 6);
  std::memcpy(&f[6], &bar[regs::PortMacOffset(egress_port)], 6);
  uint8_t* oip = &f[kEthHeader];
  if (Be16(&f[12]) == kEtherIpv4) {
    const uint16_t m_old = Be16(oip + 8);
    oip[8] = static_cast<uint8_t>(oip[8] - 1);
    const uint16_t hc = Rfc1624Update(Be16(oip + 10), m_old, Be16(oip + 8));
    oip[10] = static_cast<uint8_t>(hc >> 8);
    oip[11] = static_cast<uint8_t>(hc);
  } else {
    oip[7] = static_cast<uint8_t>(oip[7] - 1);
  }
}

void PutFcs(std::vector<uint8_t>& f, bool poison) {
  uint32_t crc = Crc32(f.data(), f.size() - 4);
  if (poison) crc = ~crc;
  for (int i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

}  // namespace

std::array<uint8_t, kTagBytes> PipelineResult::Tag() const {
  std::array<uint8_t, kTagBytes> t{};
  t[0] = forward() ? egress_port : kTagHost;
  t[1] = static_cast<uint8_t>(reason);
  t[2] = ingress_port;
  t[3] = code;
  t[4] = tcam_index < 0 ? kTagNoTcam : static_cast<uint8_t>(tcam_index);
  t[7] = kTagTrailer;
  return t;
}

PipelineResult RunPipelineModel(std::span<const uint8_t> bar, uint8_t ingress_port,
                                std::span<const uint8_t> frame) {
  PipelineResult r;
  r.ingress_port = ingress_port;
  r.frame.assign(frame.begin(), frame.end());
  MacAddr dst_mac;
  if (!Decide(bar, frame.data(), frame.size(), r, &dst_mac)) return r;
  Rewrite(bar, r.egress_port, dst_mac, r.frame.data());
  PutFcs(r.frame, !FcsOk(frame.data(), frame.size()));
  return r;
}

PipelineResult RunPipelineInPlace(std::span<const uint8_t> bar, uint8_t ingress_port, std::span<uint8_t> frame) {
  PipelineResult r;
  r.ingress_port = ingress_port;
  MacAddr dst_mac;
  // The checks read no further than kInPlaceMinBytes, so the FCS's four
  // bytes count in the length (the runt checks) but are never read.
  if (Decide(bar, frame.data(), frame.size() + kFcsBytes, r, &dst_mac))
    Rewrite(bar, r.egress_port, dst_mac, frame.data());
  return r;
}

}  // namespace fibnic::fpga
