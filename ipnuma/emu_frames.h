// The Ethernet II / IPv4 / UDP framing around an IP-NUMA datagram
// (docs/contract/IPNUMA.md, "Wire format v1": no IP options, DF set, TTL 64,
// UDP checksum computed by the sender and checked by the receiver). The NIC
// needs no ARP and no routes: the PC ID table names the MAC a frame goes to,
// and an answer goes back to the MAC the request came from.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/ip.h"

namespace fibnic::ipnuma {

inline constexpr size_t kEthHeaderBytes = 14;
inline constexpr size_t kIpv4HeaderBytes = 20;
inline constexpr size_t kUdpHeaderBytes = 8;
inline constexpr size_t kFrameOverhead = kEthHeaderBytes + kIpv4HeaderBytes + kUdpHeaderBytes;

// The addresses of one frame; IPv4 addresses are host-order integers.
struct FrameAddress {
  MacAddr src_mac, dst_mac;
  uint32_t src_ip = 0, dst_ip = 0;
  uint16_t src_port = 0, dst_port = 0;
};

// A frame carrying `payload`, both checksums filled in. ip_id numbers the
// datagram (informational with DF set: it is never fragmented).
std::vector<uint8_t> BuildUdpFrame(const FrameAddress& a, uint16_t ip_id, std::span<const uint8_t> payload);

// What a received frame is to a NIC at (mac, ip, port).
enum class FrameVerdict : uint8_t {
  kOurs,       // a well-formed UDP datagram to us: payload and from are set
  kNotOurs,    // another host's or protocol's traffic on the segment: ignored, uncounted
  kMalformed,  // addressed to us but broken (truncated, bad checksum, fragment, options): counted
};
struct ParsedFrame {
  FrameVerdict verdict = FrameVerdict::kNotOurs;
  FrameAddress from;  // src_* fields: the sender; dst_* fields: us
  std::span<const uint8_t> payload;
};
ParsedFrame ParseUdpFrame(std::span<const uint8_t> frame, const MacAddr& mac, uint32_t ip, uint16_t port);

// The Internet checksum (RFC 1071) of bytes, continuing from `sum`.
uint32_t ChecksumAdd(uint32_t sum, std::span<const uint8_t> bytes);
uint16_t ChecksumFold(uint32_t sum);

}  // namespace fibnic::ipnuma
