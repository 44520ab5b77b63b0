// What the FPM source tells zebra about its routes (FibOffloadOracle, over a
// real Pipeline and Fib and hwif's FakeDeviceWriter): offloaded only when the
// device forwards the whole route (checked on the encoded image with the
// spec's HwLookup), trapped when it punts any of it or another source's route
// wins, none for a prefix with no FPM route, failed — at once, not after the
// device recovers — when the push of the routes asked about failed.
#include "fibnicd/fpm_offload_oracle.h"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <future>
#include <thread>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "hwif/fake_device_writer.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;

const MacAddr kMac = *MacAddr::Parse("52:54:00:00:00:0a");

Route Via(const char* prefix, RouteSource source, uint8_t distance) {
  return Route{*Prefix::Parse(prefix), source, distance, {NextHop{*IpAddr::Parse("192.0.2.1"), 1}}};
}

class FpmOffloadOracleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pipeline_.Start();
    pipeline_.sink().UpsertNeighbor(Neighbor{*IpAddr::Parse("192.0.2.1"), kMac, 1, NeighState::kReachable});
    std::promise<Status> done;
    pipeline_.FinishInitialSync([&done](Status st, const Fib&) { done.set_value(st); });
    ASSERT_TRUE(done.get_future().get().ok());
  }
  std::vector<FpmOffload> Ask(const std::vector<const char*>& prefixes) {
    std::vector<Prefix> ps;
    for (const char* p : prefixes) ps.push_back(*Prefix::Parse(p));
    auto answer = std::make_shared<std::promise<std::vector<FpmOffload>>>();
    auto f = answer->get_future();
    oracle_.Ask(ps, [answer](std::vector<FpmOffload> s) { answer->set_value(std::move(s)); });
    EXPECT_EQ(f.wait_for(5s), std::future_status::ready) << "no answer";
    return f.wait_for(0s) == std::future_status::ready ? f.get() : std::vector<FpmOffload>{};
  }
  bool Forwards(const char* dst) {
    return pipeline_.Query([&](const Fib&) {
      const auto bar = EncodeBar(dev_.device(), dev_.generation());
      return HwLookup(bar.data(), bar.size(), *IpAddr::Parse(dst)).forward;
    });
  }

  FakeDeviceWriter dev_;
  Pipeline pipeline_{FibConfig(), dev_, BatchPolicy{}};
  FibOffloadOracle oracle_{pipeline_};
};

TEST_F(FpmOffloadOracleTest, StatesFollowTheDevice) {
  // zebra's routes as the kernel source gives them.
  pipeline_.sink().UpsertRoute(Via("10.1.0.0/16", RouteSource::kKernel, 20));
  pipeline_.sink().UpsertRoute(Via("10.2.0.0/25", RouteSource::kKernel, 20));  // longer than /24: punted
  pipeline_.sink().UpsertRoute(Via("10.3.0.0/16", RouteSource::kKernel, 20));  // loses to the route file's
  pipeline_.sink().UpsertRoute(Via("10.3.0.0/16", RouteSource::kStatic, 1));
  pipeline_.sink().UpsertRoute(Via("10.4.0.0/16", RouteSource::kStatic, 1));  // no kernel route
  const auto s = Ask({"10.1.0.0/16", "10.2.0.0/25", "10.3.0.0/16", "10.4.0.0/16", "10.5.0.0/16"});
  // Asked after the upserts: answered once they are on the device.
  EXPECT_TRUE(Forwards("10.1.2.3"));
  EXPECT_FALSE(Forwards("10.2.0.3"));
  EXPECT_EQ(s, (std::vector<FpmOffload>{FpmOffload::kOffloaded, FpmOffload::kTrapped, FpmOffload::kTrapped,
                                        FpmOffload::kNone, FpmOffload::kNone}));
  EXPECT_EQ(FpmOffloadFlags(s[0]), unsigned{RTM_F_OFFLOAD});
  EXPECT_EQ(FpmOffloadFlags(s[1]), unsigned{RTM_F_OFFLOAD | RTM_F_TRAP});
}

TEST_F(FpmOffloadOracleTest, AFailedPushAnswersFailedAtOnce) {
  dev_.fail_pushes = 1;
  dev_.fail_syncs = 1000;  // the pipeline's resyncs keep failing meanwhile
  pipeline_.sink().UpsertRoute(Via("10.1.0.0/16", RouteSource::kKernel, 20));
  EXPECT_EQ(Ask({"10.1.0.0/16"}), std::vector<FpmOffload>{FpmOffload::kFailed});
  EXPECT_EQ(FpmOffloadFlags(FpmOffload::kFailed), unsigned{RTM_F_OFFLOAD_FAILED});
  const uint64_t commits = oracle_.commits();
  EXPECT_GT(commits, 0u);
  // The device recovers (the pipeline resyncs by itself): offloaded.
  pipeline_.Query([&](const Fib&) { dev_.fail_syncs = 0; });
  for (int i = 0; i < 100 && pipeline_.metrics().resyncs == 0; ++i) std::this_thread::sleep_for(50ms);
  ASSERT_GT(pipeline_.metrics().resyncs, 0u) << "the pipeline did not resync";
  EXPECT_EQ(Ask({"10.1.0.0/16"}), std::vector<FpmOffload>{FpmOffload::kOffloaded});
  EXPECT_TRUE(Forwards("10.1.2.3"));
  EXPECT_GT(oracle_.commits(), commits);
}

}  // namespace
}  // namespace fibnic
