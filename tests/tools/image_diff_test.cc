// `fibnicctl image diff`: two BAR image files with known differences; the
// diff must list exactly those, decoded, table by table.
#include "tools/image_diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "device/fibnic_image_codec.h"
#include "tests/support/device_image.h"

namespace fibnic {
namespace {

using testing::SetCode;

using ::testing::HasSubstr;

std::string WriteImage(const DeviceImage& img, uint32_t gen, const std::string& name) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::vector<uint8_t> bytes = EncodeBar(img, gen);
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return path;
}

TEST(ImageDiff, ListsExactlyTheDifferences) {
  DeviceImage a(regs::Caps::Model2Bit());
  DeviceImage b = a;
  b.port_macs[1] = *MacAddr::Parse("02:00:00:00:00:11");
  b.nexthop[1] = regs::NexthopEntry{*MacAddr::Parse("02:aa:00:00:00:01"), 2, regs::kNexthopValid};
  b.tcam[0] = regs::Tcam6Entry{0x20010db800000000ull, 0xffffffff00000000ull, 1, regs::kTcamValid};
  regs::NeighEntry n;
  n.addr = IpAddr::V4(0xC0000201).mapped16();
  n.mac = *MacAddr::Parse("02:bb:00:00:00:01");
  n.port = 3;
  n.flags = regs::kNeighValid;
  b.neigh[2] = n;
  for (uint32_t i = 0; i < 4; ++i) SetCode(b, 0x0A0000 + i, 1);  // 10.0.0.0 - 10.0.3.255
  SetCode(b, 0xC0A801, 2);                                         // 192.168.1.0/24

  auto d = DiffImageFiles(WriteImage(a, 5, "a.img"), WriteImage(b, 9, "b.img"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  ASSERT_EQ(d->entries.size(), 7u) << FormatImageDiff(*d);
  EXPECT_EQ(d->sram_slash24_changed, 5u);
  auto has = [&](const char* table, const char* where, const char* before, const char* after) {
    for (const auto& e : d->entries) {
      if (e.table == table && e.where == where && e.before == before && e.after == after) return true;
    }
    return false;
  };
  EXPECT_TRUE(has("csr", "generation", "5", "9"));
  EXPECT_TRUE(has("port_mac", "port 1", "00:00:00:00:00:00", "02:00:00:00:00:11"));
  EXPECT_TRUE(has("nexthop", "code 1", "invalid", "mac 02:aa:00:00:00:01 port 2"));
  EXPECT_TRUE(has("tcam6", "entry 0", "invalid", "2001:db8::/32 -> code 1"));
  EXPECT_TRUE(has("neigh", "entry 2", "invalid", "192.0.2.1 mac 02:bb:00:00:00:01 port 3"));
  EXPECT_TRUE(has("sram4", "10.0.0.0 - 10.0.3.255 (4 /24s)", "code 0", "code 1"));
  EXPECT_TRUE(has("sram4", "192.168.1.0/24", "code 0", "code 2"));

  std::string text = FormatImageDiff(*d);
  EXPECT_THAT(text, HasSubstr("[sram4]\n  10.0.0.0 - 10.0.3.255 (4 /24s): code 0 -> code 1\n"));
  EXPECT_EQ(ImageDiffJson(*d)["differences"].size(), 7u);
}

TEST(ImageDiff, IdenticalImages) {
  DeviceImage a(regs::Caps::Model4Bit());
  auto d = DiffImageFiles(WriteImage(a, 1, "c.img"), WriteImage(a, 1, "d.img"));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_TRUE(d->empty());
  EXPECT_EQ(FormatImageDiff(*d), "images are identical\n");
}

TEST(ImageDiff, RefusesWhatIsNotAnImage) {
  std::string junk = ::testing::TempDir() + "/junk.img";
  std::ofstream(junk) << "not a BAR";
  auto d = DiffImageFiles(junk, junk);
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.status().message(), HasSubstr("junk.img"));
  EXPECT_FALSE(DiffImageFiles("/nonexistent.img", junk).ok());
}

}  // namespace
}  // namespace fibnic
