// The BAR codec against the device model: an encoded image must look up
// exactly as built (HwLookup decodes the bytes on its own), and decode back.
#include "device/fibnic_image_codec.h"

#include <gtest/gtest.h>

#include "device/fibnic_lookup.h"
#include "tests/support/device_image.h"
#include "tests/support/parse.h"

namespace fibnic {
namespace {

using testing::A;
using testing::Mac;
using testing::SetCode;

DeviceImage Sample(const regs::Caps& caps) {
  DeviceImage img(caps);
  img.port_macs[1] = Mac("02:00:00:00:00:11");
  img.nexthop[1] = {Mac("aa:00:00:00:00:01"), 1, regs::kNexthopValid};
  img.nexthop[2] = {Mac("00:00:00:00:00:00"), 2, regs::kNexthopValid | regs::kNexthopConnected};
  img.nexthop[3] = {Mac("aa:00:00:00:00:03"), 3, 0};  // not valid: punts
  img.neigh[7] = {A("192.0.2.9").mapped16(), Mac("bb:00:00:00:00:09"), 2, regs::kNeighValid};
  img.tcam[0] = {0x20010db800000000ull, 0xffffffff00000000ull, 1, regs::kTcamValid};
  SetCode(img, 0x0a0001, 1);   // 10.0.1.0/24 -> 1
  SetCode(img, 0xc00002, 2);   // 192.0.2.0/24 -> connected
  SetCode(img, 0x0a0003, 3);   // 10.0.3.0/24 -> invalid entry
  return img;
}

class CodecTest : public ::testing::TestWithParam<int> {};

TEST_P(CodecTest, EncodedBarLooksUpAsBuilt) {
  const auto caps = GetParam() == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  const auto img = Sample(caps);
  const auto bar = EncodeBar(img, 42);
  ASSERT_EQ(bar.size(), caps.bar_bytes());
  EXPECT_EQ(std::string(bar.begin(), bar.begin() + 4), "FIBN");  // the spec's ID bytes

  auto d = HwLookup(bar.data(), bar.size(), A("10.0.1.77"));
  EXPECT_TRUE(d.forward);
  EXPECT_EQ(d.port, 1);
  EXPECT_EQ(d.dst_mac, Mac("aa:00:00:00:00:01"));
  EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("10.0.2.1")).forward);   // code 0
  EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("10.0.3.1")).forward);   // entry not valid
  d = HwLookup(bar.data(), bar.size(), A("192.0.2.9"));
  EXPECT_TRUE(d.forward);
  EXPECT_EQ(d.dst_mac, Mac("bb:00:00:00:00:09"));
  EXPECT_EQ(d.port, 2);
  EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("192.0.2.10")).forward);  // neighbour miss
  d = HwLookup(bar.data(), bar.size(), A("2001:db8::1"));
  EXPECT_TRUE(d.forward);
  EXPECT_EQ(d.tcam_index, 0);
  EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("2001:db9::1")).forward);

  auto hdr = DecodeBarHeader(bar.data(), bar.size());
  ASSERT_TRUE(hdr.ok()) << hdr.status().ToString();
  EXPECT_EQ(hdr->caps, caps);
  EXPECT_EQ(hdr->generation, 42u);
  auto back = DecodeBar(bar.data(), bar.size());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == img);
}

TEST_P(CodecTest, ControlDisablesFamilies) {
  const auto caps = GetParam() == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  auto img = Sample(caps);
  img.control = regs::kControlV6Enable;
  const auto bar = EncodeBar(img);
  EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("10.0.1.77")).forward);
  EXPECT_TRUE(HwLookup(bar.data(), bar.size(), A("2001:db8::1")).forward);
}

INSTANTIATE_TEST_SUITE_P(CodeBits, CodecTest, ::testing::Values(2, 4));

TEST(Codec, DecodeRefusesForeignOrShortBars) {
  auto bar = EncodeBar(DeviceImage(regs::Caps::Model2Bit()));
  EXPECT_FALSE(DecodeBar(bar.data(), bar.size() - 1).ok());  // truncated SRAM
  EXPECT_FALSE(DecodeBar(bar.data(), 64).ok());
  auto foreign = bar;
  foreign[0] = 'X';
  auto st = DecodeBar(foreign.data(), foreign.size()).status();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("ID"), std::string::npos) << st.message();
  auto v2 = bar;
  v2[6] = 2;  // VERSION major 2
  EXPECT_FALSE(DecodeBar(v2.data(), v2.size()).ok());
  auto badcaps = bar;
  badcaps[9] = 3;  // CAPS0 code bits 3
  EXPECT_FALSE(DecodeBar(badcaps.data(), badcaps.size()).ok());
}

TEST(Codec, EncodeRefusesMismatchedImage) {
  DeviceImage img(regs::Caps::Model2Bit());
  img.nexthop.resize(3);
  std::vector<uint8_t> bar(img.caps.bar_bytes());
  EXPECT_FALSE(EncodeBarInto(img, 0, bar.data(), bar.size()).ok());
  EXPECT_FALSE(EncodeBarInto(DeviceImage(), 0, bar.data(), bar.size() - 1).ok());
}

// DROP: a lookup answers drop only on a device whose CAPS2 announce it, and
// the codec refuses a DROP entry for any other (it would forward to port 0)
// and DROP with CONNECTED (no meaning).
TEST(Codec, DropEntries) {
  DeviceImage img(regs::Caps::Model2Bit());
  ASSERT_TRUE(img.caps.drop);
  img.nexthop[2] = {MacAddr{}, 0, regs::kNexthopValid | regs::kNexthopDrop};
  SetCode(img, 0x0a0b0c, 2);
  auto bar = EncodeBar(img);
  HwDecision d = HwLookup(bar.data(), bar.size(), A("10.11.12.13"));
  EXPECT_TRUE(d.drop);
  EXPECT_FALSE(d.forward);
  EXPECT_STREQ(d.why, "drop");
  EXPECT_EQ(d.code, 2);
  EXPECT_EQ(d.ToString(), "drop code 2");
  auto back = DecodeBar(bar.data(), bar.size());
  ASSERT_TRUE(back.ok());
  EXPECT_TRUE(back->caps.drop);
  EXPECT_EQ(*back, img);

  DeviceImage old = img;
  old.caps.drop = false;
  std::vector<uint8_t> out(old.caps.bar_bytes());
  const Status st = EncodeBarInto(old, 0, out.data(), out.size());
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("do not announce DROP"), std::string::npos) << st.message();
  EXPECT_FALSE(CheckNexthopEntry(old.caps, 2, old.nexthop[2]).ok());
  EXPECT_TRUE(CheckNexthopEntry(img.caps, 2, img.nexthop[2]).ok());
  const regs::NexthopEntry both{MacAddr{}, 0, regs::kNexthopValid | regs::kNexthopDrop | regs::kNexthopConnected};
  EXPECT_FALSE(CheckNexthopEntry(img.caps, 2, both).ok());
  // CAPS2 round trip, with and without the bit.
  EXPECT_TRUE(regs::Caps::Decode(img.caps.caps0(), img.caps.caps1(), img.caps.caps2()).drop);
  EXPECT_FALSE(regs::Caps::Decode(old.caps.caps0(), old.caps.caps1(), old.caps.caps2()).drop);
  EXPECT_EQ(old.caps.caps2(), 256u);
  EXPECT_TRUE(old.caps.SameModel(img.caps));
  EXPECT_FALSE(old.caps.SameModel(regs::Caps::Model4Bit()));
}

// A readback without the reserved gap (hwif's ReadFibnic): the tables decoded
// from the BAR's start alone, SRAM4 left for the caller; too short a start is
// refused by name.
TEST_P(CodecTest, TablesDecodeWithoutTheGap) {
  const auto caps = GetParam() == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  const auto img = Sample(caps);
  const auto bar = EncodeBar(img, 7);
  const size_t tables_end = regs::NeighOffset(caps.neigh_entries);
  const std::vector<uint8_t> start(bar.begin(), bar.begin() + static_cast<ptrdiff_t>(tables_end));
  BarHeader h;
  auto tables = DecodeBarTables(start.data(), start.size(), bar.size(), &h);
  ASSERT_TRUE(tables.ok()) << tables.status().ToString();
  EXPECT_EQ(h.generation, 7u);
  EXPECT_EQ(tables->sram, std::vector<uint8_t>(caps.sram_bytes(), 0));
  DeviceImage whole = *tables;
  whole.sram = img.sram;
  EXPECT_TRUE(whole == img);
  auto st = DecodeBarTables(start.data(), start.size() - 1, bar.size(), nullptr).status();
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("tables end"), std::string::npos) << st.message();
  EXPECT_FALSE(DecodeBarTables(start.data(), start.size(), bar.size() - 1, nullptr).ok());  // CAPS say more
}

}  // namespace
}  // namespace fibnic
