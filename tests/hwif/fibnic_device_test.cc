#include "hwif/fibnic_device.h"

#include <gtest/gtest.h>

#include <cstring>

#include "hwif/memory_bar.h"
#include "tests/support/temp_dir.h"

namespace fibnic {
namespace {

using testing::TempDir;

std::unique_ptr<MemoryBar> Device(const regs::Caps& caps) {
  auto bar = std::make_unique<MemoryBar>(caps.bar_bytes());
  EXPECT_TRUE(bar->Write(0, FibnicCsrPreset(caps).data(), regs::kOffControl).ok());
  return bar;
}

TEST(FibnicProbe, AcceptsBothModels) {
  for (const auto& caps : {regs::Caps::Model2Bit(), regs::Caps::Model4Bit()}) {
    auto bar = Device(caps);
    auto got = ProbeFibnic(*bar, &caps);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(*got, caps);
    EXPECT_EQ(*ProbeFibnic(*bar), caps);
  }
}

TEST(FibnicProbe, RefusesWrongIdWithOffsetAndValues) {
  auto bar = Device(regs::Caps::Model2Bit());
  ASSERT_TRUE(bar->Write32(regs::kOffId, 0x554E5049u).ok());  // an IP-NUMA NIC
  auto got = ProbeFibnic(*bar);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(got.status().message().find("FIBNIC ID at 0x000000: expected 0x4e424946, found 0x554e5049"),
            std::string::npos)
      << got.status().ToString();
}

TEST(FibnicProbe, ExplainsAllOnesAndZero) {
  auto bar = Device(regs::Caps::Model2Bit());
  ASSERT_TRUE(bar->Write32(regs::kOffId, 0xFFFFFFFFu).ok());
  EXPECT_NE(ProbeFibnic(*bar).status().message().find("not responding"), std::string::npos);
  MemoryBar empty(regs::Caps::Model2Bit().bar_bytes());
  EXPECT_NE(ProbeFibnic(empty).status().message().find("never initialised"), std::string::npos);
}

TEST(FibnicProbe, RefusesOtherMajorButAcceptsHigherMinor) {
  auto bar = Device(regs::Caps::Model2Bit());
  ASSERT_TRUE(bar->Write32(regs::kOffVersion, 0x00010003u).ok());
  EXPECT_TRUE(ProbeFibnic(*bar).ok());
  ASSERT_TRUE(bar->Write32(regs::kOffVersion, 0x00020000u).ok());
  auto got = ProbeFibnic(*bar);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("VERSION (major) at 0x000004: expected 0x00010000, found 0x00020000"),
            std::string::npos)
      << got.status().ToString();
}

TEST(FibnicProbe, RefusesModelOtherThanConfigured) {
  auto bar = Device(regs::Caps::Model4Bit());
  const auto want = regs::Caps::Model2Bit();
  auto got = ProbeFibnic(*bar, &want);
  ASSERT_FALSE(got.ok());
  EXPECT_NE(got.status().message().find("expected model 2-bit"), std::string::npos) << got.status().ToString();
  EXPECT_NE(got.status().message().find("found 4-bit"), std::string::npos);
}

TEST(FibnicProbe, RefusesUndrivableCapsAndShortBar) {
  auto caps = regs::Caps::Model2Bit();
  caps.code_bits = 3;
  caps.nexthop_entries = 8;
  auto bar = Device(regs::Caps::Model2Bit());
  ASSERT_TRUE(bar->Write32(regs::kOffCaps0, caps.caps0()).ok());
  EXPECT_NE(ProbeFibnic(*bar).status().message().find("code bits 3"), std::string::npos);

  MemoryBar small(regs::Caps::Model4Bit().bar_bytes() - 4);
  ASSERT_TRUE(small.Write(0, FibnicCsrPreset(regs::Caps::Model4Bit()).data(), regs::kOffControl).ok());
  EXPECT_NE(ProbeFibnic(small).status().message().find("has only"), std::string::npos);
}

TEST(FibnicFile, CreatesChosenModelAndRefusesTheOther) {
  TempDir dir;
  const auto m4 = regs::Caps::Model4Bit();
  {
    auto bar = OpenFibnicFile(dir / "fibnic.bar", m4);
    ASSERT_TRUE(bar.ok()) << bar.status().ToString();
    EXPECT_EQ((*bar)->size(), size_t{0x1000000} + 8 * 1024 * 1024);
    EXPECT_EQ(*(*bar)->Read32(regs::kOffControl), 0u);  // forwarding off until the host enables it
  }
  auto reopened = OpenFibnicFile(dir / "fibnic.bar", m4);
  ASSERT_TRUE(reopened.ok());
  auto wrong = OpenFibnicFile(dir / "fibnic.bar", regs::Caps::Model2Bit());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("expected 20971520"), std::string::npos) << wrong.status().ToString();
}

}  // namespace
}  // namespace fibnic
