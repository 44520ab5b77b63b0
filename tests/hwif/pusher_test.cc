// FibnicPusher with hand-built deltas: word ordering of entries, SRAM
// coalescing, failure handling, verify-after-write, warm restart counts.
#include "hwif/fibnic_pusher.h"

#include <gtest/gtest.h>

#include "hwif/fibnic_device.h"
#include "hwif/file_bar.h"
#include "hwif/recording_bar.h"
#include "tests/hwif/fibnic_test_util.h"
#include "tests/oracle/reference_lpm.h"
#include "tests/support/temp_dir.h"

namespace fibnic {
namespace {

using namespace testing_util;
using testing::TempDir;

// A delta that takes the given SRAM words from their values in `from` to those in `to`.
void AddSramWords(DeviceDelta& d, const DeviceImage& from, const DeviceImage& to, std::vector<uint32_t> words) {
  for (uint32_t a : words) {
    d.sram_words.push_back(a);
    d.sram_values.push_back(SramWordValue(to, a));
    d.sram_before.push_back(SramWordValue(from, a));
  }
}

struct Rig {
  DeviceImage start;
  std::unique_ptr<MemoryBar> mem;
  RecordingBar rec;
  FibnicPusher pusher;
  explicit Rig(const DeviceImage& img, PushOptions opt = {})
      : start(img), mem(MakeDevice(img, 41)), rec(*mem), pusher(rec, opt) {
    EXPECT_TRUE(pusher.Sync(img).ok());
    rec.Clear();
  }
};

TEST(Pusher, SyncOfAnUnchangedDeviceWritesNothing) {
  Rig rig(SmallImage());
  EXPECT_TRUE(rig.pusher.in_sync());
  EXPECT_EQ(rig.pusher.generation(), 41u);
  EXPECT_EQ(rig.pusher.last().bus_writes, 0u);
}

TEST(Pusher, CoalescesAdjacentSramWordsIntoOneBusWrite) {
  Rig rig(SmallImage());
  DeviceImage to = rig.start;
  // /24s 10.0.64-79 = SRAM words 0x28010..0x28013: one 32-bit bus word (2-bit codes).
  for (uint32_t i = 64; i < 80; ++i) SetCode(to, k10_0_0 + i, 2);
  SetCode(to, k10_0_0 + 80, 2);  // the next bus word, one byte of it
  DeviceDelta d;
  AddSramWords(d, rig.start, to, {0x28010, 0x28011, 0x28012, 0x28013, 0x28014});
  ASSERT_TRUE(rig.pusher.Push({d}, to).ok());
  const auto& ws = rig.rec.writes();
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws[0], (BusWrite{regs::kOffSram4 + 0x28010, 0xAAAAAAAAu}));
  // Bus word 0x28014..17: byte 0 new, bytes 1..3 keep their (zero) value.
  EXPECT_EQ(ws[1], (BusWrite{regs::kOffSram4 + 0x28014, 0x00000002u}));
  EXPECT_EQ(ws[2], (BusWrite{regs::kOffGeneration, 42u}));
  EXPECT_EQ(rig.pusher.last().changed_bytes, 5u);
  auto got = DecodeBar(rig.mem->data(), rig.mem->size());
  EXPECT_TRUE(*got == to);
}

// The pusher keeps no copy of the SRAM. A commit of two deltas (a retire,
// then the main delta) where the retire's bus word holds a byte only the
// main delta changes: the retire's write keeps that byte's old value (the
// main delta's "before"), not the target's final one — which would name the
// new code before its entry is written.
TEST(Pusher, AnEarlierDeltaKeepsTheOldValueOfABytesALaterDeltaChanges) {
  // Bus word 0x28010..13 (2-bit codes: a byte per word). The device: code 1
  // in words 0x28010 (all four /24s) and 0x28011 (its first /24).
  DeviceImage start = SmallImage();
  for (uint32_t i = 64; i < 69; ++i) SetCode(start, k10_0_0 + i, 1);
  Rig rig(start);
  // Retire: 0x28010 to code 0. Main: 0x28010 to code 2 and 0x28011, which
  // the retire does not touch, to code 3.
  DeviceImage mid = start, to = start;
  for (uint32_t i = 64; i < 68; ++i) SetCode(mid, k10_0_0 + i, 0);
  for (uint32_t i = 64; i < 68; ++i) SetCode(to, k10_0_0 + i, 2);
  for (uint32_t i = 68; i < 72; ++i) SetCode(to, k10_0_0 + i, 3);
  DeviceDelta retire, main;
  AddSramWords(retire, start, mid, {0x28010});
  AddSramWords(main, mid, to, {0x28010, 0x28011});
  ASSERT_TRUE(rig.pusher.Push({retire, main}, to).ok());
  const auto& ws = rig.rec.writes();
  ASSERT_EQ(ws.size(), 4u);
  EXPECT_EQ(ws[0], (BusWrite{regs::kOffSram4 + 0x28010, 0x00000100u}));  // 0x28011 still 0x01
  EXPECT_EQ(ws[2], (BusWrite{regs::kOffSram4 + 0x28010, 0x0000FFAAu}));
  EXPECT_TRUE(*DecodeBar(rig.mem->data(), rig.mem->size()) == to);
}

TEST(Pusher, FourBitWordsShareBusWordsInPairs) {
  DeviceImage img(regs::Caps::Model4Bit());
  img.nexthop[9] = Nh("02:00:00:00:00:09", 2);
  Rig rig(img);
  DeviceImage to = img;
  for (uint32_t i = 0; i < 8; ++i) SetCode(to, k10_0_0 + i, 9);  // SRAM words 0x28000, 0x28001
  DeviceDelta d;
  AddSramWords(d, img, to, {0x28000, 0x28001});
  ASSERT_TRUE(rig.pusher.Push({d}, to).ok());
  ASSERT_EQ(rig.rec.writes().size(), 2u);
  EXPECT_EQ(rig.rec.writes()[0], (BusWrite{regs::kOffSram4 + 0x50000, 0x99999999u}));
}

TEST(Pusher, NexthopMacChangeIsInvalidateFieldsValidate) {
  Rig rig(SmallImage());
  DeviceImage to = rig.start;
  to.nexthop[1] = Nh("04:00:00:00:00:07", 3);  // both 32-bit words of the entry change
  DeviceDelta d;
  d.nexthop_activate.push_back({1, to.nexthop[1]});
  std::vector<Answer> seen;
  rig.rec.set_observer([&](const BusWrite&, size_t) {
    seen.push_back(Look(rig.mem->data(), rig.mem->size(), A("10.0.0.1")));
    return OkStatus();
  });
  ASSERT_TRUE(rig.pusher.Push({d}, to).ok());
  const uint32_t off = regs::NexthopOffset(1);
  const auto& ws = rig.rec.writes();
  ASSERT_EQ(ws.size(), 4u);
  EXPECT_EQ(ws[0].offset, off + 4);
  EXPECT_EQ(ws[0].value & (uint32_t{regs::kNexthopValid} << 24), 0u);  // VALID=0 first
  EXPECT_EQ(ws[1], (BusWrite{off, 0x00000004u}));                       // MAC[0..3]
  EXPECT_EQ(ws[2], (BusWrite{off + 4, 0x01030700u}));                   // MAC[4..5], port, VALID last
  // Before: 02:..:01 port 0. Never a mix of old and new fields.
  const Answer new_a{true, Mac("04:00:00:00:00:07"), 3};
  EXPECT_EQ(seen, (std::vector<Answer>{Answer{}, Answer{}, new_a, new_a}));
}

TEST(Pusher, SingleWordEntryChangeIsOneAtomicWrite) {
  Rig rig(SmallImage());
  DeviceImage to = rig.start;
  to.nexthop[1].port = 2;  // only the word holding MAC[4..5], port, flags
  DeviceDelta d;
  d.nexthop_activate.push_back({1, to.nexthop[1]});
  ASSERT_TRUE(rig.pusher.Push({d}, to).ok());
  ASSERT_EQ(rig.rec.writes().size(), 2u);  // the entry word + GENERATION
  EXPECT_EQ(rig.rec.writes()[0].offset, regs::NexthopOffset(1) + 4);
}

TEST(Pusher, NewTcamEntryWritesValueMaskBeforeFlags) {
  Rig rig(SmallImage());
  DeviceImage to = rig.start;
  to.tcam[3] = Tcam("2001:db8::/32", 2);
  DeviceDelta d;
  d.tcam.push_back({3, to.tcam[3]});
  ASSERT_TRUE(rig.pusher.Push({d}, to).ok());
  const auto& ws = rig.rec.writes();
  // 2001:db8::/32: value and mask each have one nonzero word (the zero words
  // already hold zero), then the flags word, then GENERATION.
  ASSERT_EQ(ws.size(), 4u);
  EXPECT_EQ(ws[ws.size() - 2].offset, regs::Tcam6Offset(3) + 16);
  for (size_t i = 0; i + 2 < ws.size(); ++i) EXPECT_LT(ws[i].offset, regs::Tcam6Offset(3) + 16);
}

TEST(Pusher, MalformedDeltaWritesNothing) {
  Rig rig(SmallImage());
  DeviceDelta bad_index;
  bad_index.nexthop_activate.push_back({4, Nh("02:00:00:00:00:09", 0)});
  DeviceDelta not_parallel;
  not_parallel.sram_words = {1, 2};
  not_parallel.sram_values = {1, 1};
  not_parallel.sram_before = {0};
  DeviceDelta descending;
  AddSramWords(descending, rig.start, rig.start, {5, 4});
  for (const auto& d : {bad_index, not_parallel, descending}) {
    DeviceDelta ok;
    AddSramWords(ok, rig.start, rig.start, {1});
    Status st = rig.pusher.Push({ok, d}, rig.start);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.ToString();
    EXPECT_NE(st.message().find("delta 2 of 2"), std::string::npos) << st.ToString();
  }
  EXPECT_TRUE(rig.rec.writes().empty());
  EXPECT_TRUE(rig.pusher.in_sync());
}

// Fails the n-th bus write (counting from 1) with an I/O error.
class FailingBar : public Bar {
 public:
  FailingBar(Bar& inner, size_t fail_at) : inner_(inner), fail_at_(fail_at) {}
  size_t size() const override { return inner_.size(); }
  Status Read(uint64_t o, void* d, size_t n) override { return inner_.Read(o, d, n); }
  Status Write32(uint64_t o, uint32_t v) override {
    if (++count_ == fail_at_) return IoError("injected bus error");
    return inner_.Write32(o, v);
  }
  Status Write(uint64_t o, const void* s, size_t n) override { return inner_.Write(o, s, n); }
  Status Flush() override { return inner_.Flush(); }
  void Heal() { fail_at_ = 0; }

 private:
  Bar& inner_;
  size_t count_ = 0;
  size_t fail_at_;
};

TEST(Pusher, FailedWriteIsReportedAndForcesResync) {
  const DeviceImage start = SmallImage();
  auto mem = MakeDevice(start);
  FailingBar failing(*mem, 2);
  FibnicPusher pusher(failing);
  ASSERT_TRUE(pusher.Sync(start).ok());  // writes nothing
  DeviceImage to = start;
  for (uint32_t i = 0; i < 64; ++i) SetCode(to, k10_0_0 + i, 2);
  DeviceDelta d;
  std::vector<uint32_t> words;
  for (uint32_t a = 0x28000; a < 0x28010; ++a) words.push_back(a);
  AddSramWords(d, start, to, words);
  Status st = pusher.Push({d}, to);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("bus write 2 of 5 (sram at 0x1028004)"), std::string::npos) << st.ToString();
  EXPECT_NE(st.message().find("injected bus error"), std::string::npos);
  EXPECT_FALSE(pusher.in_sync());
  EXPECT_EQ(pusher.Push({}, to).code(), StatusCode::kFailedPrecondition);
  failing.Heal();
  ASSERT_TRUE(pusher.Sync(to).ok());
  // Write 1 had landed; the resync writes only the other three SRAM words + GENERATION.
  EXPECT_EQ(pusher.last().writes_in(BarRegion::kSram), 3u);
  EXPECT_TRUE(*DecodeBar(mem->data(), mem->size()) == to);
}

// Acknowledges SRAM writes but drops them (a device that does not take them).
class DroppingBar : public Bar {
 public:
  explicit DroppingBar(Bar& inner) : inner_(inner) {}
  size_t size() const override { return inner_.size(); }
  Status Read(uint64_t o, void* d, size_t n) override { return inner_.Read(o, d, n); }
  Status Write32(uint64_t o, uint32_t v) override { return o >= regs::kOffSram4 ? OkStatus() : inner_.Write32(o, v); }
  Status Write(uint64_t o, const void* s, size_t n) override { return inner_.Write(o, s, n); }
  Status Flush() override { return inner_.Flush(); }

 private:
  Bar& inner_;
};

TEST(Pusher, VerifyAfterWriteCatchesADeviceThatDropsWrites) {
  const DeviceImage start = SmallImage();
  auto mem = MakeDevice(start);
  DroppingBar dropping(*mem);
  FibnicPusher pusher(dropping, PushOptions{.verify = true});
  ASSERT_TRUE(pusher.Sync(start).ok());
  DeviceImage to = start;
  SetCode(to, k10_0_0, 2);
  DeviceDelta d;
  AddSramWords(d, start, to, {0x28000});
  Status st = pusher.Push({d}, to);
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("verify after write: sram word at 0x1028000"), std::string::npos) << st.ToString();
  EXPECT_FALSE(pusher.in_sync());
}

TEST(Pusher, WarmRestartThroughAFileWritesOnlyTheDifference) {
  TempDir dir;
  const auto caps = regs::Caps::Model2Bit();
  DeviceImage table = SmallImage();
  {
    auto bar = OpenFibnicFile(dir / "fibnic.bar", caps);
    ASSERT_TRUE(bar.ok());
    FibnicPusher first(**bar);
    ASSERT_TRUE(first.Sync(table).ok());  // cold start: a full push
    EXPECT_GT(first.last().bus_writes, 0u);
  }
  {  // restart, same table: nothing at all is written
    auto bar = OpenFibnicFile(dir / "fibnic.bar", caps);
    ASSERT_TRUE(bar.ok());
    RecordingBar rec(**bar);
    FibnicPusher again(rec);
    ASSERT_TRUE(again.Sync(table).ok());
    EXPECT_TRUE(rec.writes().empty());
    EXPECT_EQ(again.generation(), 1u);
  }
  // restart after k = 10 route changes spread over the table
  for (uint32_t k = 0; k < 10; ++k) SetCode(table, k10_0_0 + 256 * k + 7, 2);
  auto bar = OpenFibnicFile(dir / "fibnic.bar", caps);
  ASSERT_TRUE(bar.ok());
  RecordingBar rec(**bar);
  FibnicPusher again(rec);
  ASSERT_TRUE(again.Sync(table).ok());
  EXPECT_EQ(again.last().writes_in(BarRegion::kSram), 10u);
  EXPECT_EQ(again.last().writes_in(BarRegion::kNexthop) + again.last().writes_in(BarRegion::kTcam), 0u);
  EXPECT_EQ(rec.writes().size(), 11u);  // + GENERATION
}

TEST(Pusher, PushRefusesOtherModelImage) {
  Rig rig(SmallImage());
  DeviceImage other(regs::Caps::Model4Bit());
  EXPECT_EQ(rig.pusher.Push({}, other).code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace fibnic

namespace fibnic {
namespace {

using namespace testing_util;
using testing::TempDir;

// A TCAM reshuffle in producer order (holes before covers): a more-specific
// route must go in front of the covering entry that sits at index 0. Every
// single write is checked against the reference LPM of the old and new routes.
TEST(Pusher, TcamReshuffleInProducerOrderIsSafeAtEveryWrite) {
  DeviceImage img;
  img.nexthop[1] = Nh("02:00:00:00:00:01", 0);
  img.nexthop[2] = Nh("02:00:00:00:00:02", 1);
  img.neigh[0] = Neigh(A("192.0.2.1"), "02:00:00:00:00:01", 0);
  img.neigh[1] = Neigh(A("192.0.2.2"), "02:00:00:00:00:02", 1);
  img.tcam[0] = Tcam("2001:db8::/32", 1);
  Rig rig(img);

  oracle::ReferenceLpm before, after;
  for (auto* lpm : {&before, &after}) {
    lpm->SetNeighbor({A("192.0.2.1"), Mac("02:00:00:00:00:01"), 0, NeighState::kReachable});
    lpm->SetNeighbor({A("192.0.2.2"), Mac("02:00:00:00:00:02"), 1, NeighState::kReachable});
    lpm->SetRoute(*Prefix::Parse("2001:db8::/32"), {NextHop{A("192.0.2.1"), 0}});
  }
  after.SetRoute(*Prefix::Parse("2001:db8:ab01::/48"), {NextHop{A("192.0.2.2"), 1}});

  DeviceImage to = img;
  to.tcam[2] = img.tcam[0];                    // 1. the cover again, behind
  to.tcam[0] = Tcam("2001:db8:ab01::/48", 2);  // 2. the hole takes index 0
  DeviceDelta d;
  d.tcam = {{2, to.tcam[2]}, {0, to.tcam[0]}};

  const std::vector<IpAddr> probes = {A("2001:db8:ab01::5"), A("2001:db8:ab01:ffff::1"), A("2001:db8:1::5"),
                                      A("2001:db9::1")};
  std::vector<std::vector<Answer>> allowed;
  for (const auto& p : probes) {
    std::vector<Answer> a;
    for (const auto* lpm : {&before, &after}) {
      for (const auto& [mac, port] : lpm->Acceptable(p)) a.push_back({true, mac, port});
    }
    allowed.push_back(a);
  }
  std::string failure;
  rig.rec.set_observer([&](const BusWrite&, size_t i) {
    auto bad = CheckProbes(rig.mem->data(), rig.mem->size(), probes, allowed);
    if (bad) failure = "after write " + std::to_string(i + 1) + ": " + *bad;
    return OkStatus();
  });
  ASSERT_TRUE(rig.pusher.Push({d}, to).ok());
  EXPECT_TRUE(failure.empty()) << failure;
  EXPECT_GE(rig.rec.writes().size(), 5u);
  EXPECT_EQ(Look(rig.mem->data(), rig.mem->size(), A("2001:db8:ab01::5")),
            (Answer{true, Mac("02:00:00:00:00:02"), 1}));
  EXPECT_EQ(Look(rig.mem->data(), rig.mem->size(), A("2001:db8:1::5")), (Answer{true, Mac("02:00:00:00:00:01"), 0}));
}

}  // namespace
}  // namespace fibnic
