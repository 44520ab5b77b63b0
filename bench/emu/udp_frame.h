// The UDP/IPv4 test frame both traffic sources of bench/emu offer
// (emu_frame_blast, emu_xdp_frame_gen): the same bytes from either, so the
// sources differ only in how the frames enter the first veth.
#pragma once

#include <arpa/inet.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

namespace emu_bench {

inline bool ParseMac(const char* s, uint8_t* out) {
  unsigned b[6];
  if (std::sscanf(s, "%x:%x:%x:%x:%x:%x", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5]) != 6) return false;
  for (int i = 0; i < 6; ++i) out[i] = static_cast<uint8_t>(b[i]);
  return true;
}

inline uint16_t Checksum(const uint8_t* p, size_t n) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < n; i += 2) sum += (p[i] << 8) | p[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

// Ethernet, IPv4 and UDP headers: what a forwarder rewrites.
inline constexpr size_t kUdpHeaders = 14 + 20 + 8;

// Ethernet + IPv4 (TTL 64, valid checksum) + UDP (checksum 0: none), `bytes`
// long without the FCS.
inline std::vector<uint8_t> Frame(const uint8_t* dst, const uint8_t* src, in_addr ip_dst, size_t bytes) {
  std::vector<uint8_t> f(bytes, 0);
  std::memcpy(&f[0], dst, 6);
  std::memcpy(&f[6], src, 6);
  f[12] = 0x08;
  uint8_t* ip = &f[14];
  const size_t ip_len = bytes - 14;
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>(ip_len >> 8);
  ip[3] = static_cast<uint8_t>(ip_len);
  ip[8] = 64;
  ip[9] = 17;
  const uint8_t ip_src[4] = {192, 0, 2, 1};
  std::memcpy(ip + 12, ip_src, 4);
  std::memcpy(ip + 16, &ip_dst, 4);
  const uint16_t c = Checksum(ip, 20);
  ip[10] = static_cast<uint8_t>(c >> 8);
  ip[11] = static_cast<uint8_t>(c);
  uint8_t* udp = ip + 20;
  udp[0] = 0x9c;  // ports 40000 -> 9 (discard)
  udp[1] = 0x40;
  udp[3] = 9;
  const size_t udp_len = ip_len - 20;
  udp[4] = static_cast<uint8_t>(udp_len >> 8);
  udp[5] = static_cast<uint8_t>(udp_len);
  return f;
}

}  // namespace emu_bench
