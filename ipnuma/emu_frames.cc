#include "ipnuma/emu_frames.h"

#include <cstring>

namespace fibnic::ipnuma {
namespace {

constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint8_t kProtoUdp = 17;
constexpr uint16_t kFlagDontFragment = 0x4000;
constexpr uint16_t kFragmentBits = 0x3fff;  // MF and the offset: any fragment
constexpr uint8_t kTtl = 64;

void Put16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}
void Put32(uint8_t* p, uint32_t v) {
  Put16(p, static_cast<uint16_t>(v >> 16));
  Put16(p + 2, static_cast<uint16_t>(v));
}
uint16_t Get16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }
uint32_t Get32(const uint8_t* p) { return (uint32_t{Get16(p)} << 16) | Get16(p + 2); }

// The UDP checksum's sum over the IPv4 pseudo header and the UDP datagram.
uint32_t UdpSum(uint32_t src, uint32_t dst, std::span<const uint8_t> udp) {
  uint8_t pseudo[12];
  Put32(pseudo, src);
  Put32(pseudo + 4, dst);
  pseudo[8] = 0;
  pseudo[9] = kProtoUdp;
  Put16(pseudo + 10, static_cast<uint16_t>(udp.size()));
  return ChecksumAdd(ChecksumAdd(0, pseudo), udp);
}

}  // namespace

uint32_t ChecksumAdd(uint32_t sum, std::span<const uint8_t> bytes) {
  size_t i = 0;
  for (; i + 1 < bytes.size(); i += 2) sum += Get16(bytes.data() + i);
  if (i < bytes.size()) sum += uint32_t{bytes[i]} << 8;  // an odd last byte is padded with 0
  // Fold as we go so a 64 KiB datagram cannot overflow the 32-bit sum.
  return (sum & 0xffff) + (sum >> 16);
}

uint16_t ChecksumFold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

std::vector<uint8_t> BuildUdpFrame(const FrameAddress& a, uint16_t ip_id, std::span<const uint8_t> payload) {
  std::vector<uint8_t> f(kFrameOverhead + payload.size());
  uint8_t* eth = f.data();
  std::memcpy(eth, a.dst_mac.b.data(), 6);
  std::memcpy(eth + 6, a.src_mac.b.data(), 6);
  Put16(eth + 12, kEtherTypeIpv4);
  uint8_t* ip = eth + kEthHeaderBytes;
  ip[0] = 0x45;  // version 4, 5 words: no options
  ip[1] = 0;
  Put16(ip + 2, static_cast<uint16_t>(kIpv4HeaderBytes + kUdpHeaderBytes + payload.size()));
  Put16(ip + 4, ip_id);
  Put16(ip + 6, kFlagDontFragment);
  ip[8] = kTtl;
  ip[9] = kProtoUdp;
  Put32(ip + 12, a.src_ip);
  Put32(ip + 16, a.dst_ip);
  Put16(ip + 10, ChecksumFold(ChecksumAdd(0, {ip, kIpv4HeaderBytes})));
  uint8_t* udp = ip + kIpv4HeaderBytes;
  Put16(udp, a.src_port);
  Put16(udp + 2, a.dst_port);
  Put16(udp + 4, static_cast<uint16_t>(kUdpHeaderBytes + payload.size()));
  if (!payload.empty()) std::memcpy(udp + kUdpHeaderBytes, payload.data(), payload.size());
  uint16_t sum = ChecksumFold(UdpSum(a.src_ip, a.dst_ip, {udp, kUdpHeaderBytes + payload.size()}));
  Put16(udp + 6, sum == 0 ? 0xffff : sum);  // 0 would mean "no checksum"
  return f;
}

ParsedFrame ParseUdpFrame(std::span<const uint8_t> frame, const MacAddr& mac, uint32_t our_ip, uint16_t port) {
  ParsedFrame out;
  // Whether the frame is for us is decided from fields at fixed offsets
  // before anything is trusted, so other traffic on the segment (ARP, IPv6,
  // the hosts' own TCP) is ignored rather than counted as malformed.
  if (frame.size() < kEthHeaderBytes + kIpv4HeaderBytes) return out;
  const uint8_t* eth = frame.data();
  if (std::memcmp(eth, mac.b.data(), 6) != 0 || Get16(eth + 12) != kEtherTypeIpv4) return out;
  const uint8_t* ip = eth + kEthHeaderBytes;
  if (Get32(ip + 16) != our_ip || ip[9] != kProtoUdp) return out;
  std::memcpy(out.from.src_mac.b.data(), eth + 6, 6);
  out.from.dst_mac = mac;
  out.from.src_ip = Get32(ip + 12);
  out.from.dst_ip = our_ip;
  out.verdict = FrameVerdict::kMalformed;
  // The contract's frames carry no options and are never fragmented; a
  // fragment's payload is not a whole datagram and its checksum cannot be checked.
  if (ip[0] != 0x45 || (Get16(ip + 6) & kFragmentBits) != 0) return out;
  if (ChecksumFold(ChecksumAdd(0, {ip, kIpv4HeaderBytes})) != 0) return out;
  const size_t ip_len = Get16(ip + 2);
  // Ethernet pads short frames, so the IP total length, not the frame, says
  // where the datagram ends.
  if (ip_len < kIpv4HeaderBytes + kUdpHeaderBytes || kEthHeaderBytes + ip_len > frame.size()) return out;
  const uint8_t* udp = ip + kIpv4HeaderBytes;
  const size_t udp_len = Get16(udp + 4);
  if (udp_len != ip_len - kIpv4HeaderBytes) return out;
  if (Get16(udp + 2) != port) {
    out.verdict = FrameVerdict::kNotOurs;  // another UDP service of that address
    return out;
  }
  // Checksum 0 means the sender computed none; the contract requires one.
  if (Get16(udp + 6) == 0 || ChecksumFold(UdpSum(out.from.src_ip, our_ip, {udp, udp_len})) != 0) return out;
  out.from.src_port = Get16(udp);
  out.from.dst_port = port;
  out.payload = std::span<const uint8_t>(udp + kUdpHeaderBytes, udp_len - kUdpHeaderBytes);
  out.verdict = FrameVerdict::kOurs;
  return out;
}

}  // namespace fibnic::ipnuma
