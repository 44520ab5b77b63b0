// FpmTable::LinkState (fpm_links.cc): zebra's next-hop objects and inline
// paths follow what the kernel does when a link goes down, loses carrier or
// goes away (issue #14, "FPM carries routes the kernel does not hold or
// use"). Each expectation is the kernel's behaviour on 6.18, checked in a
// namespace (`ip monitor route nexthop`, `ip route`, `ip nexthop`): objects
// through the link removed without a message, groups keeping their other
// members, routes naming a removed object deleted, objects and routes
// refused while the carrier is off, nothing brought back by the carrier.
// zebra's inline routes are backed by such objects in the kernel too.
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "sources/fpm/fpm_table.h"
#include "sources/netlink/netlink_build.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using testing::A;
using testing::Concat;
using testing::InlineRoute;
using testing::P;
using testing::RecordingSink;
using testing::Via;

// Interfaces 10 and 11 are FIBNIC ports 0 and 1 (testing::TestPorts).
class FpmLinkTest : public ::testing::Test {
 protected:
  void Frame(std::vector<std::vector<uint8_t>> msgs) {
    auto payload = Concat(std::move(msgs));
    ASSERT_TRUE(table.ApplyFrame(payload.data(), payload.size()).ok());
  }
  std::vector<NextHop> PathsOf(const std::string& p) {
    auto r = sink.routes();
    auto it = r.find(P(p));
    return it == r.end() ? std::vector<NextHop>{} : it->second.paths;
  }
  static NlNexthop Single(uint32_t id, const std::string& gw, uint32_t ifindex) {
    NlNexthop n;
    n.id = id;
    n.path = Via(gw, ifindex);
    return n;
  }
  static NlNexthop Group(uint32_t id, std::vector<uint32_t> members) {
    NlNexthop n;
    n.id = id;
    for (uint32_t m : members) n.group.push_back({m, 1});
    return n;
  }
  static NlRoute ByObject(const std::string& p, uint32_t id) {
    NlRoute r = InlineRoute(p, {});
    r.nh_id = id;
    return r;
  }
  RecordingSink sink;
  FpmTable table{sink, testing::TestPorts(), FpmTableOptions{}};
  const std::vector<NextHop> host{NextHop::ToHost()};
  // No FPM route in the RIB: the kernel holds none (it removed or refused
  // it), so the device follows what covers it, as the kernel does.
  const std::vector<NextHop> gone{};
  const std::vector<NextHop> via1_port0{{A("192.0.2.1"), 0}};
  const std::vector<NextHop> via2_port1{{A("192.0.2.2"), 1}};
};

TEST_F(FpmLinkTest, CarrierLossRemovesObjectsThroughTheLinkAndTheirRoutes) {
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildRouteMessage(ByObject("198.51.100.0/24", 1)),
         BuildNexthopMessage(Single(4, "2001:db8::1", 10)), BuildRouteMessage(ByObject("2001:db8:100::/64", 4))});
  ASSERT_EQ(PathsOf("198.51.100.0/24"), via1_port0);
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);
  EXPECT_EQ(PathsOf("2001:db8:100::/64"), gone);
  EXPECT_EQ(table.routes(), 2u);  // zebra still has them: held for its delete, not in the RIB
}

TEST_F(FpmLinkTest, CarrierBackBringsNothingBackUntilZebraSendsTheObjectAndTheRoute) {
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildRouteMessage(ByObject("198.51.100.0/24", 1))});
  table.LinkState(10, false);
  table.LinkState(10, true);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);  // the kernel does not re-create objects
  // zebra re-installs the object: the kernel's route stays deleted.
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10))});
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);
  Frame({BuildRouteMessage(ByObject("198.51.100.0/24", 1))});
  EXPECT_EQ(PathsOf("198.51.100.0/24"), via1_port0);
}

TEST_F(FpmLinkTest, GroupKeepsItsOtherMembersAndDoesNotRegainTheLostOne) {
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
         BuildNexthopMessage(Group(3, {1, 2})), BuildRouteMessage(ByObject("198.51.101.0/24", 3))});
  ASSERT_EQ(PathsOf("198.51.101.0/24").size(), 2u);
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.101.0/24"), via2_port1);
  table.LinkState(10, true);
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10))});  // the member is back, the group does not know it
  EXPECT_EQ(PathsOf("198.51.101.0/24"), via2_port1);
  Frame({BuildNexthopMessage(Group(3, {1, 2}))});  // zebra replaces the group
  EXPECT_EQ(PathsOf("198.51.101.0/24"), (std::vector<NextHop>{{A("192.0.2.1"), 0}, {A("192.0.2.2"), 1}}));
}

TEST_F(FpmLinkTest, GroupLosingItsLastMemberGoesAndItsRoutesToo) {
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Group(3, {1})),
         BuildRouteMessage(ByObject("198.51.101.0/24", 3))});
  ASSERT_EQ(PathsOf("198.51.101.0/24"), via1_port0);
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.101.0/24"), gone);
  table.LinkState(10, true);
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Group(3, {1}))});
  EXPECT_EQ(PathsOf("198.51.101.0/24"), gone);  // its route was deleted with it
  Frame({BuildRouteMessage(ByObject("198.51.101.0/24", 3))});
  EXPECT_EQ(PathsOf("198.51.101.0/24"), via1_port0);
}

TEST_F(FpmLinkTest, ObjectsGroupsAndRoutesMadeWithoutCarrierAreRefused) {
  table.LinkState(10, false);
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
         BuildNexthopMessage(Group(3, {1, 2})), BuildRouteMessage(ByObject("198.51.100.0/24", 1)),
         BuildRouteMessage(ByObject("198.51.101.0/24", 3)), BuildRouteMessage(ByObject("198.51.102.0/24", 2))});
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);  // "Carrier for nexthop device is down"
  EXPECT_EQ(PathsOf("198.51.101.0/24"), gone);  // the group names a missing object
  EXPECT_EQ(PathsOf("198.51.102.0/24"), via2_port1);
  table.LinkState(10, true);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);
  EXPECT_EQ(PathsOf("198.51.101.0/24"), gone);
  // zebra's replay (or re-install) after the carrier is back: all there.
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Group(3, {1, 2})),
         BuildRouteMessage(ByObject("198.51.100.0/24", 1)), BuildRouteMessage(ByObject("198.51.101.0/24", 3))});
  EXPECT_EQ(PathsOf("198.51.100.0/24"), via1_port0);
  EXPECT_EQ(PathsOf("198.51.101.0/24").size(), 2u);
}

TEST_F(FpmLinkTest, AdminDownAndDeletionRemoveObjectsLikeCarrierLoss) {
  // The kernel source reports all three as carrier == false; a deleted link
  // never comes back under its index, so nothing more is needed for it.
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
         BuildRouteMessage(ByObject("198.51.100.0/24", 1)), BuildRouteMessage(ByObject("198.51.102.0/24", 2))});
  table.LinkState(10, false);
  table.LinkState(10, false);  // every link message saying so: idempotent
  table.LinkState(11, false);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);
  EXPECT_EQ(PathsOf("198.51.102.0/24"), gone);
}

TEST_F(FpmLinkTest, BlackholeObjectsAndOtherLinksStay) {
  NlNexthop bh;
  bh.id = 5;
  bh.blackhole = true;
  Frame({BuildNexthopMessage(bh), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
         BuildRouteMessage(ByObject("198.51.102.0/24", 2)), BuildRouteMessage(ByObject("198.51.105.0/24", 5))});
  sink.TakeLog();
  table.LinkState(10, false);
  EXPECT_TRUE(sink.TakeLog().empty());
  EXPECT_EQ(PathsOf("198.51.102.0/24"), via2_port1);
  EXPECT_EQ(table.nexthop_groups(), 2u);
}

// zebra installs inline routes with next-hop objects in the kernel as well
// (FIBSYNC_SEED=16447697085535 FRRDIFF_NHG=0: after the carrier was back,
// zebra had 2001:db8:100:21::/64 via k1, the kernel had no such route).
TEST_F(FpmLinkTest, InlineRoutesLosePathsThroughALinkThatLostCarrierUntilZebraSendsThemAgain) {
  Frame({BuildRouteMessage(InlineRoute("198.51.102.0/24", {Via("192.0.2.1", 10)})),
         BuildRouteMessage(InlineRoute("198.51.103.0/24", {Via("192.0.2.1", 10), Via("192.0.2.2", 11)})),
         BuildRouteMessage(InlineRoute("2001:db8:102::/64", {Via("2001:db8::2", 10)}))});
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.102.0/24"), gone);
  EXPECT_EQ(PathsOf("198.51.103.0/24"), via2_port1);
  EXPECT_EQ(PathsOf("2001:db8:102::/64"), gone);
  // A route zebra sends meanwhile (its replay, e.g. to a restarted fibnicd)
  // comes without the link's paths, as the kernel holds it.
  Frame({BuildRouteMessage(InlineRoute("198.51.104.0/24", {Via("192.0.2.1", 10), Via("192.0.2.2", 11)})),
         BuildRouteMessage(InlineRoute("198.51.105.0/24", {Via("192.0.2.1", 10)}))});
  EXPECT_EQ(PathsOf("198.51.104.0/24"), via2_port1);
  EXPECT_EQ(PathsOf("198.51.105.0/24"), gone);
  table.LinkState(10, true);
  EXPECT_EQ(PathsOf("198.51.102.0/24"), gone);
  EXPECT_EQ(PathsOf("198.51.103.0/24"), via2_port1);
  EXPECT_EQ(PathsOf("198.51.104.0/24"), via2_port1);
  EXPECT_EQ(PathsOf("198.51.105.0/24"), gone);
  EXPECT_EQ(PathsOf("2001:db8:102::/64"), gone);
  Frame({BuildRouteMessage(InlineRoute("198.51.102.0/24", {Via("192.0.2.1", 10)})),
         BuildRouteMessage(InlineRoute("198.51.103.0/24", {Via("192.0.2.1", 10), Via("192.0.2.2", 11)})),
         BuildRouteMessage(InlineRoute("2001:db8:102::/64", {Via("2001:db8::2", 10)}))});
  EXPECT_EQ(PathsOf("198.51.102.0/24"), via1_port0);
  EXPECT_EQ(PathsOf("198.51.103.0/24").size(), 2u);
  EXPECT_EQ(PathsOf("2001:db8:102::/64"), (std::vector<NextHop>{{A("2001:db8::2"), 0}}));
}

TEST_F(FpmLinkTest, StaleRoutesOfARemovedObjectStayStaleAndAreSwept) {
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildRouteMessage(ByObject("198.51.100.0/24", 1))});
  table.MarkAllStale();
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), gone);
  EXPECT_EQ(table.stale_count(), 2u);
  EXPECT_EQ(table.SweepStale(), 2u);
  EXPECT_TRUE(sink.routes().empty());
}

// frrdiff FIBSYNC_SEED=192865517202028 FRRDIFF_NHG=1 FRRDIFF_CHUNK=40
// FRRDIFF_CHURN=6: a fibnicd restart with the host unchanged wrote TCAM6
// (2001:db8:200::/48 punted, the old run had followed the default route as
// the kernel did). zebra had a static recursive via k3, without carrier: the
// kernel refused its install ("Route install failed"), and zebra 8.4 sends a
// refused install nowhere — but it sends the route in its replay to a new
// fibnicd. A route the kernel does not hold is left to what covers it, as
// the kernel forwards it, in the run that saw the carrier go and in a new
// one alike (it used to punt: the new run differed from the old).
TEST_F(FpmLinkTest, ARouteTheKernelRefusedIsLeftToTheCoverAlsoWhenZebraReplaysIt) {
  table.LinkState(10, false);  // a restarted fibnicd's kernel dump
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildRouteMessage(ByObject("198.51.100.0/24", 1)),
         BuildRouteMessage(InlineRoute("198.51.101.0/24", {Via("192.0.2.1", 10)}))});
  EXPECT_EQ(table.routes(), 2u);  // zebra holds them: its delete will come
  EXPECT_TRUE(sink.routes().empty()) << "the kernel holds neither: the device follows the cover, as the kernel";
  // The run that saw the carrier go: the same.
  RecordingSink old_sink;
  FpmTable old_run{old_sink, testing::TestPorts(), FpmTableOptions{}};
  auto frame = BuildNexthopMessage(Single(2, "192.0.2.1", 10));
  ASSERT_TRUE(old_run.ApplyFrame(frame.data(), frame.size()).ok());
  frame = BuildRouteMessage(ByObject("198.51.102.0/24", 2));
  ASSERT_TRUE(old_run.ApplyFrame(frame.data(), frame.size()).ok());
  ASSERT_EQ(old_sink.routes().size(), 1u);
  old_run.LinkState(10, false);
  EXPECT_TRUE(old_sink.routes().empty());
  // The kernel announcing the deletion (IPv6, nexthop_compat_mode=1) agrees.
  old_run.KernelRoute(testing::KernelView("198.51.102.0/24", true));
  EXPECT_EQ(old_run.in_flux(), 0u);
  EXPECT_TRUE(old_sink.routes().empty());
}

// After a restart, zebra replays a group it made before its member's link
// lost carrier as it made it. The kernel kept that group without the member
// (and the routes using it): the run that saw the carrier go forwards along
// the rest, and so must a new one — it asks the kernel's objects (the kernel
// source's) whether the group is the kernel's or one it refused.
TEST_F(FpmLinkTest, AGroupTheKernelKeptIsReplayedWithoutItsRemovedMembers) {
  std::set<uint32_t> kernel_objects = {2, 3};
  FpmTableOptions options;
  options.kernel_holds_object = [&](uint32_t id) { return kernel_objects.count(id) != 0; };
  RecordingSink new_sink;
  FpmTable new_run{new_sink, testing::TestPorts(), options};
  auto replay = [&](std::vector<std::vector<uint8_t>> msgs) {
    auto payload = Concat(std::move(msgs));
    ASSERT_TRUE(new_run.ApplyFrame(payload.data(), payload.size()).ok());
  };
  new_run.LinkState(10, false);
  replay({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
          BuildNexthopMessage(Group(3, {1, 2})), BuildRouteMessage(ByObject("198.51.100.0/24", 3))});
  EXPECT_EQ(new_sink.routes().at(P("198.51.100.0/24")).paths, via2_port1);
  // The same in the run that saw it.
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
         BuildNexthopMessage(Group(3, {1, 2})), BuildRouteMessage(ByObject("198.51.100.0/24", 3))});
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), via2_port1);
  // A group the kernel does not hold was refused: its routes are not in the kernel.
  replay({BuildNexthopMessage(Group(4, {1, 2})), BuildRouteMessage(ByObject("198.51.101.0/24", 4))});
  EXPECT_EQ(new_sink.routes().count(P("198.51.101.0/24")), 0u);
}

// frrdiff FIBSYNC_SEED=180586213070414 FRRDIFF_NHG=1 (2026-11-25, with the pcpu
// oracle fix): a link lost its carrier, the kernel took the member through
// it out of a group; with the carrier back zebra made the member again but
// never re-sent the group. A restarted fibnicd read zebra's replay of the
// group with both members while the kernel's has one: half the flows went
// the way the kernel does not. At the replay's end the group keeps the
// members the kernel's has; one whose kernel paths zebra's members do not
// cover punts.
TEST_F(FpmLinkTest, AGroupTheKernelHoldsWithFewerMembersFollowsTheKernelAtTheReplaysEnd) {
  std::map<uint32_t, std::vector<NlPath>> kernel = {
      {1, {NlPath{A("192.0.2.1"), 10}}},
      {2, {NlPath{A("192.0.2.2"), 11}}},
      {3, {NlPath{A("192.0.2.2"), 11}}},                                           // lost 1
      {4, {NlPath{A("192.0.2.2"), 11}, NlPath{A("192.0.2.9"), 11}}}};  // not zebra's
  FpmTableOptions options;
  options.kernel_holds_object = [&](uint32_t id) { return kernel.count(id) != 0; };
  options.kernel_object = [&](uint32_t id) -> std::optional<NexthopObjects::Resolved> {
    if (!kernel.count(id)) return std::nullopt;
    NexthopObjects::Resolved r;
    r.type = RTN_UNICAST;
    r.paths = kernel.at(id);
    return r;
  };
  RecordingSink sink;
  FpmTable run{sink, testing::TestPorts(), options};
  auto payload = Concat({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
                         BuildNexthopMessage(Group(3, {1, 2})), BuildNexthopMessage(Group(4, {1, 2})),
                         BuildRouteMessage(ByObject("198.51.100.0/24", 3)), BuildRouteMessage(ByObject("198.51.101.0/24", 4)),
                         BuildRouteMessage(ByObject("198.51.102.0/24", 1))});
  ASSERT_TRUE(run.ApplyFrame(payload.data(), payload.size()).ok());
  EXPECT_EQ(sink.routes().at(P("198.51.100.0/24")).paths.size(), 2u) << "not decided at arrival";
  EXPECT_EQ(run.CheckKernelObjects(), 2u);  // 3 cut to the kernel's member, 4 punts
  EXPECT_EQ(sink.routes().at(P("198.51.100.0/24")).paths, via2_port1);
  EXPECT_EQ(sink.routes().at(P("198.51.101.0/24")).paths, host) << "the kernel's group has a path zebra's lacks";
  EXPECT_EQ(sink.routes().at(P("198.51.102.0/24")).paths, via1_port0) << "objects that agree are left alone";
  EXPECT_EQ(run.CheckKernelObjects(), 0u);
}

// frrdiff FIBSYNC_SEED=166453082531973 FRRDIFF_NHG=1 FRRDIFF_CHUNK=40
// FRRDIFF_CHURN=6: zebra's object via 10.3.0.2 dev k3 failed to install
// while k3 had no carrier, and zebra never retried ("Valid", not
// "Installed"); the kernel refused the statics naming it and forwarded their
// addresses by the default route. zebra's replay to a restarted fibnicd
// carried object and routes, k3 had carrier again, and fibnicd used them.
// At a replay's end the kernel's objects decide (not at arrival: fibnicd
// may read zebra's frame before the kernel's message).
TEST_F(FpmLinkTest, AnObjectTheKernelDoesNotHoldAtTheReplaysEndLeavesItsRoutesToTheCover) {
  std::set<uint32_t> kernel_objects = {2};
  FpmTableOptions options;
  options.kernel_holds_object = [&](uint32_t id) { return kernel_objects.count(id) != 0; };
  RecordingSink new_sink;
  FpmTable new_run{new_sink, testing::TestPorts(), options};
  auto payload = Concat({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
                         BuildNexthopMessage(Group(3, {1})), BuildRouteMessage(ByObject("198.51.100.0/24", 3)),
                         BuildRouteMessage(ByObject("198.51.101.0/24", 2))});
  ASSERT_TRUE(new_run.ApplyFrame(payload.data(), payload.size()).ok());
  EXPECT_EQ(new_sink.routes().at(P("198.51.100.0/24")).paths, via1_port0) << "not decided at arrival";
  EXPECT_EQ(new_run.CheckKernelObjects(), 2u);  // 1 and 3
  EXPECT_EQ(new_sink.routes().count(P("198.51.100.0/24")), 0u) << "the kernel holds no route: the cover";
  EXPECT_EQ(new_sink.routes().at(P("198.51.101.0/24")).paths, via2_port1);
  EXPECT_EQ(new_run.routes(), 2u);  // held for zebra's word
  // The kernel reports the objects after all (zebra installed them): used
  // again, but the route only once the kernel reports it too — zebra
  // installs the objects first, the routes after, and the kernel held none
  // naming them (FpmFluxRefusedTest.AnObjectTheKernelMakesAfterTheReplaysEnd...).
  new_run.KernelObjectAdded(1);
  EXPECT_EQ(new_sink.routes().count(P("198.51.100.0/24")), 0u) << "its group is not in the kernel yet";
  new_run.KernelObjectAdded(3);
  EXPECT_EQ(new_sink.routes().count(P("198.51.100.0/24")), 0u) << "the route is not in the kernel yet";
  new_run.KernelRoute(testing::KernelView("198.51.100.0/24", false, {testing::Via("192.0.2.1", 10)}, 3));
  EXPECT_EQ(new_sink.routes().at(P("198.51.100.0/24")).paths, via1_port0);
}

// The kernel's word on a route (flux, fpm_flux.h) is compared with FPM's
// set as PathsOf reads it: a group the kernel refused (it names an object the
// kernel removed) is no route there, so it never agrees with a route the
// kernel reports by those paths — however its members read.
TEST_F(FpmLinkTest, AGroupTheKernelRefusedNeverAgreesWithTheKernelsRoute) {
  Frame({BuildNexthopMessage(Single(1, "192.0.2.1", 10)), BuildNexthopMessage(Single(2, "192.0.2.2", 11)),
         BuildNexthopMessage(Group(3, {1, 2})), BuildRouteMessage(ByObject("198.51.100.0/24", 3))});
  table.LinkState(10, false);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), via2_port1);
  Frame({BuildNexthopMessage(Group(3, {1, 2}))});  // zebra sends it again: refused, member 1 is gone
  EXPECT_EQ(PathsOf("198.51.100.0/24"), host);
  table.KernelRoute(testing::KernelView("198.51.100.0/24", false, {Via("192.0.2.1", 10), Via("192.0.2.2", 11)}));
  EXPECT_EQ(table.in_flux(), 1u) << "FPM's set is not in the kernel: it cannot agree with a kernel route";
  EXPECT_EQ(PathsOf("198.51.100.0/24"), host);
}

}  // namespace
}  // namespace fibnic
