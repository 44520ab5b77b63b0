#include "hwif/counters.h"

#include <gtest/gtest.h>

#include <cstring>

#include "hwif/memory_bar.h"

namespace fibnic {
namespace {

void Put64(MemoryBar& bar, uint64_t off, uint64_t v) {
  ASSERT_TRUE(bar.Write32(off, static_cast<uint32_t>(v)).ok());
  ASSERT_TRUE(bar.Write32(off + 4, static_cast<uint32_t>(v >> 32)).ok());
}

TEST(Counters, ReadsEveryPortInSpecOrder) {
  const auto caps = regs::Caps::Model2Bit();
  MemoryBar bar(caps.bar_bytes());
  for (uint32_t p = 0; p < caps.ports; ++p) {
    for (int i = 0; i < regs::kPortCounterCount; ++i) {
      Put64(bar, regs::PortCountersOffset(p) + 8 * i, (uint64_t{p + 1} << 40) | static_cast<uint64_t>(i));
    }
  }
  auto got = ReadPortCounters(bar, caps);
  ASSERT_TRUE(got.ok());
  ASSERT_EQ(got->size(), 4u);
  EXPECT_EQ((*got)[2].rx, uint64_t{3} << 40);
  EXPECT_EQ((*got)[2].punted, (uint64_t{3} << 40) | 2);
  EXPECT_EQ((*got)[3].tx_bytes, (uint64_t{4} << 40) | 7);
  EXPECT_EQ((*got)[0].values()[4], (uint64_t{1} << 40) | 4);  // drop_fifo
}

TEST(Counters, IpnumaBlock) {
  MemoryBar bar(ipnuma_regs::kOffCounters + 48);
  for (int i = 0; i < ipnuma_regs::kCounterCount; ++i) Put64(bar, ipnuma_regs::kOffCounters + 8 * i, 1000 + i);
  auto got = ReadIpnumaCounters(bar);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->v[0], 1000u);  // tx_writes
  EXPECT_EQ(got->v[5], 1005u);  // errors_sent
}

// A counter that carries from the low into the high word right after the
// host's first read of the high word: a naive lo/hi read would be off by 2^32.
class CarryingBar : public MemoryBar {
 public:
  CarryingBar() : MemoryBar(64) {}
  Status Read(uint64_t off, void* dst, size_t len) override {
    Status st = MemoryBar::Read(off, dst, len);
    if (off == 4 && !carried_) {
      carried_ = true;
      EXPECT_TRUE(Write32(0, 0x00000002u).ok());  // 0x1_FFFFFFFE counted on to 0x2_00000002
      EXPECT_TRUE(Write32(4, 2).ok());
    }
    return st;
  }

 private:
  bool carried_ = false;
};

TEST(Counters, SixtyFourBitReadSurvivesACarry) {
  CarryingBar bar;
  ASSERT_TRUE(bar.Write32(0, 0xFFFFFFFEu).ok());
  ASSERT_TRUE(bar.Write32(4, 1).ok());
  auto v = ReadCounter64(bar, 0);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, 0x200000002ull);
}

TEST(Counters, ShortBarIsAnErrorNamingTheCounter) {
  MemoryBar bar(0x100 + 64 * 2);  // only two ports' counters
  auto got = ReadPortCounters(bar, regs::Caps::Model2Bit());
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("port 2 counter rx"), std::string::npos) << got.status().ToString();
}

// DROP_COUNTERS[p] at 0x800 + 8p, read where CAPS2 announce DROP only.
TEST(Counters, DropCountersWhereTheDeviceAnnouncesThem) {
  MemoryBar bar(0x1000);
  ASSERT_TRUE(bar.Write32(0x800 + 8 * 3, 7).ok());
  ASSERT_TRUE(bar.Write32(0x800 + 8 * 3 + 4, 1).ok());
  auto with = ReadPortCounters(bar, regs::Caps::Model2Bit());
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_EQ((*with)[3].drop_route, 0x100000007ull);
  EXPECT_EQ((*with)[0].drop_route, 0u);
  regs::Caps old = regs::Caps::Model2Bit();
  old.drop = false;
  auto without = ReadPortCounters(bar, old);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ((*without)[3].drop_route, 0u);
}

}  // namespace
}  // namespace fibnic
