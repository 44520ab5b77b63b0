#include "sources/fpm/fpm_table.h"

#include <gtest/gtest.h>

#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using testing::A;
using testing::Concat;
using testing::InlineRoute;
using testing::KernelView;
using testing::P;
using testing::RecordingSink;
using testing::Via;

class FpmTableTest : public ::testing::Test {
 protected:
  Status Frame(std::vector<std::vector<uint8_t>> msgs) {
    auto payload = Concat(std::move(msgs));
    return table.ApplyFrame(payload.data(), payload.size());
  }
  std::vector<NextHop> PathsOf(const std::string& p) {
    auto r = sink.routes();
    auto it = r.find(P(p));
    return it == r.end() ? std::vector<NextHop>{} : it->second.paths;
  }
  RecordingSink sink;
  FpmTable table{sink, testing::TestPorts(), FpmTableOptions{}};
  const std::vector<NextHop> host{NextHop::ToHost()};
};

TEST_F(FpmTableTest, InlineRoutesAndSafetyPunts) {
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)})),
                     BuildRouteMessage(InlineRoute("10.2.0.0/16", {Via("192.0.2.1", 3)})),
                     BuildRouteMessage(InlineRoute("10.3.0.0/16", {Via("192.0.2.1", 10), Via("192.0.2.5", 4)}))})
                  .ok());
  auto bh = InlineRoute("10.4.0.0/16", {});
  bh.type = RTN_BLACKHOLE;
  ASSERT_TRUE(Frame({BuildRouteMessage(bh)}).ok());
  EXPECT_EQ(PathsOf("10.1.0.0/16"), (std::vector<NextHop>{{A("192.0.2.1"), 0}}));
  EXPECT_EQ(PathsOf("10.2.0.0/16"), host);
  EXPECT_EQ(PathsOf("10.3.0.0/16"), host);
  EXPECT_EQ(PathsOf("10.4.0.0/16"), host);
  auto r = sink.routes().at(P("10.1.0.0/16"));
  EXPECT_EQ(r.source, RouteSource::kFpm);
  EXPECT_EQ(r.distance, 20);
}

TEST_F(FpmTableTest, DelNewPairInOneFrameIsOneUpsert) {
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}))}).ok());
  sink.TakeLog();
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {}, /*del=*/true)),
                     BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.2", 11)}))})
                  .ok());
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"upsert 10.1.0.0/16"}));
  EXPECT_EQ(PathsOf("10.1.0.0/16"), (std::vector<NextHop>{{A("192.0.2.2"), 1}}));
  // A lone DEL deletes.
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {}, true))}).ok());
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"delete 10.1.0.0/16"}));
  EXPECT_TRUE(sink.routes().empty());
}

TEST_F(FpmTableTest, NextHopGroups) {
  auto route = InlineRoute("10.5.0.0/16", {});
  route.nh_id = 3;
  // Route before its group: punted, then fixed when the group arrives.
  ASSERT_TRUE(Frame({BuildRouteMessage(route)}).ok());
  EXPECT_EQ(PathsOf("10.5.0.0/16"), host);
  NlNexthop n1, n2, g;
  n1.id = 1;
  n1.path = Via("192.0.2.1", 10);
  n2.id = 2;
  n2.path = Via("192.0.2.2", 11);
  g.id = 3;
  g.group = {{1, 1}, {2, 1}};
  ASSERT_TRUE(Frame({BuildNexthopMessage(n1)}).ok());
  ASSERT_TRUE(Frame({BuildNexthopMessage(n2)}).ok());
  ASSERT_TRUE(Frame({BuildNexthopMessage(g)}).ok());
  EXPECT_EQ(PathsOf("10.5.0.0/16"), (std::vector<NextHop>{{A("192.0.2.1"), 0}, {A("192.0.2.2"), 1}}));
  // A member changes: the route follows.
  n1.path = Via("192.0.2.9", 12);
  ASSERT_TRUE(Frame({BuildNexthopMessage(n1)}).ok());
  EXPECT_EQ(PathsOf("10.5.0.0/16"), (std::vector<NextHop>{{A("192.0.2.2"), 1}, {A("192.0.2.9"), 2}}));
  // A member via a non-FIBNIC interface punts the whole route.
  n2.path = Via("192.0.2.2", 5);
  ASSERT_TRUE(Frame({BuildNexthopMessage(n2)}).ok());
  EXPECT_EQ(PathsOf("10.5.0.0/16"), host);
  // Blackhole next-hop.
  NlNexthop bh;
  bh.id = 4;
  bh.blackhole = true;
  auto r2 = InlineRoute("10.6.0.0/16", {});
  r2.nh_id = 4;
  ASSERT_TRUE(Frame({BuildNexthopMessage(bh), BuildRouteMessage(r2)}).ok());
  EXPECT_EQ(PathsOf("10.6.0.0/16"), host);
  EXPECT_EQ(table.nexthop_groups(), 4u);
}

TEST_F(FpmTableTest, MalformedFrameChangesNothing) {
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}))}).ok());
  sink.TakeLog();
  auto good = BuildRouteMessage(InlineRoute("10.1.0.0/16", {}, true));
  auto bad = BuildRouteMessage(InlineRoute("10.7.0.0/16", {Via("192.0.2.1", 10)}));
  bad[16 + 1] = 40;  // /40 for IPv4
  Status st = Frame({good, bad});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("payload byte " + std::to_string(good.size())), std::string::npos) << st.message();
  EXPECT_TRUE(sink.TakeLog().empty());
  EXPECT_EQ(table.routes(), 1u);
}

TEST_F(FpmTableTest, ReplaySweepsOnlyWhatWasNotReplayed) {
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)})),
                     BuildRouteMessage(InlineRoute("10.2.0.0/16", {Via("192.0.2.1", 10)}))})
                  .ok());
  sink.TakeLog();
  table.MarkAllStale();
  EXPECT_EQ(table.stale_count(), 2u);
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}))}).ok());
  EXPECT_TRUE(sink.TakeLog().empty());  // unchanged replay: the RIB hears nothing
  EXPECT_EQ(table.SweepStale(), 1u);
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"delete 10.2.0.0/16"}));
  EXPECT_EQ(table.stale_count(), 0u);
}

// Issue #16: what counts as a replay's progress (FpmReplayWatch): routes
// and groups the table did not hold, or held stale — not updates of routes
// already replayed (BGP churn after the replay must not hold it open).
TEST_F(FpmTableTest, ReplayProgressIsNewOrStaleNotChurn) {
  auto route = [](const char* p, const char* gw) { return BuildRouteMessage(InlineRoute(p, {Via(gw, 10)})); };
  ASSERT_TRUE(Frame({route("10.1.0.0/16", "192.0.2.1"), route("10.2.0.0/16", "192.0.2.1")}).ok());
  EXPECT_EQ(table.counts().replayed, 2u);
  ASSERT_TRUE(Frame({route("10.1.0.0/16", "192.0.2.2")}).ok());  // churn on a held route
  EXPECT_EQ(table.counts().replayed, 2u);
  table.MarkAllStale();
  ASSERT_TRUE(Frame({route("10.1.0.0/16", "192.0.2.2")}).ok());  // replayed
  EXPECT_EQ(table.counts().replayed, 3u);
  ASSERT_TRUE(Frame({route("10.1.0.0/16", "192.0.2.1")}).ok());  // churn again
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.2.0.0/16", {}, true))}).ok());  // a delete
  EXPECT_EQ(table.counts().replayed, 3u);
  NlNexthop g;
  g.id = 7;
  g.path = Via("192.0.2.1", 10);
  ASSERT_TRUE(Frame({BuildNexthopMessage(g)}).ok());
  EXPECT_EQ(table.counts().replayed, 4u);
  ASSERT_TRUE(Frame({BuildNexthopMessage(g)}).ok());
  EXPECT_EQ(table.counts().replayed, 4u);
}

// Issue #16: the kernel deleted zebra's route (FpmTable::KernelRoute, as the
// kernel source tells it). A stale copy (zebra away or not replayed yet)
// goes at once; one zebra has sent since it came back stays — zebra's own
// word on it comes over FPM (meanwhile it punts: the kernel and FPM disagree).
TEST_F(FpmTableTest, KernelDeletionDropsOnlyStaleCopies) {
  auto route = [](const char* p) { return BuildRouteMessage(InlineRoute(p, {Via("192.0.2.1", 10)})); };
  ASSERT_TRUE(Frame({route("10.1.0.0/16"), route("10.2.0.0/16")}).ok());
  sink.TakeLog();
  table.KernelRoute(KernelView("10.9.0.0/16", true));  // not held
  EXPECT_TRUE(sink.TakeLog().empty());
  table.MarkAllStale();
  ASSERT_TRUE(Frame({route("10.2.0.0/16")}).ok());  // replayed
  table.KernelRoute(KernelView("10.1.0.0/16", true));
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"delete 10.1.0.0/16"}));
  EXPECT_EQ(table.routes(), 1u);
  EXPECT_EQ(table.counts().kernel_dropped, 1u);
  // Not stale: zebra is there and sent it. Kept; zebra's delete follows.
  // Meanwhile the device does what the kernel does: no route (fpm_flux.h).
  table.KernelRoute(KernelView("10.2.0.0/16", true));
  EXPECT_EQ(table.routes(), 1u);
  EXPECT_EQ(table.counts().kernel_dropped, 1u);
  EXPECT_EQ(PathsOf("10.2.0.0/16"), std::vector<NextHop>{});
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.2.0.0/16", {}, true))}).ok());
  EXPECT_EQ(table.routes(), 0u);
  EXPECT_EQ(table.SweepStale(), 0u);
  // zebra sends 10.1.0.0/16 again later: it is back.
  ASSERT_TRUE(Frame({route("10.1.0.0/16")}).ok());
  EXPECT_EQ(PathsOf("10.1.0.0/16"), (std::vector<NextHop>{{A("192.0.2.1"), 0}}));
}

// frrdiff_inline, seed 127: zebra 8.4, restarted after a SIGKILL, could not
// adopt its predecessor's 198.18.0.128/25 (a next-hop group naming a member
// it never learnt), so it neither replayed nor deleted it; it deleted that
// member, and the kernel kept forwarding along the shrunken group. The sweep
// took the route off the device, which then sent its traffic along a
// covering route the kernel does not use. A stale route the kernel still
// holds is punted instead, stays stale, and goes when the kernel deletes it
// or comes back when zebra sends it.
TEST_F(FpmTableTest, ZebraLeftoverTheKernelStillHoldsIsPuntedNotSwept) {
  auto route = [](const char* p, const char* gw) {
    NlRoute r = InlineRoute(p, {Via(gw, 10)});
    r.protocol = 186;  // bgp
    return BuildRouteMessage(r);
  };
  ASSERT_TRUE(Frame({route("198.18.0.128/25", "192.0.2.1"), route("10.2.0.0/16", "192.0.2.1"),
                     route("10.3.0.0/16", "192.0.2.1")})
                  .ok());
  table.MarkAllStale();
  ASSERT_TRUE(Frame({route("10.3.0.0/16", "192.0.2.1")}).ok());  // replayed
  sink.TakeLog();
  std::vector<std::pair<std::string, int>> asked;
  auto kernel_holds = [&](const Prefix& p, uint8_t protocol) {
    asked.emplace_back(p.ToString(), protocol);
    return p == P("198.18.0.128/25");
  };
  EXPECT_EQ(table.SweepStale(kernel_holds), 1u);
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"upsert 198.18.0.128/25", "delete 10.2.0.0/16"}));
  EXPECT_EQ(PathsOf("198.18.0.128/25"), host) << "zebra's old paths may no longer be the kernel's: punt";
  EXPECT_EQ(table.counts().kernel_kept, 1u);
  EXPECT_EQ(asked.size(), 2u) << "only stale routes are asked about";
  EXPECT_EQ(asked[0].second, 186) << "with the protocol zebra sent";
  EXPECT_EQ(table.stale_count(), 1u);
  // The next sweep asks again; still held, nothing changes.
  EXPECT_EQ(table.SweepStale(kernel_holds), 0u);
  EXPECT_TRUE(sink.TakeLog().empty());
  // The kernel deletes it: it goes.
  table.KernelRoute(KernelView("198.18.0.128/25", true));
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"delete 198.18.0.128/25"}));
  EXPECT_EQ(table.counts().kernel_dropped, 1u);
  // Kept again, then zebra sends it: zebra's paths, no longer stale.
  ASSERT_TRUE(Frame({route("198.18.0.128/25", "192.0.2.1")}).ok());
  table.MarkAllStale();
  EXPECT_EQ(table.SweepStale(kernel_holds), 1u);  // 10.3.0.0/16
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("198.18.0.128/25", {Via("192.0.2.1", 10)}))}).ok());
  EXPECT_EQ(PathsOf("198.18.0.128/25"), (std::vector<NextHop>{{A("192.0.2.1"), 0}}));
  EXPECT_EQ(table.stale_count(), 0u);
  // Without a kernel to ask (zebra elsewhere), the sweep removes it as before.
  table.MarkAllStale();
  EXPECT_EQ(table.SweepStale(), 1u);
  EXPECT_EQ(table.routes(), 0u);
}

// The kernel deleting zebra's next-hop object takes the routes using it
// away without a route message: their stale copies go with it.
// zebra 8.4 sends a next-hop object with a gateway and no address family
// (one it failed to install: "without an interface"); it replays it on every
// reconnect. Rejecting the frame dropped the connection, forever (frrdiff
// FIBSYNC_SEED=97357586698235: fibnicd never got ready after a restart). The
// object is unusable: its routes punt, the rest of the frame applies.
TEST_F(FpmTableTest, GatewayWithoutAFamilyPuntsItsRoutesAndKeepsTheConnection) {
  NlNexthop bad, good;
  bad.id = 7;
  bad.path = Via("192.0.2.1", 10);
  good.id = 8;
  good.path = Via("192.0.2.2", 10);
  std::vector<uint8_t> msg = BuildNexthopMessage(bad);
  msg[NLMSG_HDRLEN] = 0;  // nhmsg.nh_family: AF_UNSPEC
  auto r7 = InlineRoute("10.7.0.0/16", {});
  r7.nh_id = 7;
  auto r8 = InlineRoute("10.8.0.0/16", {});
  r8.nh_id = 8;
  ASSERT_TRUE(Frame({msg, BuildNexthopMessage(good), BuildRouteMessage(r7), BuildRouteMessage(r8)}).ok());
  EXPECT_EQ(PathsOf("10.7.0.0/16"), host);
  EXPECT_EQ(PathsOf("10.8.0.0/16"), (std::vector<NextHop>{{A("192.0.2.2"), 0}}));
  // zebra installs it properly later: the route follows.
  ASSERT_TRUE(Frame({BuildNexthopMessage(bad)}).ok());
  EXPECT_EQ(PathsOf("10.7.0.0/16"), (std::vector<NextHop>{{A("192.0.2.1"), 0}}));
}

TEST_F(FpmTableTest, KernelNexthopDeletionDropsStaleRoutesUsingIt) {
  NlNexthop g;
  g.id = 7;
  g.path = Via("192.0.2.1", 10);
  auto by_object = [](const char* p, uint32_t id) {
    NlRoute r = InlineRoute(p, {});
    r.nh_id = id;
    return BuildRouteMessage(r);
  };
  NlNexthop h = g;
  h.id = 8;
  ASSERT_TRUE(Frame({BuildNexthopMessage(g), BuildNexthopMessage(h), by_object("10.1.0.0/16", 7),
                     by_object("10.2.0.0/16", 7), by_object("10.3.0.0/16", 8)})
                  .ok());
  sink.TakeLog();
  EXPECT_EQ(table.DropStaleUsing({7}), 0u);  // not stale
  table.MarkAllStale();
  ASSERT_TRUE(Frame({by_object("10.2.0.0/16", 7)}).ok());  // replayed
  EXPECT_EQ(table.DropStaleUsing({7, 99}), 1u);
  EXPECT_EQ(sink.TakeLog(), (std::vector<std::string>{"delete 10.1.0.0/16"}));
  EXPECT_EQ(table.routes(), 2u);
}

TEST_F(FpmTableTest, ZebraSystemRoutesAreLeftToTheKernelSource) {
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.9.0.0/16", {Via("192.0.2.1", 10)}))}).ok());
  // zebra now prefers a connected/kernel route (RTPROT_KERNEL) for the
  // prefix: we no longer hold one, and a later delete of it never comes.
  auto sys = InlineRoute("10.9.0.0/16", {Via("192.0.2.7", 11)});
  sys.protocol = RTPROT_KERNEL;
  ASSERT_TRUE(Frame({BuildRouteMessage(sys)}).ok());
  EXPECT_TRUE(sink.routes().empty());
  EXPECT_EQ(table.routes(), 0u);
}

TEST_F(FpmTableTest, OtherTablesAreIgnored) {
  auto r = InlineRoute("10.8.0.0/16", {Via("192.0.2.1", 10)});
  r.table = 100;
  ASSERT_TRUE(Frame({BuildRouteMessage(r)}).ok());
  EXPECT_TRUE(sink.routes().empty());
  EXPECT_EQ(table.counts().ignored, 1u);
}

// Issue #14, 6(d): the port map changes (an interface renamed) before
// ReevaluateAll runs, and a frame touches one route of a next-hop set in
// between. Every route of that set must follow, not only the one named.
TEST(FpmTablePortMap, ARouteTouchedAfterAPortChangeTakesItsWholeSetAlong) {
  RecordingSink sink;
  std::optional<PortId> port_of_10 = 0;  // what the port map says of interface 10 now
  FpmTable table(sink, [&](uint32_t ifindex) { return ifindex == 10 ? port_of_10 : std::nullopt; }, FpmTableOptions{});
  auto frame = [&](std::vector<std::vector<uint8_t>> msgs) {
    auto payload = Concat(std::move(msgs));
    return table.ApplyFrame(payload.data(), payload.size());
  };
  ASSERT_TRUE(frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)})),
                     BuildRouteMessage(InlineRoute("10.2.0.0/16", {Via("192.0.2.1", 10)}))})
                  .ok());
  const std::vector<NextHop> port0{{A("192.0.2.1"), 0}}, host{NextHop::ToHost()};
  ASSERT_EQ(sink.routes().at(P("10.2.0.0/16")).paths, port0);
  port_of_10.reset();  // interface 10 renamed: no longer a FIBNIC port
  ASSERT_TRUE(frame({BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}))}).ok());
  EXPECT_EQ(sink.routes().at(P("10.1.0.0/16")).paths, host);
  EXPECT_EQ(sink.routes().at(P("10.2.0.0/16")).paths, host) << "a route of the same set kept the old port";
  // And the re-evaluation after the change still finds everything current.
  table.ReevaluateAll();
  EXPECT_EQ(sink.routes().at(P("10.2.0.0/16")).paths, host);
}

// BGP unnumbered (RFC 5549), next-hop-group mode: zebra's IPv4 routes name
// next-hop objects of family AF_INET6 (the peer's fe80:: address on its
// interface). Before issue #15 these punted as "gateway of another family".
TEST_F(FpmTableTest, Ipv4RoutesViaIpv6NextHopObjects) {
  NlNexthop peer0, peer1, both;
  peer0.id = 21;
  peer0.path = Via("fe80::1", 10);  // the same link-local address on two ports
  peer1.id = 22;
  peer1.path = Via("fe80::1", 11);
  both.id = 23;
  both.group = {{21, 1}, {22, 1}};
  auto one = InlineRoute("10.20.0.0/16", {});
  one.nh_id = 21;
  auto ecmp = InlineRoute("10.21.0.0/16", {});
  ecmp.nh_id = 23;
  auto v6 = InlineRoute("2001:db8:20::/48", {});
  v6.nh_id = 22;
  ASSERT_TRUE(Frame({BuildNexthopMessage(peer0), BuildNexthopMessage(peer1), BuildNexthopMessage(both),
                     BuildRouteMessage(one), BuildRouteMessage(ecmp), BuildRouteMessage(v6)})
                  .ok());
  EXPECT_EQ(PathsOf("10.20.0.0/16"), (std::vector<NextHop>{{A("fe80::1"), 0}}));
  EXPECT_EQ(PathsOf("10.21.0.0/16"), (std::vector<NextHop>{{A("fe80::1"), 0}, {A("fe80::1"), 1}}));
  // The IPv6 route through the same object is the same next-hop: one adjacency.
  EXPECT_EQ(PathsOf("2001:db8:20::/48"), (std::vector<NextHop>{{A("fe80::1"), 1}}));
  EXPECT_EQ(table.counts().punted_updates, 0u);
}

// Inline mode: RTA_VIA (an IPv6 next-hop in an IPv4 route), alone and in
// RTA_MULTIPATH; an IPv6 route via an IPv4 gateway the kernel cannot do: punted.
TEST_F(FpmTableTest, InlineRtaViaIsAnIpv6NextHop) {
  ASSERT_TRUE(Frame({BuildRouteMessage(InlineRoute("10.30.0.0/16", {Via("fe80::2", 12)})),
                     BuildRouteMessage(InlineRoute("10.31.0.0/16", {Via("fe80::1", 10), Via("fe80::1", 11)})),
                     BuildRouteMessage(InlineRoute("10.32.0.0/16", {Via("169.254.0.1", 11)}))})
                  .ok());
  EXPECT_EQ(PathsOf("10.30.0.0/16"), (std::vector<NextHop>{{A("fe80::2"), 2}}));
  EXPECT_EQ(PathsOf("10.31.0.0/16"), (std::vector<NextHop>{{A("fe80::1"), 0}, {A("fe80::1"), 1}}));
  EXPECT_EQ(PathsOf("10.32.0.0/16"), (std::vector<NextHop>{{A("169.254.0.1"), 1}}));
  NlNexthop v4gw;
  v4gw.id = 31;
  v4gw.path = Via("192.0.2.1", 10);
  auto v6 = InlineRoute("2001:db8:31::/48", {});
  v6.nh_id = 31;
  ASSERT_TRUE(Frame({BuildNexthopMessage(v4gw), BuildRouteMessage(v6)}).ok());
  EXPECT_EQ(PathsOf("2001:db8:31::/48"), host);
}

}  // namespace
}  // namespace fibnic
