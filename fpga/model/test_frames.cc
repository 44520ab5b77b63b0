#include "fpga/model/test_frames.h"

#include <cstring>

#include "fpga/model/inet_checksum.h"

namespace fibnic::fpga {
namespace {

void PutBe16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v >> 8);
  p[1] = static_cast<uint8_t>(v);
}

void FillPayload(std::vector<uint8_t>& f, size_t from, uint32_t seed) {
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = from; i < f.size(); ++i) {
    x = x * 1103515245u + 12345u;
    f[i] = static_cast<uint8_t>(x >> 16);
  }
}

void PutEthernet(std::vector<uint8_t>& f, const MacAddr& dst, const MacAddr& src, uint16_t type) {
  std::memcpy(&f[0], dst.b.data(), 6);
  std::memcpy(&f[6], src.b.data(), 6);
  PutBe16(&f[12], type);
}

}  // namespace

void SealFcs(std::vector<uint8_t>& f) {
  const uint32_t crc = Crc32(f.data(), f.size() - 4);
  for (int i = 0; i < 4; ++i) f[f.size() - 4 + i] = static_cast<uint8_t>(crc >> (8 * i));
}

std::vector<uint8_t> BuildIpFrame(const FrameSpec& s) {
  std::vector<uint8_t> f(s.size, 0);
  FillPayload(f, 14, s.payload_seed);
  uint8_t* ip = &f[14];
  if (s.dst.is_v4()) {
    PutEthernet(f, s.dst_mac, s.src_mac, 0x0800);
    const size_t hlen = 20 + 4u * s.ipv4_option_words;
    ip[0] = static_cast<uint8_t>(0x40 | (5 + s.ipv4_option_words));
    ip[1] = 0;
    PutBe16(ip + 2, static_cast<uint16_t>(s.size - 14 - 4));
    PutBe16(ip + 4, static_cast<uint16_t>(s.payload_seed));
    PutBe16(ip + 6, 0x4000);  // DF
    ip[8] = s.ttl;
    ip[9] = s.protocol;
    const auto src = s.src.bytes(), dst = s.dst.bytes();
    std::memcpy(ip + 12, src.data(), 4);
    std::memcpy(ip + 16, dst.data(), 4);
    for (size_t i = 20; i < hlen; ++i) ip[i] = 1;  // NOP options
    uint16_t hc = Ipv4HeaderChecksum(ip, hlen);
    if (s.bad_ip_checksum) hc = static_cast<uint16_t>(hc ^ 0x0100);
    PutBe16(ip + 10, hc);
  } else {
    PutEthernet(f, s.dst_mac, s.src_mac, 0x86dd);
    ip[0] = 0x60;
    ip[1] = ip[2] = ip[3] = 0;
    PutBe16(ip + 4, static_cast<uint16_t>(s.size - 14 - 40 - 4));
    ip[6] = s.protocol;
    ip[7] = s.ttl;
    const auto src = s.src.bytes(), dst = s.dst.bytes();
    std::memcpy(ip + 8, src.data(), 16);
    std::memcpy(ip + 24, dst.data(), 16);
    if (s.protocol == 58) ip[40] = s.icmp6_type;
  }
  SealFcs(f);
  if (s.bad_fcs) f.back() ^= 0x5a;
  return f;
}

std::vector<uint8_t> BuildEtherFrame(const MacAddr& dst_mac, uint16_t ethertype, size_t size, uint32_t seed) {
  std::vector<uint8_t> f(size, 0);
  FillPayload(f, 14, seed);
  PutEthernet(f, dst_mac, MacAddr{{0x02, 0, 0, 0, 0, 0x98}}, ethertype);
  SealFcs(f);
  return f;
}

}  // namespace fibnic::fpga
