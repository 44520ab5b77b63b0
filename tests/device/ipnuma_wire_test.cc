// The IP-NUMA wire codec against byte layouts written out by hand from the
// "Wire format" table of docs/contract/IPNUMA.md (the oracle is the table, not
// the codec), and every malformed case Decode must refuse without reading out
// of bounds (ASan watches the reads: inputs are exact-size heap copies).
#include "device/ipnuma_wire.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace fibnic::ipnuma_wire {
namespace {

// Decodes from a heap block of exactly bytes.size(), so one byte too far is
// an ASan report rather than a silent read of the vector's slack.
StatusOr<Packet> DecodeExact(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<uint8_t[]> copy(new uint8_t[bytes.size() ? bytes.size() : 1]);
  std::copy(bytes.begin(), bytes.end(), copy.get());
  return Decode(std::span<const uint8_t>(copy.get(), bytes.size()));
}

Packet Write64At(uint64_t addr) {
  Packet p;
  p.type = PacketType::kWrite;
  p.epoch = 3;
  p.seq = 0x01020304;
  p.tlp = TlpHeader::ForBytes(kFmtTypeMWr64, addr, 64);
  p.tlp.requester_id = 0x0100;
  p.tlp.tag = 7;
  p.payload.resize(64);
  for (int i = 0; i < 64; ++i) p.payload[i] = static_cast<uint8_t>(i);
  return p;
}

TEST(IpnumaWire, WriteBytesMatchTable) {
  const Packet p = Write64At(0x000000018064A040ull);
  auto b = Encode(p);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  ASSERT_EQ(b->size(), 36u + 64u + 4u);
  const std::vector<uint8_t> head = {
      'I', 'P', 'N', 'M',        // magic
      1,                         // version
      1,                         // type WRITE
      0, 0,                      // reason, flags
      0x00, 0x03, 0x00, 0x00,    // epoch 3, reserved
      0x01, 0x02, 0x03, 0x04,    // seq
      0x00, 0x00, 0x00, 0x00,    // ack_seq
      0x60, 0x00, 0x00, 0x10,    // DW0: MWr64, Length 16 DW
      0x01, 0x00, 0x07, 0xFF,    // DW1: requester 0100, tag 7, last BE F, first BE F
      0x00, 0x00, 0x00, 0x01,    // DW2: address [63:32]
      0x80, 0x64, 0xA0, 0x40,    // DW3: address [31:0]
  };
  EXPECT_EQ(std::vector<uint8_t>(b->begin(), b->begin() + 36), head);
  EXPECT_EQ((*b)[36], 0);
  EXPECT_EQ((*b)[99], 63);
  EXPECT_EQ(std::vector<uint8_t>(b->end() - 4, b->end()), (std::vector<uint8_t>{'I', 'P', 'N', 'E'}));
  auto d = DecodeExact(*b);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, p);
}

TEST(IpnumaWire, ByteEnablesOfSmallAndUnalignedStores) {
  // One byte at ...2: one DW, first BE 0100, last BE 0.
  TlpHeader h = TlpHeader::ForBytes(kFmtTypeMWr64, 0x1002, 1);
  EXPECT_EQ(h.address, 0x1000u);
  EXPECT_EQ(h.length_dw, 1);
  EXPECT_EQ(h.first_be, 0x4);
  EXPECT_EQ(h.last_be, 0x0);
  EXPECT_EQ(h.first_byte(), 0x1002u);
  EXPECT_EQ(h.end_byte(), 0x1003u);
  // Bytes 0x1003..0x1008 (6 bytes): DWs 0x1000, 0x1004, 0x1008.
  h = TlpHeader::ForBytes(kFmtTypeMWr64, 0x1003, 6);
  EXPECT_EQ(h.length_dw, 3);
  EXPECT_EQ(h.first_be, 0x8);
  EXPECT_EQ(h.last_be, 0x1);
  EXPECT_EQ(h.first_byte(), 0x1003u);
  EXPECT_EQ(h.end_byte(), 0x1009u);
  EXPECT_FALSE(h.ByteEnabled(2));
  EXPECT_TRUE(h.ByteEnabled(3));
  EXPECT_TRUE(h.ByteEnabled(8));
  EXPECT_FALSE(h.ByteEnabled(9));
  // 4096 aligned bytes: Length field 0 means 1024 DW.
  Packet p;
  p.tlp = TlpHeader::ForBytes(kFmtTypeMWr64, 0x2000, 4096);
  p.payload.assign(4096, 0xAB);
  EXPECT_EQ(p.tlp.length_dw, 1024);
  auto b = Encode(p);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ((*b)[kOffTlp + 2] & 3, 0);
  EXPECT_EQ((*b)[kOffTlp + 3], 0);
  auto d = DecodeExact(*b);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(*d, p);
}

TEST(IpnumaWire, EveryTypeRoundTrips) {
  std::vector<Packet> all;
  all.push_back(Write64At(0x40));
  Packet ack;
  ack.type = PacketType::kAck;
  ack.epoch = 0xFFFF;
  ack.ack_seq = 0xFFFFFFFF;
  all.push_back(ack);
  Packet err = Write64At(0x80);
  err.type = PacketType::kError;
  err.reason = Reason::kDenied;
  err.ack_seq = 0x01020305;
  err.payload.clear();
  all.push_back(err);
  Packet rd;
  rd.type = PacketType::kReadRequest;
  rd.seq = 9;
  rd.tlp = TlpHeader::ForBytes(kFmtTypeMRd64, 0x1001, 2);
  all.push_back(rd);
  Packet cpl = rd;
  cpl.type = PacketType::kReadCompletion;
  cpl.ack_seq = 10;
  cpl.payload = {0, 0x11, 0x22, 0};
  all.push_back(cpl);
  cpl.reason = Reason::kDenied;
  cpl.payload = {0, 0, 0, 0};
  all.push_back(cpl);
  for (const Packet& p : all) {
    auto b = Encode(p);
    ASSERT_TRUE(b.ok()) << PacketTypeName(p.type) << ": " << b.status().ToString();
    EXPECT_EQ((*b)[kOffType], static_cast<uint8_t>(p.type));
    auto d = DecodeExact(*b);
    ASSERT_TRUE(d.ok()) << PacketTypeName(p.type) << ": " << d.status().ToString();
    EXPECT_EQ(*d, p) << PacketTypeName(p.type);
  }
  EXPECT_EQ(Encode(ack)->size(), kMinPacketBytes);
}

// Decode must refuse `bytes` with a message containing `what`.
void ExpectRejected(const std::vector<uint8_t>& bytes, const std::string& what) {
  auto d = DecodeExact(bytes);
  ASSERT_FALSE(d.ok()) << "accepted; wanted: " << what;
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find(what), std::string::npos) << d.status().message();
  EXPECT_NE(d.status().message().find("byte "), std::string::npos) << d.status().message();
}

TEST(IpnumaWire, MalformedInputsAreRefusedNamingFieldAndOffset) {
  const std::vector<uint8_t> good = *Encode(Write64At(0x40));
  // Every truncation, including empty, and one byte of padding.
  for (size_t n = 0; n < good.size(); ++n) {
    auto d = DecodeExact(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(n)));
    EXPECT_FALSE(d.ok()) << "truncated to " << n;
  }
  ExpectRejected({}, "shorter than");
  auto padded = good;
  padded.push_back(0);
  ExpectRejected(padded, "TLP Length says");

  auto m = good;
  m[0] = 'X';
  ExpectRejected(m, "bad magic");
  m = good;
  m[m.size() - 1] = 'X';
  ExpectRejected(m, "bad end code");
  m = good;
  m[kOffVersion] = 2;
  ExpectRejected(m, "unsupported version");
  m = good;
  m[kOffType] = 0;
  ExpectRejected(m, "unknown packet type");
  m = good;
  m[kOffType] = 6;
  ExpectRejected(m, "unknown packet type");
  m = good;
  m[kOffFlags] = 1;
  ExpectRejected(m, "reserved flags");
  m = good;
  m[kOffReserved + 1] = 1;
  ExpectRejected(m, "reserved field");
  m = good;
  m[kOffReason] = 1;
  ExpectRejected(m, "WRITE with a reason");
  m = good;
  m[kOffAckSeq + 3] = 1;
  ExpectRejected(m, "non-zero ack_seq");
  m = good;
  m[kOffTlp] = kFmtTypeMRd64;
  ExpectRejected(m, "Fmt/Type");
  m = good;
  m[kOffTlp + 1] = 0x10;  // TC
  ExpectRejected(m, "attribute bits");
  m = good;
  m[kOffTlp + 15] |= 1;
  ExpectRejected(m, "not DW aligned");
  // Length says 17 DW but 16 are carried (and 15 with one byte too few).
  m = good;
  m[kOffTlp + 3] = 17;
  ExpectRejected(m, "TLP Length says");
  m = good;
  m[kOffTlp + 3] = 15;
  ExpectRejected(m, "TLP Length says");
  // A READ_REQUEST that carries a payload.
  m = good;
  m[kOffType] = static_cast<uint8_t>(PacketType::kReadRequest);
  m[kOffTlp] = kFmtTypeMRd64;
  ExpectRejected(m, "TLP Length says");
  // An ERROR without a reason, an ACK with a header.
  Packet e = Write64At(0x40);
  e.type = PacketType::kError;
  e.reason = Reason::kDenied;
  e.payload.clear();
  m = *Encode(e);
  m[kOffReason] = 0;
  ExpectRejected(m, "ERROR without a reason");
  m[kOffReason] = 9;
  ExpectRejected(m, "unknown reason");
  Packet a;
  a.type = PacketType::kAck;
  m = *Encode(a);
  m[kOffTlp + 3] = 1;
  ExpectRejected(m, "ACK carries");
}

TEST(IpnumaWire, ByteEnablesInconsistentWithLengthAreRefused) {
  struct Case {
    uint16_t len;
    uint8_t first, last;
    const char* what;
  };
  const Case cases[] = {
      {1, 0x0, 0x0, "first DW byte enable is 0"},
      {1, 0xF, 0x1, "with Length 1 DW"},
      {2, 0xF, 0x0, "last DW byte enable is 0"},
      {3, 0x4, 0xF, "not contiguous"},   // first BE must reach bit 3
      {3, 0xF, 0x2, "not contiguous"},   // last BE must start at bit 0
      {16, 0x5, 0xF, "not contiguous"},
  };
  for (const Case& c : cases) {
    Packet p = Write64At(0x40);
    p.tlp.length_dw = c.len;
    p.tlp.first_be = c.first;
    p.tlp.last_be = c.last;
    p.payload.assign(4u * c.len, 0);
    EXPECT_FALSE(Encode(p).ok()) << c.what;  // Encode refuses what Decode would
    // Build the bytes from a valid packet of that length and patch DW1.
    Packet v = p;
    v.tlp.first_be = 0xF;
    v.tlp.last_be = c.len == 1 ? 0 : 0xF;
    auto b = Encode(v);
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    (*b)[kOffTlp + 7] = static_cast<uint8_t>((c.last << 4) | c.first);
    ExpectRejected(*b, c.what);
  }
  // Sparse enables are legal for one and two DW, as in PCIe.
  Packet p = Write64At(0x40);
  p.tlp.length_dw = 2;
  p.tlp.first_be = 0x5;
  p.tlp.last_be = 0xA;
  p.payload.assign(8, 0);
  EXPECT_TRUE(DecodeExact(*Encode(p)).ok());
}

TEST(IpnumaWire, RandomBytesNeverCrashTheDecoder) {
  // Deterministic mutations of valid packets: Decode may accept or refuse,
  // but never read out of bounds, and whatever it accepts re-encodes to the
  // same bytes.
  std::vector<std::vector<uint8_t>> seeds = {*Encode(Write64At(0x40))};
  Packet a;
  a.type = PacketType::kAck;
  seeds.push_back(*Encode(a));
  uint64_t x = 88172645463325252ull;
  auto next = [&x] {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  };
  for (int i = 0; i < 20000; ++i) {
    auto m = seeds[next() % seeds.size()];
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int f = 0; f < flips; ++f) m[next() % m.size()] = static_cast<uint8_t>(next());
    if (next() % 8 == 0) m.resize(next() % (m.size() + 8));
    auto d = DecodeExact(m);
    if (d.ok()) {
      auto again = Encode(*d);
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_EQ(*again, m);
    }
  }
}

}  // namespace
}  // namespace fibnic::ipnuma_wire
