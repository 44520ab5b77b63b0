#include "fpga/model/inet_checksum.h"

#include <cstring>

namespace fibnic::fpga {
namespace {

uint16_t Fold(uint32_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(s);
}

}  // namespace

uint16_t OnesSum(const uint8_t* data, size_t len) {
  uint32_t s = 0;
  for (size_t i = 0; i + 1 < len; i += 2) s += (uint32_t{data[i]} << 8) | data[i + 1];
  if (len & 1) s += uint32_t{data[len - 1]} << 8;
  return Fold(s);
}

uint16_t Ipv4HeaderChecksum(const uint8_t* header, size_t len) {
  uint8_t copy[kMaxIpv4Header];
  if (len > sizeof copy) len = sizeof copy;
  std::memcpy(copy, header, len);
  copy[10] = copy[11] = 0;
  return static_cast<uint16_t>(~OnesSum(copy, len));
}

bool Ipv4HeaderVerifies(const uint8_t* header, size_t len) { return OnesSum(header, len) == 0xffff; }

uint16_t Rfc1624Update(uint16_t hc, uint16_t m_old, uint16_t m_new) {
  const uint32_t s = uint32_t{static_cast<uint16_t>(~hc)} + static_cast<uint16_t>(~m_old) + m_new;
  return static_cast<uint16_t>(~Fold(s));
}

namespace {

// Slicing-by-8 tables for the reflected polynomial 0xedb88320: table[0] is
// the classic byte-at-a-time table, table[k][i] advances table[k-1][i] by one
// more zero byte. Eight bytes per step: the emulator runs this on every frame.
struct Crc32Tables {
  uint32_t t[8][256];
  constexpr Crc32Tables() : t{} {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int b = 0; b < 8; ++b) c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
      t[0][i] = c;
    }
    for (int k = 1; k < 8; ++k)
      for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
  }
};
constexpr Crc32Tables kCrc;

}  // namespace

uint32_t Crc32(const uint8_t* data, size_t len) {
  uint32_t c = 0xffffffffu;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const uint32_t lo = c ^ (data[i] | (data[i + 1] << 8) | (data[i + 2] << 16) | (uint32_t{data[i + 3]} << 24));
    c = kCrc.t[7][lo & 0xff] ^ kCrc.t[6][(lo >> 8) & 0xff] ^ kCrc.t[5][(lo >> 16) & 0xff] ^ kCrc.t[4][lo >> 24] ^
        kCrc.t[3][data[i + 4]] ^ kCrc.t[2][data[i + 5]] ^ kCrc.t[1][data[i + 6]] ^ kCrc.t[0][data[i + 7]];
  }
  for (; i < len; ++i) c = (c >> 8) ^ kCrc.t[0][(c ^ data[i]) & 0xff];
  return ~c;
}

bool FcsOk(const uint8_t* frame, size_t len) {
  if (len < 4) return false;
  const uint8_t* f = frame + len - 4;
  const uint32_t got = f[0] | (f[1] << 8) | (f[2] << 16) | (uint32_t{f[3]} << 24);
  return Crc32(frame, len - 4) == got;
}

}  // namespace fibnic::fpga
