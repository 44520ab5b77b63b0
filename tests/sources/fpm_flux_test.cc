// Routes in flux (sources/fpm/fpm_flux.h, issue #16): the kernel's state of
// zebra's routes gates what FPM says of them. zebra installs in the kernel
// first and sends over FPM after; fibnicd may read either stream first.
#include <linux/rtnetlink.h>

#include <cstring>

#include <gtest/gtest.h>

#include "sources/fpm/fpm_table.h"
#include "sources/kernel/kernel_table.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using testing::A;
using testing::InlineRoute;
using testing::KernelView;
using testing::P;
using testing::RecordingSink;
using testing::Via;

class FpmFluxTest : public ::testing::Test {
 protected:
  void Fpm(const NlRoute& r) {
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(table.ApplyFrame(m.data(), m.size()).ok());
  }
  void FpmObject(uint32_t id, const NlPath& path) {
    NlNexthop n;
    n.id = id;
    n.path = path;
    const auto m = BuildNexthopMessage(n);
    ASSERT_TRUE(table.ApplyFrame(m.data(), m.size()).ok());
  }
  static NlRoute ByObject(const std::string& p, uint32_t id) {
    NlRoute r = InlineRoute(p, {});
    r.nh_id = id;
    return r;
  }
  std::optional<std::vector<NextHop>> Device(const std::string& p) {
    auto r = sink.routes();
    auto it = r.find(P(p));
    if (it == r.end()) return std::nullopt;
    return it->second.paths;
  }
  RecordingSink sink;
  FpmTableOptions options;
  FpmTable table{sink, testing::TestPorts(), options};
  const std::vector<NextHop> host{NextHop::ToHost()};
  const std::vector<NextHop> via1{{A("192.0.2.1"), 0}};
  const std::vector<NextHop> via5{{A("192.0.2.5"), 1}};
};

// bench/frr's bgpd restart: zebra deleted the route from the kernel; FPM's
// delete trails. The device stops forwarding along it at once, and does
// what the kernel does: no route, the prefix left to its cover.
TEST_F(FpmFluxTest, KernelDeleteBeforeFpmDeleteLeavesThePrefixToTheCoverAtOnce) {
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  ASSERT_EQ(Device("10.1.0.0/16"), via1);
  table.KernelRoute(KernelView("10.1.0.0/16", true));
  EXPECT_EQ(Device("10.1.0.0/16"), std::nullopt);
  EXPECT_EQ(table.in_flux(), 1u);
  sink.TakeLog();
  Fpm(InlineRoute("10.1.0.0/16", {}, true));
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"delete 10.1.0.0/16"}));
  EXPECT_EQ(table.in_flux(), 0u);
  EXPECT_EQ(table.counts().flux_entered, 1u);
}

// A more-specific is in the kernel; FPM has only the cover so far: the
// more-specific punts (it beats the cover), the cover is left alone.
TEST_F(FpmFluxTest, KernelAddBeforeFpmAddPuntsThePrefixNotTheCover) {
  Fpm(InlineRoute("10.0.0.0/8", {Via("192.0.2.1", 10)}));
  sink.TakeLog();
  table.KernelRoute(KernelView("10.1.0.0/24", false, {Via("192.0.2.5", 11)}));
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"upsert 10.1.0.0/24"}));
  EXPECT_EQ(Device("10.1.0.0/24"), host);
  EXPECT_EQ(sink.routes().at(P("10.1.0.0/24")).distance, options.distance);
  EXPECT_EQ(Device("10.0.0.0/8"), via1);
  Fpm(InlineRoute("10.1.0.0/24", {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/24"), via5);
  EXPECT_EQ(table.in_flux(), 0u);
}

// zebra's own install, read from FPM first and then echoed by the kernel,
// and its delete likewise: nothing punts, the RIB hears nothing more.
TEST_F(FpmFluxTest, FpmFirstThenKernelEchoCausesNoPunt) {
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10), Via("192.0.2.5", 11)}));
  FpmObject(7, Via("192.0.2.1", 10));
  Fpm(ByObject("10.2.0.0/16", 7));
  sink.TakeLog();
  // The kernel names the paths in another order, and by object with paths
  // resolved through its own objects.
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.5", 11), Via("192.0.2.1", 10)}));
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.1", 10)}, 7));
  Fpm(InlineRoute("10.1.0.0/16", {}, true));
  sink.TakeLog();
  table.KernelRoute(KernelView("10.1.0.0/16", true));
  EXPECT_TRUE(sink.TakeLog().empty());
  EXPECT_EQ(table.counts().flux_entered, 0u);
  EXPECT_EQ(table.in_flux(), 0u);
  EXPECT_EQ(Device("10.2.0.0/16"), via1);
  // Not silence for everything: another object in the kernel does punt.
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.1", 10)}, 8));
  EXPECT_EQ(Device("10.2.0.0/16"), host);
}

// zebra replaced the route in the kernel; FPM still has the old paths (and
// then an intermediate state the kernel never had): punted until FPM
// brings the kernel's. Likewise by next-hop object id.
TEST_F(FpmFluxTest, ReplaceWithDifferentNexthopsPuntsUntilFpmAgrees) {
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/16"), host);
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10), Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/16"), host);
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/16"), via5);

  FpmObject(7, Via("192.0.2.1", 10));
  FpmObject(8, Via("192.0.2.5", 11));
  Fpm(ByObject("10.2.0.0/16", 7));
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.5", 11)}, 8));
  EXPECT_EQ(Device("10.2.0.0/16"), host);
  Fpm(ByObject("10.2.0.0/16", 8));
  EXPECT_EQ(Device("10.2.0.0/16"), via5);
  EXPECT_EQ(table.in_flux(), 0u);
}

TEST_F(FpmFluxTest, KernelReturningToFpmsStateClears) {
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/16"), host);
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.1", 10)}));
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
  // Gone and back in the kernel, while FPM never heard of the change.
  table.KernelRoute(KernelView("10.1.0.0/16", true));
  EXPECT_EQ(Device("10.1.0.0/16"), std::nullopt);
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.1", 10)}));
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
  // FPM then passes through what the kernel passed through (a bgpd
  // restart's delete and re-add, read after the kernel's re-add): its stale
  // delete punts instead of falling to a cover, its re-add ends the flux.
  Fpm(InlineRoute("10.1.0.0/16", {}, true));
  EXPECT_EQ(Device("10.1.0.0/16"), host);
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
  EXPECT_EQ(table.in_flux(), 0u);
}

// Reality: kernel delete, FPM delete, kernel add Y, FPM add Y. fibnicd reads
// both FPM frames first. Agreement is by state: the kernel's delete read
// (no route, as the kernel had then), forwarded once the kernel's add is read.
TEST_F(FpmFluxTest, FpmFramesReadBeforeTheKernelEventsTheyFollowAgreeByState) {
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  Fpm(InlineRoute("10.1.0.0/16", {}, true));
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.5", 11)}));
  table.KernelRoute(KernelView("10.1.0.0/16", true));
  EXPECT_EQ(Device("10.1.0.0/16"), std::nullopt);
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/16"), via5);
  EXPECT_EQ(table.flux_punting(), 0u);
}

// zebra reconnected and replays. A stale route the kernel now has otherwise
// punts until the replay brings the kernel's; a stale one in flux that the
// sweep removes keeps punting while the kernel holds a route for it; a
// stale one the kernel deletes goes at once.
TEST_F(FpmFluxTest, FluxDuringReplayAndStaleRoutes) {
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  Fpm(InlineRoute("10.2.0.0/16", {Via("192.0.2.1", 10)}));
  Fpm(InlineRoute("10.3.0.0/16", {Via("192.0.2.1", 10)}));
  table.MarkAllStale();
  table.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.5", 11)}));
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.5", 11)}));
  table.KernelRoute(KernelView("10.3.0.0/16", true));
  EXPECT_EQ(Device("10.1.0.0/16"), host);
  EXPECT_EQ(Device("10.2.0.0/16"), host);
  EXPECT_EQ(Device("10.3.0.0/16"), std::nullopt);
  EXPECT_EQ(table.counts().kernel_dropped, 1u);
  Fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.5", 11)}));  // replayed
  EXPECT_EQ(Device("10.1.0.0/16"), via5);
  EXPECT_EQ(table.SweepStale(), 1u);  // 10.2 was not replayed
  EXPECT_EQ(Device("10.2.0.0/16"), host) << "the kernel still has a route for it";
  table.KernelRoute(KernelView("10.2.0.0/16", true));
  EXPECT_EQ(Device("10.2.0.0/16"), std::nullopt);
  EXPECT_EQ(table.flux_punting(), 0u);
}

// An entry waiting for FPM to catch up does not punt, so the route follows
// its group like any other.
TEST_F(FpmFluxTest, GroupChangeReachesAPrefixWaitingForFpm) {
  FpmObject(7, Via("192.0.2.1", 10));
  Fpm(ByObject("10.2.0.0/16", 7));
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.5", 11)}, 8));
  EXPECT_EQ(Device("10.2.0.0/16"), host);
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.1", 10)}, 7));
  EXPECT_EQ(Device("10.2.0.0/16"), via1);
  FpmObject(7, Via("192.0.2.5", 11));
  EXPECT_EQ(Device("10.2.0.0/16"), via5);
}

// The kernel's route has inline paths, FPM's names a group: compared by
// paths, so FPM changing the group to the kernel's paths ends the flux.
TEST_F(FpmFluxTest, GroupChangeThatAgreesWithTheKernelEndsTheFlux) {
  FpmObject(7, Via("192.0.2.1", 10));
  Fpm(ByObject("10.2.0.0/16", 7));
  table.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.2.0.0/16"), host);
  FpmObject(7, Via("192.0.2.5", 11));
  EXPECT_EQ(Device("10.2.0.0/16"), via5);
  EXPECT_EQ(table.in_flux(), 0u);
}

// A bounded map: an entry that no longer punts (waiting for FPM to catch up)
// gives way; beyond that, a disagreeing prefix punts by a placeholder that
// FPM's word replaces and the kernel's deletion removes.
TEST_F(FpmFluxTest, OverflowPuntsByPlaceholder) {
  options.flux_max = 1;
  FpmTable small{sink, testing::TestPorts(), options};
  auto fpm = [&](const NlRoute& r) {
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(small.ApplyFrame(m.data(), m.size()).ok());
  };
  fpm(InlineRoute("10.3.0.0/16", {Via("192.0.2.1", 10)}));
  fpm(InlineRoute("10.9.0.0/16", {Via("192.0.2.1", 10)}));
  small.KernelRoute(KernelView("10.9.0.0/16", false, {Via("192.0.2.5", 11)}));
  small.KernelRoute(KernelView("10.9.0.0/16", false, {Via("192.0.2.1", 10)}));  // back: waiting
  EXPECT_EQ(Device("10.9.0.0/16"), via1);
  small.KernelRoute(KernelView("10.1.0.0/16", false, {Via("192.0.2.5", 11)}));
  EXPECT_EQ(small.counts().flux_overflows, 0u) << "the waiting entry should have given way";
  small.KernelRoute(KernelView("10.2.0.0/16", false, {Via("192.0.2.5", 11)}));
  small.KernelRoute(KernelView("10.3.0.0/16", true));
  EXPECT_EQ(small.in_flux(), 1u);
  EXPECT_EQ(small.counts().flux_overflows, 2u);
  EXPECT_EQ(Device("10.1.0.0/16"), host);
  EXPECT_EQ(Device("10.2.0.0/16"), host);
  EXPECT_EQ(Device("10.3.0.0/16"), host);
  fpm(InlineRoute("10.2.0.0/16", {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.2.0.0/16"), via5);
  small.KernelRoute(KernelView("10.3.0.0/16", true));  // the kernel's word again: gone
  EXPECT_EQ(Device("10.3.0.0/16"), std::nullopt);
  fpm(InlineRoute("10.1.0.0/16", {Via("192.0.2.5", 11)}));
  EXPECT_EQ(Device("10.1.0.0/16"), via5);
  EXPECT_EQ(small.in_flux(), 0u);
}

// The kernel source tells a route by next-hop object with the object's
// paths as the kernel has them.
TEST(KernelIgnoredRoutes, RoutesByObjectAreToldWithTheObjectsPaths) {
  RecordingSink sink;
  std::vector<KernelRouteView> seen;
  KernelTableOptions o;
  o.ignore_protocols = FrrRouteProtocols();
  o.ignored_route = [&](const KernelRouteView& v) { seen.push_back(v); };
  KernelTable table(sink, PortNames{{"k0", 0}}, o, nullptr);
  auto feed = [&](const std::vector<uint8_t>& m) {
    std::vector<uint32_t> aligned((m.size() + 3) / 4);
    std::memcpy(aligned.data(), m.data(), m.size());
    ASSERT_TRUE(table.Apply(reinterpret_cast<const nlmsghdr*>(aligned.data())).ok());
  };
  NlNexthop a, b, g;
  a.id = 1;
  a.path = Via("10.0.0.2", 10);
  b.id = 2;
  b.path = Via("10.0.0.3", 10);
  g.id = 3;
  g.group = {{1, 1}, {2, 1}};
  feed(BuildNexthopMessage(a));
  feed(BuildNexthopMessage(b));
  feed(BuildNexthopMessage(g));
  NlRoute r = InlineRoute("203.0.113.0/24", {});
  r.nh_id = 3;
  feed(BuildRouteMessage(r));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].deleted);
  EXPECT_EQ(seen[0].nh_id, 3u);
  EXPECT_EQ(seen[0].type, RTN_UNICAST);
  ASSERT_EQ(seen[0].paths.size(), 2u);
  EXPECT_EQ(RouteMeaningDigest(RTN_UNICAST, seen[0].paths, false),
            RouteMeaningDigest(RTN_UNICAST, {Via("10.0.0.3", 10), Via("10.0.0.2", 10)}, false));
  EXPECT_NE(RouteMeaningDigest(RTN_UNICAST, seen[0].paths, false),
            RouteMeaningDigest(RTN_UNICAST, {Via("10.0.0.2", 10)}, false));
}

}  // namespace
}  // namespace fibnic
