// The API reads a view, not the Fib: status comes from the published snapshot
// while the Fib's strand is blocked (listings then answer 503 after a bounded
// wait instead of hanging), a commit goes through while the web thread is
// busy, and ?verify=1 reads the device back at most once per interval,
// reporting the entries the test corrupted in the BAR.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "device/fibnic_lookup.h"
#include "device/fibnic_regs.h"
#include "tests/web/http_client.h"
#include "tests/web/server_fixture.h"
#include "tests/web/web_harness.h"

namespace fibnic::web {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(harness_.LoadSynthetic(2000, 200, 13).ok());
    WebConfig cfg;
    cfg.port = 0;
    server_ = std::make_unique<testing::ServerThread>(cfg, [this](boost::asio::io_context& io, Router& r) {
      ASSERT_TRUE(harness_.Mount(io, r, &telemetry_, 500ms).ok());
    }, &telemetry_);
    ASSERT_TRUE(server_->status().ok()) << server_->status().ToString();
    server_->BeforeStop([this] { harness_.Unmount(); });
  }
  void TearDown() override { server_.reset(); }
  // The snapshot once its counts are of the last commit, or at the timeout.
  std::shared_ptr<const FibSnapshot> CountsOfTheLastCommitWithin(std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      const auto snap = harness_.view()->snapshot();
      if (snap->counts && snap->counts_commits == snap->commits) return snap;
      std::this_thread::sleep_for(20ms);
    }
    return harness_.view()->snapshot();
  }

  Telemetry telemetry_;
  testing::Harness harness_;
  std::unique_ptr<testing::ServerThread> server_;
};

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

TEST_F(ViewTest, StatusIsServedWhileTheFibsStrandIsBlocked) {
  auto r = testing::Get(server_->port(), "/api/v1/status");  // the first counts come from the strand
  ASSERT_EQ(r.status, 200) << r.body;
  const json before = json::parse(r.body);

  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  harness_.pipeline().Post([gate](const Fib&) { gate.wait_for(20s); });

  auto t0 = Clock::now();
  r = testing::Get(server_->port(), "/api/v1/status");
  EXPECT_EQ(r.status, 200) << r.body;
  EXPECT_LT(Seconds(Clock::now() - t0), 1.0) << "status waited for the strand";
  EXPECT_EQ(json::parse(r.body)["routes"], before["routes"]);

  t0 = Clock::now();
  r = testing::Get(server_->port(), "/api/v1/routes?limit=1");
  EXPECT_EQ(r.status, 503) << r.body;
  EXPECT_NE(r.body.find("strand is busy"), std::string::npos) << r.body;
  EXPECT_LT(Seconds(Clock::now() - t0), 10.0);

  release.set_value();
  r = testing::Get(server_->port(), "/api/v1/routes?limit=1");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST_F(ViewTest, ACommitGoesThroughWhileTheWebThreadIsBusy) {
  // Hold the web server's thread for 3 s from a side thread.
  std::thread busy([this] { server_->OnServer([] { std::this_thread::sleep_for(3s); }); });
  std::this_thread::sleep_for(100ms);
  const IpAddr dst = *IpAddr::Parse("100.64.7.9");
  // Through a neighbour whose adjacency holds a code (the Fib ranks them; any will do).
  const uint8_t* b = harness_.bar().data();
  const auto gw_it = std::find_if(harness_.neighbors().begin(), harness_.neighbors().end(), [b](const Neighbor& n) {
    for (uint32_t c = 1; c <= 3; ++c) {
      const auto e = regs::NexthopEntry::Decode(b + regs::NexthopOffset(c));
      if (e.valid() && e.dst_mac == n.mac && e.port == n.port) return true;
    }
    return false;
  });
  ASSERT_NE(gw_it, harness_.neighbors().end());
  const Neighbor& gw = *gw_it;
  auto t0 = Clock::now();
  harness_.Upsert(Route{*Prefix::Parse("100.64.7.0/24"), RouteSource::kStatic, 1, {NextHop{gw.addr, gw.port}}});
  ASSERT_TRUE(harness_.Commit().ok());
  const double took = Seconds(Clock::now() - t0);
  const HwDecision hw = HwLookup(harness_.bar().data(), harness_.bar().size(), dst);
  busy.join();
  EXPECT_LT(took, 2.0) << "the commit waited for the web thread";
  EXPECT_TRUE(hw.forward) << hw.ToString();
  EXPECT_EQ(hw.dst_mac, gw.mac);
}

TEST_F(ViewTest, VerifyIsRateLimitedAndReportsDrift) {
  auto r = testing::Get(server_->port(), "/api/v1/status?verify=1");
  ASSERT_EQ(r.status, 200) << r.body;
  json st = json::parse(r.body);
  EXPECT_EQ(st["verify"]["in_sync"], true) << st["verify"].dump();
  EXPECT_EQ(st["verify"]["drift_total"], 0);
  EXPECT_EQ(st["verify"]["generation"], st["device"]["generation"]);

  r = testing::Get(server_->port(), "/api/v1/status?verify=1");
  EXPECT_EQ(r.status, 429) << r.body;
  EXPECT_TRUE(r.headers.count("Retry-After")) << r.body;
  EXPECT_EQ(testing::Get(server_->port(), "/api/v1/status").status, 200);  // only verify is limited
  EXPECT_EQ(testing::Get(server_->port(), "/api/v1/status?verify=2").status, 400);

  // Change next-hop entry 1 behind the writer's back.
  const uint64_t off = regs::NexthopOffset(1) + 4;
  auto old = harness_.bar().Read32(off);
  ASSERT_TRUE(old.ok());
  ASSERT_TRUE(harness_.bar().Write32(off, ~*old).ok());
  std::this_thread::sleep_for(600ms);
  r = testing::Get(server_->port(), "/api/v1/status?verify=1");
  ASSERT_EQ(r.status, 200) << r.body;
  st = json::parse(r.body);
  EXPECT_EQ(st["verify"]["in_sync"], false);
  EXPECT_EQ(st["verify"]["drift_total"], 1);
  EXPECT_EQ(st["verify"]["drift"], json::parse(R"([{"table":"nexthop","index":1}])"));
  ASSERT_TRUE(harness_.bar().Write32(off, *old).ok());
}

// The status counts were once recounted only when a request found them
// old, and that request got the previous ones — 20,000 routes that all punt
// showed as `ipv4.total 4` until the next request (`counts_age_s` 138). Now
// every commit schedules the recount: with no request in between, the next
// status is true. Shadowed routes are counted apart (they stay in `punted`,
// the state the listing gives them).
TEST_F(ViewTest, StatusCountsFollowCommitsNotRequests_Issue19) {
  auto r = testing::Get(server_->port(), "/api/v1/status");
  ASSERT_EQ(r.status, 200) << r.body;
  const json before = json::parse(r.body)["routes"]["ipv4"];

  // A /9 no synthetic route lies inside (covering ones do not change totals
  // or become shadowed: each keeps /24s of its own).
  std::optional<Prefix> region;
  for (uint32_t top = 0x2C000000; top < 0xE0000000 && !region; top += 0x00800000) {
    const Prefix cand = Prefix::V4(top, 9);
    bool free = true;
    for (const Route& rt : harness_.routes()) free = free && !(rt.prefix.len() > 9 && cand.Contains(rt.prefix));
    if (free) region = cand;
  }
  ASSERT_TRUE(region) << "no free /9 for the test's routes";
  // 20,000 /24s through a gateway with no neighbour: every one punts. Plus
  // the /16 their first 256 cover entirely: shadowed.
  const NextHop unresolved{*IpAddr::Parse("10.254.0.9"), 1};
  const uint32_t base = region->addr().v4();
  for (uint32_t i = 0; i < 20000; ++i) {
    harness_.Upsert(Route{Prefix::V4(base + (i << 8), 24), RouteSource::kStatic, 1, {unresolved}});
  }
  harness_.Upsert(Route{Prefix::V4(base, 16), RouteSource::kStatic, 1, {unresolved}});
  ASSERT_TRUE(harness_.Commit().ok());
  const auto committed = Clock::now();

  // No request in between: the recount must happen by itself, within its
  // cost bound (20x a recount: well under a second here, up to a minute
  // under ASan on a loaded machine).
  const auto snap = CountsOfTheLastCommitWithin(150s);
  ASSERT_TRUE(snap->counts && snap->counts_commits == snap->commits)
      << "counts of commit " << snap->counts_commits << " while the Fib is at commit " << snap->commits
      << " 150 s after the routes went in, with no request asking";

  r = testing::Get(server_->port(), "/api/v1/status");
  ASSERT_EQ(r.status, 200) << r.body;
  const json st = json::parse(r.body);
  const json& now = st["routes"]["ipv4"];
  EXPECT_EQ(now["total"].get<uint64_t>(), before["total"].get<uint64_t>() + 20001) << now.dump();
  EXPECT_GE(now["punted"].get<uint64_t>(), before["punted"].get<uint64_t>() + 20000) << now.dump();
  EXPECT_EQ(now["shadowed"].get<uint64_t>(), before["shadowed"].get<uint64_t>() + 1) << now.dump();
  // The shadowed /16 is not counted as punted (it punts no traffic).
  EXPECT_EQ(now["offloaded"].get<uint64_t>() + now["partial"].get<uint64_t>() + now["punted"].get<uint64_t>() +
                now["shadowed"].get<uint64_t>(),
            now["total"].get<uint64_t>())
      << now.dump();
  EXPECT_EQ(st["counts_commits"], st["commits"]);
  EXPECT_LE(st["counts_age_s"].get<double>(), Seconds(Clock::now() - committed)) << "counts older than the commit";
}

// While updates wait for the strand, recounts wait longer than otherwise
// (FibView::Options::busy_cost_factor: 5x in fibnicd, the same here) — but
// they still come: in a burst that never ends the counts follow the commits
// by themselves, late, not never (nor only at the next commit, a minute
// later here).
TEST_F(ViewTest, StatusCountsStillFollowCommitsWhileTheStrandIsBusy) {
  auto r = testing::Get(server_->port(), "/api/v1/status");
  ASSERT_EQ(r.status, 200) << r.body;
  const uint64_t total_before = json::parse(r.body)["routes"]["ipv4"]["total"].get<uint64_t>();
  harness_.SetStrandAlwaysBusy(true);
  const NextHop unresolved{*IpAddr::Parse("10.254.0.9"), 1};
  std::optional<Prefix> fresh;  // a /24 the table does not hold
  for (uint32_t a = 0xCB007100; !fresh; a += 0x100) {
    const Prefix cand = Prefix::V4(a, 24);
    if (std::none_of(harness_.routes().begin(), harness_.routes().end(),
                     [&](const Route& rt) { return rt.prefix == cand; })) {
      fresh = cand;
    }
  }
  harness_.Upsert(Route{*fresh, RouteSource::kStatic, 1, {unresolved}});
  ASSERT_TRUE(harness_.Commit().ok());
  const auto snap = CountsOfTheLastCommitWithin(45s);
  harness_.SetStrandAlwaysBusy(false);
  ASSERT_TRUE(snap->counts && snap->counts_commits == snap->commits)
      << "counts of commit " << snap->counts_commits << " while the Fib is at commit " << snap->commits
      << " 45 s after the route went in, the strand busy throughout";
  r = testing::Get(server_->port(), "/api/v1/status");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json::parse(r.body)["routes"]["ipv4"]["total"].get<uint64_t>(), total_before + 1);
}

}  // namespace
}  // namespace fibnic::web
