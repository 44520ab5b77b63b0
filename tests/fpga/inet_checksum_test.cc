// The rewrite's arithmetic against from-scratch computations: RFC 1624's
// incremental update must equal recomputing the header checksum after the TTL
// decrement, for every TTL and for the checksum values at the 0/0xffff edges.
#include "fpga/model/inet_checksum.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace fibnic::fpga {
namespace {

uint16_t Be16(const uint8_t* p) { return static_cast<uint16_t>((p[0] << 8) | p[1]); }

// Plain RFC 791 definition, written separately from the library: sum the
// 16-bit words with the checksum field zero, fold carries, complement.
uint16_t ScratchChecksum(const uint8_t* h) {
  uint64_t s = 0;
  for (int i = 0; i < 20; i += 2)
    if (i != 10) s += (h[i] << 8) | h[i + 1];
  while (s > 0xffff) s = (s & 0xffff) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

void SetChecksum(uint8_t* h, uint16_t c) {
  h[10] = static_cast<uint8_t>(c >> 8);
  h[11] = static_cast<uint8_t>(c);
}

TEST(InetChecksum, HeaderChecksumMatchesScratch) {
  const uint32_t seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int n = 0; n < 20000; ++n) {
    uint8_t h[20];
    for (auto& b : h) b = static_cast<uint8_t>(rng());
    EXPECT_EQ(Ipv4HeaderChecksum(h, 20), ScratchChecksum(h));
    SetChecksum(h, ScratchChecksum(h));
    EXPECT_TRUE(Ipv4HeaderVerifies(h, 20));
    h[3] ^= 0x10;
    EXPECT_FALSE(Ipv4HeaderVerifies(h, 20));
  }
}

TEST(InetChecksum, Rfc1624TtlDecrementEqualsRecompute) {
  const uint32_t seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int n = 0; n < 4000; ++n) {
    uint8_t h[20];
    for (auto& b : h) b = static_cast<uint8_t>(rng());
    h[0] = 0x45;
    for (int ttl = 2; ttl <= 255; ++ttl) {
      h[8] = static_cast<uint8_t>(ttl);
      SetChecksum(h, ScratchChecksum(h));
      const uint16_t m_old = Be16(h + 8);
      const uint16_t hc = Be16(h + 10);
      h[8] = static_cast<uint8_t>(ttl - 1);
      const uint16_t got = Rfc1624Update(hc, m_old, Be16(h + 8));
      ASSERT_EQ(got, ScratchChecksum(h)) << "ttl " << ttl << " hc " << hc;
    }
  }
}

// Sweeping one header word through all 65536 values walks the checksum
// through every value, 0x0000 included before and after the update — the edge
// RFC 1624 section 3 shows eqn. 2 gets wrong.
TEST(InetChecksum, Rfc1624AllChecksumValues) {
  int zero_before = 0, zero_after = 0;
  for (int ttl : {2, 3, 64, 128, 255}) {
    for (uint32_t x = 0; x <= 0xffff; ++x) {
      uint8_t h[20] = {0x45, 0, 0, 60, 0x12, 0x34, 0x40, 0, static_cast<uint8_t>(ttl), 6, 0, 0, 10, 1, 2, 3};
      h[16] = static_cast<uint8_t>(x >> 8);
      h[17] = static_cast<uint8_t>(x);
      const uint16_t before = ScratchChecksum(h);
      const uint16_t m_old = Be16(h + 8);
      h[8] = static_cast<uint8_t>(ttl - 1);
      const uint16_t after = ScratchChecksum(h);
      ASSERT_EQ(Rfc1624Update(before, m_old, Be16(h + 8)), after) << "ttl " << ttl << " word " << x;
      zero_before += before == 0;
      zero_after += after == 0;
    }
  }
  EXPECT_GT(zero_before, 0);
  EXPECT_GT(zero_after, 0);
}

TEST(InetChecksum, Crc32KnownVectorsAndFcs) {
  const char* check = "123456789";
  EXPECT_EQ(Crc32(reinterpret_cast<const uint8_t*>(check), 9), 0xCBF43926u);
  EXPECT_EQ(Crc32(nullptr, 0), 0u);
  uint8_t frame[64] = {};
  for (int i = 0; i < 60; ++i) frame[i] = static_cast<uint8_t>(i * 7);
  const uint32_t crc = Crc32(frame, 60);
  // The FCS goes out least significant byte first.
  frame[60] = static_cast<uint8_t>(crc);
  frame[61] = static_cast<uint8_t>(crc >> 8);
  frame[62] = static_cast<uint8_t>(crc >> 16);
  frame[63] = static_cast<uint8_t>(crc >> 24);
  EXPECT_TRUE(FcsOk(frame, 64));
  frame[20] ^= 1;
  EXPECT_FALSE(FcsOk(frame, 64));
  EXPECT_FALSE(FcsOk(frame, 3));
}

// The table-driven CRC against the bit-serial definition (IEEE 802.3, reflected
// 0xedb88320), for every length across the 8-byte steps and odd alignments.
TEST(InetChecksum, Crc32MatchesBitSerialDefinition) {
  std::mt19937 rng(1812);
  std::vector<uint8_t> buf(1600);
  for (auto& b : buf) b = static_cast<uint8_t>(rng());
  auto bitwise = [](const uint8_t* d, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; ++i)
      for (int b = 0; b < 8; ++b) c = ((c ^ (d[i] >> b)) & 1) ? (c >> 1) ^ 0xedb88320u : c >> 1;
    return ~c;
  };
  for (size_t off = 0; off < 3; ++off)
    for (size_t n = 0; n + off <= 1530; n += (n < 40 ? 1 : 37)) ASSERT_EQ(Crc32(&buf[off], n), bitwise(&buf[off], n)) << n;
}

}  // namespace
}  // namespace fibnic::fpga
