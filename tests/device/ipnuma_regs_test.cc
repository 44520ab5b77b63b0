// The IP-NUMA codecs against byte layouts written out by hand from
// docs/contract/IPNUMA.md (the oracle is the spec table, not the codec).
#include "device/ipnuma_regs.h"

#include <gtest/gtest.h>

#include <vector>

namespace fibnic::ipnuma_regs {
namespace {

TEST(IpnumaRegs, OffsetsMatchSpecTable) {
  EXPECT_EQ(kOffId, 0x000000u);
  EXPECT_EQ(kOffCaps0, 0x000008u);
  EXPECT_EQ(kOffCaps1, 0x00000Cu);
  EXPECT_EQ(kOffControl, 0x000014u);
  EXPECT_EQ(kOffLocalMac, 0x000030u);
  EXPECT_EQ(kOffUdpPort, 0x000038u);
  EXPECT_EQ(kOffRetxTimeoutNs, 0x00003Cu);
  EXPECT_EQ(kOffCounters, 0x000100u);
  EXPECT_EQ(PcidOffset(3), 0x010030u);
  EXPECT_EQ(RegionOffset(2), 0x020040u);
  EXPECT_EQ(PagemapOffset(262'143), 0x100000u + 8u * 262'143u);
  // 'I','P','N','U' in memory order.
  const uint32_t id = kId;
  const auto* b = reinterpret_cast<const uint8_t*>(&id);
  EXPECT_EQ(std::string(b, b + 4), "IPNU");
}

TEST(IpnumaRegs, StandardCapsAndBarSize) {
  Caps c = Caps::Standard();
  EXPECT_EQ(c.caps0(), 262'144u);
  EXPECT_EQ(c.caps1(), 4'096u | (64u << 16));
  EXPECT_EQ(Caps::Decode(c.caps0(), c.caps1()), c);
  // 1 GiB page region needs 2 MiB of page map after 0x100000.
  EXPECT_EQ(c.bar0_bytes(), 0x100000u + 2u * 1024 * 1024);
  EXPECT_EQ(c.bar2_bytes(), uint64_t{1} << 30);
  EXPECT_TRUE(c.Validate().ok());
  EXPECT_EQ(kMaxPcidEntries, 4096u);
  Caps bad = c;
  bad.pcid_entries = 1;
  EXPECT_FALSE(bad.Validate().ok());
  bad = c;
  bad.region_entries = 0;
  EXPECT_FALSE(bad.Validate().ok());
  bad = c;
  bad.pages = 0;
  EXPECT_FALSE(bad.Validate().ok());
}

TEST(IpnumaRegs, PcidEntryBytes) {
  PcidEntry e;
  e.ip = (172u << 24) | (19u << 16) | (1u << 8) | 20u;  // 172.19.1.20
  e.mac = MacAddr::Parse("02:aa:bb:cc:dd:ee").value();
  e.flags = kPcidValid | kPcidViaGateway;
  auto b = e.Encode();
  const std::vector<uint8_t> want = {172, 19, 1, 20, 0x02, 0xaa, 0xbb, 0xcc,
                                     0xdd, 0xee, 0x03, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.end()), want);
  EXPECT_EQ(PcidEntry::Decode(want.data()), e);
  EXPECT_TRUE(e.valid());
  EXPECT_TRUE(e.via_gateway());
}

TEST(IpnumaRegs, RegionEntryBytesSpecExample) {
  // Spec: 172.18.0.0 mask 255.255.0.0 may write 16 KiB from 0x1806A0000.
  RegionEntry r;
  r.base = 0x1806A0000ull;
  r.length = 16 * 1024;
  r.peer_ip = (172u << 24) | (18u << 16);
  r.mask = 0xFFFF0000u;
  r.flags = kRegionValid;
  auto b = r.Encode();
  const std::vector<uint8_t> want = {0x00, 0x00, 0x6A, 0x80, 0x01, 0, 0, 0,  // base LE
                                     0x00, 0x40, 0, 0, 0, 0, 0, 0,           // length LE
                                     172, 18, 0, 0, 255, 255, 0, 0,          // ip, mask
                                     0x01, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(std::vector<uint8_t>(b.begin(), b.end()), want);
  EXPECT_EQ(RegionEntry::Decode(want.data()), r);
  const uint32_t from_inside = (172u << 24) | (18u << 16) | 7;
  const uint32_t from_outside = (172u << 24) | (19u << 16) | 7;
  EXPECT_TRUE(r.Admits(from_inside, 0x1806A0000ull, 16 * 1024));
  EXPECT_TRUE(r.Admits(from_inside, 0x1806A3FC0ull, 64));
  EXPECT_FALSE(r.Admits(from_inside, 0x1806A3FC0ull, 128));
  EXPECT_FALSE(r.Admits(from_inside, 0x18069FFC0ull, 64));
  EXPECT_FALSE(r.Admits(from_outside, 0x1806A0000ull, 64));
  r.flags = 0;
  EXPECT_FALSE(r.Admits(from_inside, 0x1806A0000ull, 64));
}

TEST(IpnumaRegs, PagemapWordHalves) {
  PagemapEntry e{0x0000'1234'5678'9000ull, 7};
  EXPECT_EQ(e.Encode(), 0x0007'1234'5678'9000ull);
  EXPECT_EQ(e.lo(), 0x5678'9000u);
  EXPECT_EQ(e.hi(), 0x0007'1234u);
  EXPECT_EQ(PagemapEntry::Decode(0x0007'1234'5678'9000ull), e);
  EXPECT_FALSE(PagemapEntry::Decode(0x0000'1234'5678'9000ull).mapped());
}

TEST(IpnumaRegs, LocalRegsRoundTripThroughBusWords) {
  LocalRegs r;
  r.control = kControlEnable;
  r.local_ip = (172u << 24) | (19u << 16) | (1u << 8) | 10u;
  r.netmask = 0xFFFF0000u;
  r.gateway_ip = (172u << 24) | (19u << 16) | (1u << 8) | 1u;
  r.local_mac = MacAddr::Parse("02:00:00:00:00:0a").value();
  r.udp_port = 0x1234;
  r.retx_timeout_ns = 5000;
  std::vector<uint8_t> bar(0x40, 0);
  auto words = EncodeLocalRegs(r);
  EXPECT_EQ(words.back().first, kOffControl);  // enable is the last write
  for (auto [off, v] : words) {
    for (int i = 0; i < 4; ++i) bar[off + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  EXPECT_EQ(bar[0x20], 172);  // network order
  EXPECT_EQ(bar[0x23], 10);
  EXPECT_EQ(bar[0x24], 255);
  EXPECT_EQ(bar[0x26], 0);
  EXPECT_EQ(bar[0x30], 0x02);
  EXPECT_EQ(bar[0x35], 0x0a);
  EXPECT_EQ(bar[0x38], 0x34);  // little-endian register
  EXPECT_EQ(bar[0x39], 0x12);
  EXPECT_EQ(bar[0x3C], 0x88);  // 5000 = 0x1388
  EXPECT_EQ(DecodeLocalRegs(bar.data()), r);
}

TEST(IpnumaRegs, CountersDecode) {
  std::vector<uint8_t> b(48, 0);
  b[0] = 5;        // tx_writes
  b[8 * 2 + 1] = 1;  // rx_denied = 256
  b[8 * 5 + 7] = 0x80;  // errors_sent high bit
  auto c = Counters::Decode(b.data());
  EXPECT_EQ(c.v[0], 5u);
  EXPECT_EQ(c.v[2], 256u);
  EXPECT_EQ(c.v[5], uint64_t{1} << 63);
  EXPECT_STREQ(kCounterNames[2], "rx_denied");
}

// The wire-protocol additions sit in space the v1.0 table leaves free and
// read 0 as their default (docs/contract/IPNUMA.md, "BAR0 additions").
TEST(IpnumaRegs, WireProtocolRegistersMatchSpecTable) {
  EXPECT_EQ(kOffCaps2, 0x000010u);
  EXPECT_EQ(kOffMaxPayload, 0x000040u);
  EXPECT_EQ(kOffRetryLimit, 0x000044u);
  EXPECT_EQ(kOffEpochBase, 0x000048u);
  EXPECT_EQ(kOffExtCounters, 0x000200u);
  EXPECT_EQ(kOffExtCounters + 8u * kExtCounterCount, 0x000280u);
  EXPECT_GE(kOffExtCounters, kOffCounters + 8u * kCounterCount);
  EXPECT_EQ(PeerStateOffset(0), 0x004000u);
  EXPECT_EQ(PeerStateOffset(4095), 0x007FFCu);
  EXPECT_STREQ(kExtCounterNames[kRxDuplicate], "rx_duplicate");
  EXPECT_STREQ(kExtCounterNames[kTxPeerDownRefused], "tx_peer_down_refused");

  std::vector<uint8_t> bar(0x100, 0);
  EXPECT_EQ(DecodeWireParams(bar.data()), WireParams{});
  EXPECT_EQ(DecodeWireParams(bar.data()).max_payload, 64u);
  EXPECT_EQ(DecodeWireParams(bar.data()).tx_window, 64u);
  EXPECT_EQ(DecodeWireParams(bar.data()).retry_limit, 8u);
  EXPECT_EQ(DecodeWireParams(bar.data()).retx_timeout_ns, 3000u);
  bar[0x10] = 8;                 // CAPS2 window 8
  bar[0x40] = 100;               // MAX_PAYLOAD 100 -> 64
  bar[0x44] = 0x2C;              // RETRY_LIMIT 300 -> 255
  bar[0x45] = 0x01;
  bar[0x48] = 0x34;              // EPOCH_BASE 0x1234
  bar[0x49] = 0x12;
  WireParams w = DecodeWireParams(bar.data());
  EXPECT_EQ(w.tx_window, 8u);
  EXPECT_EQ(w.max_payload, 64u);
  EXPECT_EQ(w.retry_limit, 255u);
  EXPECT_EQ(w.epoch_base, 0x1234u);
  bar[0x40] = 0x88;              // 5000 -> 4096
  bar[0x41] = 0x13;
  EXPECT_EQ(DecodeWireParams(bar.data()).max_payload, 4096u);
  bar[0x40] = 0;                 // 1024 exactly
  bar[0x41] = 0x04;
  EXPECT_EQ(DecodeWireParams(bar.data()).max_payload, 1024u);

  ExtCounters c;
  c.v[kRxMalformed] = 0x0102030405060708ull;
  auto enc = c.Encode();
  EXPECT_EQ(enc[8 * kRxMalformed], 0x08);  // little-endian
  EXPECT_EQ(enc[8 * kRxMalformed + 7], 0x01);
  EXPECT_EQ(ExtCounters::Decode(enc.data()), c);
}

}  // namespace
}  // namespace fibnic::ipnuma_regs
