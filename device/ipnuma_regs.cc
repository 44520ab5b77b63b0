#include "device/ipnuma_regs.h"

#include <cstring>

namespace fibnic::ipnuma_regs {
namespace {

void PutBe32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

uint32_t GetBe32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

void PutLe64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

uint32_t GetLe32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// A network-order IPv4 stored in a little-endian 32-bit register: the value the
// bus write carries so that the bytes land in network order.
uint32_t NetWord(uint32_t host_order) {
  uint8_t b[4];
  PutBe32(b, host_order);
  return GetLe32(b);
}

}  // namespace

Caps Caps::Decode(uint32_t c0, uint32_t c1) {
  Caps c;
  c.pages = c0;
  c.pcid_entries = static_cast<uint16_t>(c1 & 0xffff);
  c.region_entries = static_cast<uint16_t>(c1 >> 16);
  return c;
}

Status Caps::Validate() const {
  if (pages == 0) return FailedPrecondition("CAPS0: page count is 0");
  if (pcid_entries < 2 || pcid_entries > kMaxPcidEntries) {
    return FailedPrecondition("CAPS1[15:0]: " + std::to_string(pcid_entries) +
                              " PC ID entries (allowed 2.." + std::to_string(kMaxPcidEntries) + ")");
  }
  if (region_entries < 1 || region_entries > kMaxRegionEntries) {
    return FailedPrecondition("CAPS1[31:16]: " + std::to_string(region_entries) +
                              " region entries (allowed 1.." + std::to_string(kMaxRegionEntries) + ")");
  }
  return OkStatus();
}

std::array<uint8_t, kPcidStride> PcidEntry::Encode() const {
  std::array<uint8_t, kPcidStride> out{};
  PutBe32(out.data(), ip);
  std::memcpy(out.data() + 4, mac.b.data(), 6);
  out[10] = flags;
  return out;
}

PcidEntry PcidEntry::Decode(const uint8_t* p) {
  PcidEntry e;
  e.ip = GetBe32(p);
  std::memcpy(e.mac.b.data(), p + 4, 6);
  e.flags = p[10];
  return e;
}

std::array<uint8_t, kRegionStride> RegionEntry::Encode() const {
  std::array<uint8_t, kRegionStride> out{};
  PutLe64(out.data(), base);
  PutLe64(out.data() + 8, length);
  PutBe32(out.data() + 16, peer_ip);
  PutBe32(out.data() + 20, mask);
  out[24] = flags;
  return out;
}

RegionEntry RegionEntry::Decode(const uint8_t* p) {
  RegionEntry e;
  e.base = GetLe64(p);
  e.length = GetLe64(p + 8);
  e.peer_ip = GetBe32(p + 16);
  e.mask = GetBe32(p + 20);
  e.flags = p[24];
  return e;
}

Counters Counters::Decode(const uint8_t* p) {
  Counters c;
  for (int i = 0; i < kCounterCount; ++i) c.v[i] = GetLe64(p + 8 * i);
  return c;
}

ExtCounters ExtCounters::Decode(const uint8_t* p) {
  ExtCounters c;
  for (int i = 0; i < kExtCounterCount; ++i) c.v[i] = GetLe64(p + 8 * i);
  return c;
}

std::array<uint8_t, 8 * kExtCounterCount> ExtCounters::Encode() const {
  std::array<uint8_t, 8 * kExtCounterCount> out{};
  for (int i = 0; i < kExtCounterCount; ++i) PutLe64(out.data() + 8 * i, v[i]);
  return out;
}

WireParams DecodeWireParams(const uint8_t* bar0) {
  WireParams w;
  const uint32_t window = GetLe32(bar0 + kOffCaps2) & 0xffff;
  if (window != 0) w.tx_window = static_cast<uint16_t>(window);
  const uint32_t mp = GetLe32(bar0 + kOffMaxPayload);
  if (mp != 0) {
    // Largest power of two not above the value, within [64, 4096].
    uint32_t p2 = kMaxPayloadDefault;
    while (p2 * 2 <= mp && p2 * 2 <= kMaxPayloadMax) p2 *= 2;
    w.max_payload = p2;
  }
  const uint32_t rl = GetLe32(bar0 + kOffRetryLimit);
  if (rl != 0) w.retry_limit = rl > kRetryLimitMax ? kRetryLimitMax : rl;
  const uint32_t t = GetLe32(bar0 + kOffRetxTimeoutNs);
  if (t != 0) w.retx_timeout_ns = t;
  w.epoch_base = static_cast<uint16_t>(GetLe32(bar0 + kOffEpochBase));
  return w;
}

LocalRegs DecodeLocalRegs(const uint8_t* bar0) {
  LocalRegs r;
  r.control = GetLe32(bar0 + kOffControl);
  r.local_ip = GetBe32(bar0 + kOffLocalIp);
  r.netmask = GetBe32(bar0 + kOffNetmask);
  r.gateway_ip = GetBe32(bar0 + kOffGatewayIp);
  std::memcpy(r.local_mac.b.data(), bar0 + kOffLocalMac, 6);
  r.udp_port = static_cast<uint16_t>(bar0[kOffUdpPort] | (bar0[kOffUdpPort + 1] << 8));
  r.retx_timeout_ns = GetLe32(bar0 + kOffRetxTimeoutNs);
  return r;
}

std::array<std::pair<uint32_t, uint32_t>, 8> EncodeLocalRegs(const LocalRegs& r) {
  const auto& m = r.local_mac.b;
  return {{
      {kOffLocalIp, NetWord(r.local_ip)},
      {kOffNetmask, NetWord(r.netmask)},
      {kOffGatewayIp, NetWord(r.gateway_ip)},
      {kOffLocalMac, GetLe32(m.data())},
      {kOffLocalMac + 4, uint32_t{m[4]} | (uint32_t{m[5]} << 8)},
      {kOffUdpPort, r.udp_port},
      {kOffRetxTimeoutNs, r.retx_timeout_ns},
      {kOffControl, r.control},
  }};
}

std::string Ipv4String(uint32_t host_order) { return IpAddr::V4(host_order).ToString(); }

}  // namespace fibnic::ipnuma_regs
