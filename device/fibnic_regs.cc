#include "device/fibnic_regs.h"

#include <cstring>

namespace fibnic::regs {
namespace {

void PutBe64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
}

uint64_t GetBe64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}

}  // namespace

Caps Caps::Decode(uint32_t c0, uint32_t c1, uint32_t c2) {
  Caps c;
  c.sram_addr_bits = static_cast<uint8_t>(c0 & 0xff);
  c.code_bits = static_cast<uint8_t>((c0 >> 8) & 0xf);
  c.ports = static_cast<uint8_t>((c0 >> 16) & 0xff);
  c.nexthop_entries = static_cast<uint16_t>(c1 & 0xffff);
  c.tcam_entries = static_cast<uint16_t>(c1 >> 16);
  c.neigh_entries = static_cast<uint16_t>(c2 & 0xffff);
  c.drop = (c2 & kCaps2Drop) != 0;
  return c;
}

Caps Caps::Model2Bit() { return Caps{}; }

bool Caps::SameModel(const Caps& o) const {
  Caps a = *this;
  a.drop = o.drop;
  return a == o;
}

Caps Caps::Model4Bit() {
  Caps c;
  c.code_bits = 4;
  c.nexthop_entries = 16;
  return c;
}

std::array<uint8_t, kNexthopStride> NexthopEntry::Encode() const {
  std::array<uint8_t, kNexthopStride> out{};
  std::memcpy(out.data(), dst_mac.b.data(), 6);
  out[6] = port;
  out[7] = flags;
  return out;
}

NexthopEntry NexthopEntry::Decode(const uint8_t* p) {
  NexthopEntry e;
  std::memcpy(e.dst_mac.b.data(), p, 6);
  e.port = p[6];
  e.flags = p[7];
  return e;
}

std::array<uint8_t, kTcam6Stride> Tcam6Entry::Encode() const {
  std::array<uint8_t, kTcam6Stride> out{};
  PutBe64(out.data(), value);
  PutBe64(out.data() + 8, mask);
  out[16] = code;
  out[17] = flags;
  return out;
}

Tcam6Entry Tcam6Entry::Decode(const uint8_t* p) {
  Tcam6Entry e;
  e.value = GetBe64(p);
  e.mask = GetBe64(p + 8);
  e.code = p[16];
  e.flags = p[17];
  return e;
}

std::array<uint8_t, kNeighStride> NeighEntry::Encode() const {
  std::array<uint8_t, kNeighStride> out{};
  std::memcpy(out.data(), addr.data(), 16);
  std::memcpy(out.data() + 16, mac.b.data(), 6);
  out[22] = port;
  out[23] = flags;
  return out;
}

NeighEntry NeighEntry::Decode(const uint8_t* p) {
  NeighEntry e;
  std::memcpy(e.addr.data(), p, 16);
  std::memcpy(e.mac.b.data(), p + 16, 6);
  e.port = p[22];
  e.flags = p[23];
  return e;
}

uint8_t SramCode(const uint8_t* sram, int code_bits, uint32_t slash24) {
  const uint32_t a = slash24 >> 2, s = slash24 & 3;
  if (code_bits == 4) {
    const uint16_t w = static_cast<uint16_t>(sram[2 * a] | (sram[2 * a + 1] << 8));
    return static_cast<uint8_t>((w >> (4 * s)) & 15);
  }
  return static_cast<uint8_t>((sram[a] >> (2 * s)) & 3);
}

}  // namespace fibnic::regs
