// FibnicWriter's Verify against a BAR changed behind its back: each corrupted
// entry (chosen by the test) is reported once, in its table, at its index;
// an untouched device reports no drift. The fake writer's drift reporting is
// the same comparison over its in-memory device.
#include "hwif/fibnic_writer.h"

#include <gtest/gtest.h>

#include "hwif/fake_device_writer.h"
#include "tests/hwif/fibnic_test_util.h"

namespace fibnic {
namespace {

using namespace testing_util;

// The small image with one TCAM6 entry (2001:db8::/32 on next-hop 2).
DeviceImage Image() {
  DeviceImage img = SmallImage();
  img.tcam[0] = Tcam("2001:db8::/32", 2);
  return img;
}

TEST(FibnicWriter, VerifyReportsEachCorruptedEntryAndNothingElse) {
  const DeviceImage img = Image();
  auto bar = MakeDevice(DeviceImage());
  FibnicWriter w(*bar);
  ASSERT_TRUE(w.Sync(img).ok());
  EXPECT_EQ(w.shadow(), img);  // the shadow is what was written
  auto clean = w.Verify(img);
  ASSERT_TRUE(clean.ok()) << clean.status().ToString();
  EXPECT_TRUE(clean->in_sync());
  EXPECT_EQ(clean->generation, w.generation());

  // Behind the writer's back: one SRAM bus word and next-hop entry 2's port byte.
  // 2-bit codes: four /24s per SRAM byte; drift is reported per 32-bit bus word.
  const uint32_t bus_word = (k10_0_0 + 8) / 4 / 4;
  const uint64_t sram_off = regs::kOffSram4 + 4 * uint64_t{bus_word};
  ASSERT_TRUE(bar->Write32(sram_off, 0).ok());
  ASSERT_TRUE(bar->Write32(regs::NexthopOffset(2) + 4, 0xFFFFFFFFu).ok());
  auto drift = w.Verify(img);
  ASSERT_TRUE(drift.ok());
  EXPECT_FALSE(drift->in_sync());
  ASSERT_EQ(drift->drift_total, 2u);
  EXPECT_EQ(drift->drift[0], (DeviceDrift{"nexthop", 2}));
  EXPECT_EQ(drift->drift[1], (DeviceDrift{"sram4", bus_word}));
}

TEST(FakeDeviceWriter, CountsWritesInjectsFailuresAndReportsDrift) {
  FakeDeviceWriter w;
  const DeviceImage img = Image();
  w.fail_syncs = 1;
  EXPECT_FALSE(w.Sync(img).ok());
  EXPECT_FALSE(w.Push({}, img).ok());  // no push before a successful sync
  ASSERT_TRUE(w.Sync(img).ok());
  EXPECT_EQ(w.syncs, 2u);
  EXPECT_EQ(w.pushes, 1u);
  w.device().tcam[0] = regs::Tcam6Entry{};
  auto v = w.Verify(img);
  ASSERT_TRUE(v.ok());
  ASSERT_EQ(v->drift_total, 1u);
  EXPECT_EQ(v->drift[0], (DeviceDrift{"tcam6", 0}));
}

}  // namespace
}  // namespace fibnic
