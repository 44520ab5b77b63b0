// The readback audit against the pipeline and FakeDeviceWriter: a clean
// device has no drift; entries the test changes behind the writer's back are
// exactly the drift reported (events bounded by max_events, the rest summed
// up), a repairing audit makes the device answer as the routes say again; a
// pass every read of which a push overlaps is inconclusive, not drift; an
// unreadable device is an error; the thread runs at its interval.
#include "fibnicd/device_audit.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <set>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "hwif/fake_device_writer.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;

const MacAddr kMacA = *MacAddr::Parse("52:54:00:00:00:0a");

Route R(const char* prefix, const char* gw, PortId port) {
  return Route{*Prefix::Parse(prefix), RouteSource::kKernel, 20, {NextHop{*IpAddr::Parse(gw), port}}};
}

class DeviceAuditTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pipeline_.Start();
    pipeline_.sink().UpsertNeighbor(Neighbor{*IpAddr::Parse("192.0.2.1"), kMacA, 1, NeighState::kReachable});
    pipeline_.sink().UpsertRoute(R("10.0.0.0/8", "192.0.2.1", 1));
    std::promise<Status> done;
    pipeline_.FinishInitialSync([&done](Status st, const Fib&) { done.set_value(st); });
    ASSERT_TRUE(done.get_future().get().ok());
  }
  bool OnDeviceWithin(std::chrono::milliseconds timeout) {
    auto done = std::make_shared<std::promise<void>>();
    auto f = done->get_future();
    pipeline_.Barrier([done] { done->set_value(); });
    return f.wait_for(timeout) == std::future_status::ready;
  }
  HwDecision Lookup(const char* dst) {
    const std::vector<uint8_t> bar = EncodeBar(dev_.device(), dev_.generation());
    return HwLookup(bar.data(), bar.size(), *IpAddr::Parse(dst));
  }
  std::unique_ptr<DeviceAudit> Audit(AuditConfig config) {
    // The pipeline is idle while a test's pass reads the fake device.
    return std::make_unique<DeviceAudit>(pipeline_, [this] { return dev_.ReadBack(); }, config,
                                         [this](bool warning, const std::string& m) {
                                           std::lock_guard<std::mutex> lock(events_mu_);
                                           events_.push_back((warning ? "W " : "I ") + m);
                                         });
  }
  std::vector<std::string> Events() {
    std::lock_guard<std::mutex> lock(events_mu_);
    return events_;
  }

  FakeDeviceWriter dev_;
  Pipeline pipeline_{FibConfig(), dev_, BatchPolicy{}};
  std::mutex events_mu_;
  std::vector<std::string> events_;
};

TEST_F(DeviceAuditTest, DriftIsExactlyWhatChangedBoundedInEventsAndRepaired) {
  AuditConfig config;
  config.max_events = 3;
  auto audit = Audit(config);
  audit->RunPass();
  EXPECT_EQ(audit->stats().runs, 1u);
  EXPECT_EQ(audit->stats().drift_entries, 0u);
  EXPECT_TRUE(Events().empty());

  // Behind the writer's back: next-hop entry 1 (10/8's) invalid, and the
  // first five non-zero SRAM words zeroed.
  ASSERT_TRUE(dev_.device().nexthop[1].valid());
  dev_.device().nexthop[1] = regs::NexthopEntry{};
  std::set<std::string> changed = {"nexthop[1]"};
  std::vector<uint8_t>& sram = dev_.device().sram;
  for (size_t w = 0; w + 4 <= sram.size() && changed.size() < 6; w += 4) {
    if (sram[w] | sram[w + 1] | sram[w + 2] | sram[w + 3]) {
      std::fill(sram.begin() + static_cast<ptrdiff_t>(w), sram.begin() + static_cast<ptrdiff_t>(w + 4), 0);
      changed.insert("sram4[" + std::to_string(w / 4) + "]");
    }
  }
  ASSERT_EQ(changed.size(), 6u);
  EXPECT_FALSE(Lookup("10.1.2.3").forward);

  audit->RunPass();
  EXPECT_EQ(audit->stats().runs, 2u);
  EXPECT_EQ(audit->stats().drift_entries, 6u);
  EXPECT_EQ(audit->stats().repairs, 0u);
  const auto events = Events();
  ASSERT_EQ(events.size(), 4u);  // three entries, then the summary
  for (size_t i = 0; i < 3; ++i) {
    const size_t open = events[i].find("device ") + 7, close = events[i].find(']');
    ASSERT_NE(close, std::string::npos) << events[i];
    EXPECT_TRUE(changed.count(events[i].substr(open, close + 1 - open))) << events[i];
    EXPECT_EQ(events[i].rfind("W audit: ", 0), 0u) << events[i];
  }
  EXPECT_NE(events[3].find("6 device entries drifted (3 not listed); repair is off"), std::string::npos) << events[3];
  EXPECT_FALSE(Lookup("10.1.2.3").forward) << "an audit without repair wrote the device";

  config.repair = true;
  auto repairing = Audit(config);
  repairing->RunPass();
  EXPECT_EQ(repairing->stats().repairs, 1u);
  EXPECT_NE(Events().back().find("rewritten through the writer"), std::string::npos) << Events().back();
  const HwDecision d = Lookup("10.1.2.3");
  EXPECT_TRUE(d.forward) << d.ToString();
  EXPECT_EQ(d.dst_mac, kMacA);
  EXPECT_EQ(d.port, 1);
  repairing->RunPass();
  EXPECT_EQ(repairing->stats().drift_entries, 0u);
}

TEST_F(DeviceAuditTest, APushOverlappingEveryReadIsInconclusiveNotDrift) {
  AuditConfig config;
  config.retries = 2;
  config.retry_delay = 1ms;
  int n = 0;
  DeviceAudit audit(pipeline_, [&] {
    // A route goes out while "the device is being read": the read saw the
    // old image, the writer has a newer one.
    auto held = dev_.ReadBack();
    pipeline_.sink().UpsertRoute(R(("11." + std::to_string(n++) + ".0.0/16").c_str(), "192.0.2.1", 1));
    EXPECT_TRUE(OnDeviceWithin(5s));
    return held;
  }, config, [&](bool, const std::string& m) { ADD_FAILURE() << "event from an overlapped pass: " << m; });
  audit.RunPass();
  EXPECT_EQ(n, 3);  // the first read and two retries
  EXPECT_EQ(audit.stats().inconclusive, 1u);
  EXPECT_EQ(audit.stats().runs, 0u);
  EXPECT_EQ(audit.stats().drifted_total, 0u);
}

TEST_F(DeviceAuditTest, AnUnreadableDeviceIsAnError) {
  dev_.fail_readback = true;
  auto audit = Audit(AuditConfig{});
  audit->RunPass();
  EXPECT_EQ(audit->stats().errors, 1u);
  EXPECT_EQ(audit->stats().runs, 0u);
  ASSERT_EQ(Events().size(), 1u);
  EXPECT_NE(Events()[0].find("W audit: cannot read the device back"), std::string::npos) << Events()[0];
}

TEST_F(DeviceAuditTest, TheThreadRunsAtItsIntervalAndStops) {
  AuditConfig config;
  config.interval = 50ms;
  auto audit = Audit(config);
  audit->Start();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (audit->stats().runs < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_GE(audit->stats().runs, 3u);
  audit->Stop();
  const uint64_t runs = audit->stats().runs;
  std::this_thread::sleep_for(150ms);
  EXPECT_EQ(audit->stats().runs, runs);
}

}  // namespace
}  // namespace fibnic
