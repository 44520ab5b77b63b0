// The pipeline against FakeDeviceWriter: what reaches the "device" forwards as
// the routes handed in say (decoded with the spec's HwLookup, expectations
// from the input), start-up reads back once and syncs once, a failed push
// forces a full re-Sync, every commit is announced to the listener, and an
// IPv6 change is safe on the device before its TCAM entries are chosen, and
// other changes go out between the steps of that choice.
#include "fibnicd/pipeline.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <random>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "hwif/fake_device_writer.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;

const MacAddr kMacA = *MacAddr::Parse("52:54:00:00:00:0a");
const MacAddr kMacB = *MacAddr::Parse("52:54:00:00:00:0b");

Route R(const char* prefix, const char* gw, PortId port) {
  return Route{*Prefix::Parse(prefix), RouteSource::kKernel, 20, {NextHop{*IpAddr::Parse(gw), port}}};
}

// What the fake device does with dst, decoded as the hardware would.
HwDecision OnDevice(FakeDeviceWriter& dev, const char* dst) {
  const std::vector<uint8_t> bar = EncodeBar(dev.device(), dev.generation());
  return HwLookup(bar.data(), bar.size(), *IpAddr::Parse(dst));
}

class PipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pipeline_.SetCommitListener([this](const Fib& fib, const DeviceWriter& w) {
      commits_seen_ = fib.commits();
      generation_seen_ = w.generation();
    });
    pipeline_.Start();
    pipeline_.sink().UpsertNeighbor(Neighbor{*IpAddr::Parse("192.0.2.1"), kMacA, 1, NeighState::kReachable});
    pipeline_.sink().UpsertNeighbor(Neighbor{*IpAddr::Parse("192.0.2.2"), kMacB, 2, NeighState::kReachable});
    pipeline_.sink().UpsertRoute(R("10.0.0.0/8", "192.0.2.1", 1));
  }
  Status Initial() {
    std::promise<Status> done;
    pipeline_.FinishInitialSync([&done](Status st, const Fib&) { done.set_value(st); });
    return done.get_future().get();
  }
  // Waits until everything handed in so far is on the device.
  bool OnDeviceWithin(std::chrono::milliseconds timeout) {
    auto done = std::make_shared<std::promise<void>>();
    auto f = done->get_future();
    pipeline_.Barrier([done] { done->set_value(); });
    return f.wait_for(timeout) == std::future_status::ready;
  }

  // Gateways fd00::a (port 1, kMacA) and fd00::b (port 2, kMacB), and
  // 2001:db8::/32 through the first.
  std::pair<IpAddr, IpAddr> TwoIpv6GatewaysAndA32() {
    const IpAddr ga = *IpAddr::Parse("fd00::a"), gb = *IpAddr::Parse("fd00::b");
    pipeline_.sink().UpsertNeighbor(Neighbor{ga, kMacA, 1, NeighState::kReachable});
    pipeline_.sink().UpsertNeighbor(Neighbor{gb, kMacB, 2, NeighState::kReachable});
    pipeline_.sink().UpsertRoute(Route{*Prefix::Parse("2001:db8::/32"), RouteSource::kKernel, 20, {NextHop{ga, 1}}});
    return {ga, gb};
  }

  FakeDeviceWriter dev_;
  Pipeline pipeline_{FibConfig(), dev_, BatchPolicy{}};
  std::atomic<uint64_t> commits_seen_{0};
  std::atomic<uint32_t> generation_seen_{0};
};

TEST_F(PipelineTest, StartUpReadsBackOnceSyncsOnceThenPushesDeltas) {
  // Nothing reaches the device before the initial sync.
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(dev_.syncs, 0u);
  EXPECT_EQ(dev_.pushes, 0u);
  ASSERT_TRUE(Initial().ok());
  EXPECT_EQ(dev_.readbacks, 1u);
  EXPECT_EQ(dev_.syncs, 1u);
  HwDecision d = OnDevice(dev_, "10.1.2.3");
  EXPECT_TRUE(d.forward) << d.ToString();
  EXPECT_EQ(d.dst_mac, kMacA);
  EXPECT_EQ(d.port, 1);
  EXPECT_FALSE(OnDevice(dev_, "11.0.0.1").forward);

  pipeline_.sink().UpsertRoute(R("11.0.0.0/16", "192.0.2.2", 2));
  ASSERT_TRUE(OnDeviceWithin(5s));
  EXPECT_EQ(dev_.syncs, 1u);  // a delta, not a second sync
  EXPECT_GE(dev_.pushes, 1u);
  EXPECT_GT(dev_.delta_sram_words, 0u);
  d = OnDevice(dev_, "11.0.255.1");
  EXPECT_TRUE(d.forward) << d.ToString();
  EXPECT_EQ(d.dst_mac, kMacB);
  EXPECT_EQ(generation_seen_.load(), dev_.generation());
  EXPECT_GE(commits_seen_.load(), 2u);
}

TEST_F(PipelineTest, FailedPushForcesAFullResync) {
  ASSERT_TRUE(Initial().ok());
  dev_.fail_pushes = 1;
  pipeline_.sink().UpsertRoute(R("11.0.0.0/16", "192.0.2.2", 2));
  // The barrier waits for the device to be known again: the retry re-Syncs.
  ASSERT_TRUE(OnDeviceWithin(10s));
  const PipelineMetrics m = pipeline_.metrics();
  EXPECT_EQ(m.push_errors, 1u);
  EXPECT_EQ(m.resyncs, 1u);
  EXPECT_NE(m.last_error.find("injected push failure"), std::string::npos) << m.last_error;
  EXPECT_EQ(dev_.syncs, 2u);
  EXPECT_TRUE(dev_.in_sync());
  EXPECT_TRUE(OnDevice(dev_, "11.0.0.1").forward);
}

TEST_F(PipelineTest, UnreadableDeviceAtStartStillSyncsWholeImage) {
  dev_.fail_readback = true;
  ASSERT_TRUE(Initial().ok());
  EXPECT_EQ(dev_.readbacks, 1u);
  EXPECT_EQ(dev_.syncs, 1u);
  EXPECT_TRUE(OnDevice(dev_, "10.0.0.1").forward);
}

TEST_F(PipelineTest, FailedInitialSyncIsReportedAndRetriedWithTheNextBatch) {
  dev_.fail_syncs = 1;
  EXPECT_FALSE(Initial().ok());
  EXPECT_FALSE(dev_.in_sync());
  pipeline_.sink().UpsertRoute(R("11.0.0.0/16", "192.0.2.2", 2));
  ASSERT_TRUE(OnDeviceWithin(10s));
  EXPECT_EQ(dev_.syncs, 2u);
  EXPECT_TRUE(OnDevice(dev_, "10.0.0.1").forward);
  EXPECT_TRUE(OnDevice(dev_, "11.0.0.1").forward);
}

// A more-specific IPv6 route inside a TCAM entry of another code: no state
// the pushes leave sends its addresses the old way (the safe part goes out
// first, the entry choice after), and once a barrier is released the entries
// are chosen again: the /48 and the rest of the /32 forward, each its way.
TEST_F(PipelineTest, AnIpv6ChangeIsSafeOnTheDeviceBeforeItsEntriesAreChosen) {
  const auto [ga, gb] = TwoIpv6GatewaysAndA32();
  ASSERT_TRUE(Initial().ok());
  ASSERT_EQ(OnDevice(dev_, "2001:db8:1::1").dst_mac, kMacA);
  auto wrong = std::make_shared<std::atomic<int>>(0), writes = std::make_shared<std::atomic<int>>(0);
  dev_.on_write = [wrong, writes](const DeviceImage& image) {
    const std::vector<uint8_t> bar = EncodeBar(image, 0);
    const HwDecision d = HwLookup(bar.data(), bar.size(), *IpAddr::Parse("2001:db8:1::1"));
    *wrong += d.forward && d.dst_mac != kMacB;
    ++*writes;
  };
  pipeline_.sink().UpsertRoute(Route{*Prefix::Parse("2001:db8:1::/48"), RouteSource::kKernel, 20, {NextHop{gb, 2}}});
  ASSERT_TRUE(OnDeviceWithin(5s));
  EXPECT_EQ(wrong->load(), 0) << "a pushed state sent the /48 to the /32's gateway";
  EXPECT_GE(writes->load(), 2) << "the punt and the entries: two pushes";
  HwDecision d = OnDevice(dev_, "2001:db8:1::1");
  EXPECT_TRUE(d.forward && d.dst_mac == kMacB) << d.ToString();
  d = OnDevice(dev_, "2001:db8:2::1");
  EXPECT_TRUE(d.forward && d.dst_mac == kMacA) << d.ToString();
  dev_.on_write = nullptr;
}

// IPv6 routes that each change code (every TCAM entry then punts) take an
// entry choice of many steps; an IPv4 route handed in during it goes out
// between two steps, while the entries are still punts — not behind the
// whole choice. A barrier waits for the choice: when it is released the
// entries are back.
TEST(PipelineBestSteps, AnIpv4ChangeGoesOutWhileTheEntryChoiceRuns) {
  FakeDeviceWriter dev;
  // Batches wait until the policy changes: the change of every route is one.
  Pipeline pipeline{FibConfig(), dev, BatchPolicy{std::chrono::hours(1), 1000000}};
  pipeline.Start();
  const IpAddr ga = *IpAddr::Parse("fd00::a"), gb = *IpAddr::Parse("fd00::b");
  pipeline.sink().UpsertNeighbor(Neighbor{ga, kMacA, 1, NeighState::kReachable});
  pipeline.sink().UpsertNeighbor(Neighbor{gb, kMacB, 2, NeighState::kReachable});
  pipeline.sink().UpsertNeighbor(Neighbor{*IpAddr::Parse("192.0.2.1"), kMacA, 1, NeighState::kReachable});
  // 100,000 /48s in a random pattern of two gateways: a choice of many tables.
  std::mt19937_64 rng(1);
  std::vector<std::pair<Prefix, bool>> routes;
  for (uint32_t i = 0; i < 100000; ++i) {
    const U128 addr = (U128{0x20010db8} << 96) + (U128{i} << 80);
    routes.emplace_back(Prefix::V6(addr, 48), rng() % 2 == 0);
  }
  auto upsert_all = [&](bool swap) {
    for (const auto& [p, a] : routes) {
      const bool to_a = a != swap;
      pipeline.sink().UpsertRoute(Route{p, RouteSource::kKernel, 20, {NextHop{to_a ? ga : gb, PortId(to_a ? 1 : 2)}}});
    }
  };
  upsert_all(false);
  std::promise<Status> synced;
  pipeline.FinishInitialSync([&synced](Status st, const Fib&) { synced.set_value(st); });
  ASSERT_TRUE(synced.get_future().get().ok());
  auto coded = [](const DeviceImage& image) {
    return std::count_if(image.tcam.begin(), image.tcam.end(), [](const auto& e) { return e.valid() && e.code != 0; });
  };
  ASSERT_GT(coded(dev.device()), 0);

  // Every route changes gateway, in one batch; its first push (the punts)
  // hands in the IPv4 route.
  struct Seen {
    bool handed = false;
    long coded_when_v4_out = -1;
  };
  auto seen = std::make_shared<Seen>();
  dev.on_write = [&pipeline, seen, coded](const DeviceImage& image) {
    if (!seen->handed) {
      seen->handed = true;
      pipeline.sink().UpsertRoute(R("11.0.0.0/16", "192.0.2.1", 1));
      return;
    }
    const std::vector<uint8_t> bar = EncodeBar(image, 0);
    if (seen->coded_when_v4_out < 0 && HwLookup(bar.data(), bar.size(), *IpAddr::Parse("11.0.0.1")).forward) {
      seen->coded_when_v4_out = coded(image);
    }
  };
  upsert_all(true);
  pipeline.SetBatchPolicy(BatchPolicy{});
  auto released = std::make_shared<std::promise<long>>();
  auto f = released->get_future();
  pipeline.Barrier([&dev, released, coded] { released->set_value(coded(dev.device())); });
  ASSERT_EQ(f.wait_for(30s), std::future_status::ready);
  const long coded_at_barrier = f.get();
  dev.on_write = nullptr;
  pipeline.Stop();
  EXPECT_EQ(seen->coded_when_v4_out, 0) << "the IPv4 route went out after the entry choice (or never)";
  EXPECT_GT(coded_at_barrier, 0) << "the barrier was released before the entries were chosen";
  EXPECT_GT(pipeline.metrics().best_steps_deferred, 0u);
}

// IPv6 routes handed in one at a time for over half a second, each about
// its own batch: the entry choices are paced (one begun per 100 ms while
// batches keep coming, or after 5 ms with none), not one per batch; once the
// burst ends a barrier waits for the choice covering the last one, and then
// every route forwards its way.
TEST_F(PipelineTest, EntryChoicesArePacedWhileIpv6ChangesKeepComing) {
  const auto [ga, gb] = TwoIpv6GatewaysAndA32();
  ASSERT_TRUE(Initial().ok());
  const uint64_t begun_before = pipeline_.metrics().choices_begun;
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto last = t0;
  uint32_t n = 0;
  int gaps = 0;  // the feeder's own pauses of 4 ms or more: a choice may begin in each
  while (Clock::now() - t0 < 600ms) {
    const U128 addr = (U128{0x20010db8} << 96) + (U128{n} << 80);
    pipeline_.sink().UpsertRoute(Route{Prefix::V6(addr, 48), RouteSource::kKernel, 20, {NextHop{gb, 2}}});
    ++n;
    const auto until = Clock::now() + 500us;
    while (Clock::now() < until) {
    }
    gaps += Clock::now() - last >= 4ms;
    last = Clock::now();
  }
  const double burst_s = std::chrono::duration<double>(Clock::now() - t0).count();
  ASSERT_TRUE(OnDeviceWithin(10s));
  const PipelineMetrics m = pipeline_.metrics();
  const uint64_t begun = m.choices_begun - begun_before;
  EXPECT_GE(begun, 2u) << "no choice began during the burst";
  EXPECT_LE(begun, static_cast<uint64_t>(burst_s / 0.1) + 2 + gaps)
      << n << " routes in " << burst_s << " s, " << m.batches << " batches, " << gaps << " pauses";
  EXPECT_GT(m.choices_paced, 0u);
  for (uint32_t i = 0; i < n; i += 97) {
    const U128 addr = (U128{0x20010db8} << 96) + (U128{i} << 80) + 1;
    const HwDecision d = OnDevice(dev_, IpAddr::V6(addr).ToString().c_str());
    EXPECT_TRUE(d.forward && d.dst_mac == kMacB) << i << ": " << d.ToString();
  }
  const HwDecision rest = OnDevice(dev_, "2001:db8:ffff::1");
  EXPECT_TRUE(rest.forward && rest.dst_mac == kMacA) << rest.ToString();
}

// A stop while a paced choice waits: the choice runs at once (a restart then
// finds the best entries held), and the stop does not spin through empty
// commits until the pacing would have let it begin.
TEST(PipelinePacing, StopChoosesAtOnceWithoutEmptyCommits) {
  FakeDeviceWriter dev;
  Pipeline pipeline{FibConfig(), dev, BatchPolicy{}};
  std::atomic<uint64_t> reports{0};
  pipeline.SetBatchObserver([&reports](const BatchReport&) { ++reports; });
  pipeline.Start();
  const IpAddr ga = *IpAddr::Parse("fd00::a"), gb = *IpAddr::Parse("fd00::b");
  pipeline.sink().UpsertNeighbor(Neighbor{ga, kMacA, 1, NeighState::kReachable});
  pipeline.sink().UpsertNeighbor(Neighbor{gb, kMacB, 2, NeighState::kReachable});
  pipeline.sink().UpsertRoute(Route{*Prefix::Parse("2001:db8::/32"), RouteSource::kKernel, 20, {NextHop{ga, 1}}});
  std::promise<Status> synced;
  pipeline.FinishInitialSync([&synced](Status st, const Fib&) { synced.set_value(st); });
  ASSERT_TRUE(synced.get_future().get().ok());
  // Two changes a few ms apart: the second one's choice is held back.
  pipeline.sink().UpsertRoute(Route{*Prefix::Parse("2001:db8:1::/48"), RouteSource::kKernel, 20, {NextHop{gb, 2}}});
  std::this_thread::sleep_for(3ms);
  pipeline.sink().UpsertRoute(Route{*Prefix::Parse("2001:db8:2::/48"), RouteSource::kKernel, 20, {NextHop{gb, 2}}});
  std::this_thread::sleep_for(2ms);
  const uint64_t before = reports.load();
  pipeline.Stop();
  EXPECT_LE(reports.load() - before, 4u) << "the stop went through empty commits";
  for (const char* dst : {"2001:db8:1::1", "2001:db8:2::1"}) {
    const HwDecision d = OnDevice(dev, dst);
    EXPECT_TRUE(d.forward && d.dst_mac == kMacB) << dst << ": " << d.ToString();
  }
}

// A slot held for an adjacency whose routes went is given to the one
// waiting for it once the hold lapses, with nothing more handed in: the
// pipeline commits at the Fib's slot review by itself.
TEST(PipelineSlotReview, AHeldSlotGoesToTheWaitingOneWhenTheHoldLapses) {
  FakeDeviceWriter dev;
  FibConfig cfg;  // 2-bit: three codes
  cfg.slot_hold = 300ms;
  Pipeline pipeline{cfg, dev, BatchPolicy{}};
  pipeline.Start();
  const char* gws[4] = {"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"};
  for (uint8_t k = 0; k < 4; ++k) {
    pipeline.sink().UpsertNeighbor(
        Neighbor{*IpAddr::Parse(gws[k]), MacAddr{{0x52, 0x54, 0, 0, 0, uint8_t(k + 1)}}, PortId(k), NeighState::kReachable});
  }
  pipeline.sink().UpsertRoute(R("10.0.0.0/8", gws[0], 0));
  pipeline.sink().UpsertRoute(R("11.0.0.0/8", gws[1], 1));
  pipeline.sink().UpsertRoute(R("12.0.0.0/16", gws[2], 2));
  pipeline.sink().UpsertRoute(R("13.0.0.0/24", gws[3], 3));  // the lightest: waits
  std::promise<Status> synced;
  pipeline.FinishInitialSync([&synced](Status st, const Fib&) { synced.set_value(st); });
  ASSERT_TRUE(synced.get_future().get().ok());
  const auto synced_at = std::chrono::steady_clock::now();
  auto on_device = [&](const char* dst) {
    auto done = std::make_shared<std::promise<HwDecision>>();
    auto f = done->get_future();
    pipeline.Post([&dev, dst, done](const Fib&) { done->set_value(OnDevice(dev, dst)); });
    return f.get();
  };
  ASSERT_TRUE(on_device("12.0.1.1").forward);
  ASSERT_FALSE(on_device("13.0.0.1").forward);

  pipeline.sink().DeleteRoute(*Prefix::Parse("12.0.0.0/16"), RouteSource::kKernel);
  std::this_thread::sleep_for(100ms);
  const bool early = on_device("13.0.0.1").forward;
  // The hold runs from the last commit that saw the weight at its highest
  // (fib/resolver.cc, Held), at or after the initial sync: only an answer
  // seen within a hold of that says something (a loaded machine may
  // oversleep, or take the deletion late).
  if (std::chrono::steady_clock::now() - synced_at < cfg.slot_hold) {
    EXPECT_FALSE(early) << "the slot went before the hold lapsed";
  }
  bool forwarded = false;
  for (int i = 0; i < 100 && !forwarded; ++i) {
    std::this_thread::sleep_for(20ms);
    forwarded = on_device("13.0.0.1").forward;
  }
  EXPECT_TRUE(forwarded) << "the hold lapsed and nobody took the slot";
  pipeline.Stop();
}

}  // namespace
}  // namespace fibnic
