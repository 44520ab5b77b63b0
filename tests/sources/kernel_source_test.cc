// The kernel source in a private network namespace: routes and neighbours
// added, changed and deleted with `ip` reach the RIB; gateways get resolved
// through the kernel. Under load: kernel_load_test.cc.
#include "sources/kernel/kernel_source.h"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <functional>
#include <future>
#include <iostream>
#include <thread>

#include "tests/sources/kernel_source_fixture.h"

// In the fixture's namespace: its helpers (Sh, MustSh, WaitFor, P, A) need no using lines.
namespace fibnic::testing {
namespace {

TEST_F(KernelSourceTest, RoutesAddChangeDeleteAndSafetyPunts) {
  MustSh("ip route add 10.50.0.0/16 via 10.0.0.2");  // before start: comes with the dump
  StartSource({});
  ASSERT_TRUE(RouteIs("10.50.0.0/16", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  EXPECT_TRUE(RouteIs("10.0.0.0/24", std::vector<NextHop>{{std::nullopt, 0}}));  // connected
  EXPECT_TRUE(RouteIs("10.0.0.1/32", host));   // local table: the host's own address
  EXPECT_TRUE(RouteIs("10.1.0.0/24", host));   // connected, but not a FIBNIC port
  MustSh("ip route replace 10.50.0.0/16 via 10.0.0.3");
  EXPECT_TRUE(RouteIs("10.50.0.0/16", std::vector<NextHop>{{A("10.0.0.3"), 0}}));
  MustSh("ip route add 10.51.0.0/16 nexthop via 10.0.0.2 nexthop via 10.0.0.3");
  EXPECT_TRUE(RouteIs("10.51.0.0/16", std::vector<NextHop>{{A("10.0.0.2"), 0}, {A("10.0.0.3"), 0}}));
  MustSh("ip route add 10.52.0.0/16 nexthop via 10.0.0.2 nexthop via 10.1.0.2");
  EXPECT_TRUE(RouteIs("10.52.0.0/16", host));  // one path leaves through a non-FIBNIC port
  MustSh("ip route add blackhole 10.53.0.0/16 && ip route add unreachable 10.54.0.0/16 && ip route add prohibit 10.55.0.0/16");
  EXPECT_TRUE(RouteIs("10.53.0.0/16", std::vector<NextHop>{NextHop::Drop()}));
  EXPECT_TRUE(RouteIs("10.54.0.0/16", host));
  EXPECT_TRUE(RouteIs("10.55.0.0/16", host));
  MustSh("ip route add 10.56.0.0/16 table 100 via 10.0.0.2");  // not a configured table
  MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad && ip -6 route add 2001:db8:99::/48 via 2001:db8:1::2");
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::vector<NextHop>{{A("2001:db8:1::2"), 0}}));
  EXPECT_TRUE(RouteIs("2001:db8:1::1/128", host));
  EXPECT_FALSE(PathsOf("10.56.0.0/16").has_value());
  MustSh("ip route del 10.50.0.0/16 && ip -6 route del 2001:db8:99::/48");
  EXPECT_TRUE(RouteIs("10.50.0.0/16", std::nullopt));
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::nullopt));
  // zebra's routes (proto bgp) are taken like any other: the kernel forwards by them.
  MustSh("ip route add 10.57.0.0/16 via 10.0.0.2 proto bgp");
  EXPECT_TRUE(RouteIs("10.57.0.0/16", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

TEST_F(KernelSourceTest, IgnoredProtocolsAreNotTakenButStillReplaceAndResolve) {
  KernelSourceConfig cfg;
  cfg.ignore_protocols = {RTPROT_BGP};
  StartSource(cfg);
  MustSh("ip route add 10.57.0.0/16 via 10.0.0.2 proto bgp && ip route add 10.58.0.0/16 via 10.0.0.2 proto static");
  EXPECT_TRUE(RouteIs("10.58.0.0/16", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  EXPECT_FALSE(PathsOf("10.57.0.0/16").has_value());
  // zebra replacing a route of the same metric: the kernel no longer has the
  // static one, so neither may the source (it keeps nothing of zebra's own).
  MustSh("ip route add 10.59.0.0/16 via 10.0.0.2 metric 20 proto static");
  EXPECT_TRUE(RouteIs("10.59.0.0/16", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  MustSh("ip route replace 10.59.0.0/16 via 10.0.0.3 metric 20 proto bgp");
  EXPECT_TRUE(RouteIs("10.59.0.0/16", std::nullopt));
  // The gateways of ignored routes are still resolved (the peer namespace
  // answers ARP).
  MustSh("ip route add 10.61.0.0/16 via 10.0.0.9 proto bgp");
  ASSERT_TRUE(WaitFor([&] { auto n = NeighOf("10.0.0.9"); return n && NeighUsable(n->state); }, 15s))
      << Sh("ip neigh show");
}

// A neighbour is an address on an interface. BGP unnumbered puts
// 169.254.0.1 (inline mode, permanent, one per interface) and the peers'
// fe80:: addresses on every fabric port; IPv4 routes go via them onlink or
// via inet6 (RTA_VIA). Deleting the one on k1 must leave k0's, which must
// keep updating.
TEST_F(KernelSourceTest, LinkLocalNeighboursPerPortAndRoutesViaInet6) {
  StartSource({}, {{"k0", 0}, {"k1", 1}});
  const std::string mac0 = "02:00:00:00:00:0a", mac1 = "02:00:00:00:00:0b";
  MustSh("ip neigh add 169.254.0.1 lladdr " + mac0 + " dev k0 nud permanent");
  MustSh("ip neigh add 169.254.0.1 lladdr " + mac1 + " dev k1 nud permanent");
  MustSh("ip neigh add fe80::1 lladdr " + mac0 + " dev k0 nud permanent");
  MustSh("ip neigh add fe80::1 lladdr " + mac1 + " dev k1 nud permanent");
  MustSh("ip route add 10.70.0.0/16 via 169.254.0.1 dev k0 onlink");
  MustSh("ip route add 10.71.0.0/16 via 169.254.0.1 dev k1 onlink");
  MustSh("ip route add 10.72.0.0/16 via inet6 fe80::1 dev k0");
  MustSh("ip route add 10.73.0.0/16 nexthop via inet6 fe80::1 dev k0 nexthop via inet6 fe80::1 dev k1");
  EXPECT_TRUE(RouteIs("10.70.0.0/16", std::vector<NextHop>{{A("169.254.0.1"), 0}}));
  EXPECT_TRUE(RouteIs("10.71.0.0/16", std::vector<NextHop>{{A("169.254.0.1"), 1}}));
  EXPECT_TRUE(RouteIs("10.72.0.0/16", std::vector<NextHop>{{A("fe80::1"), 0}}));
  EXPECT_TRUE(RouteIs("10.73.0.0/16", std::vector<NextHop>{{A("fe80::1"), 0}, {A("fe80::1"), 1}}));
  auto mac_on = [&](const std::string& addr, PortId port) -> std::optional<std::string> {
    auto n = sink.neighbors_on_ports();
    auto it = n.find({A(addr), port});
    if (it == n.end()) return std::nullopt;
    return it->second.mac.ToString();
  };
  auto until = [&](const std::string& addr, PortId port, std::optional<std::string> want) {
    return WaitFor([&] { return mac_on(addr, port) == want; }, 10s);
  };
  EXPECT_TRUE(until("169.254.0.1", 0, mac0));
  EXPECT_TRUE(until("169.254.0.1", 1, mac1));
  EXPECT_TRUE(until("fe80::1", 0, mac0));
  EXPECT_TRUE(until("fe80::1", 1, mac1));
  MustSh("ip neigh del 169.254.0.1 dev k1");
  EXPECT_TRUE(until("169.254.0.1", 1, std::nullopt));
  EXPECT_EQ(mac_on("169.254.0.1", 0), mac0);  // k0's stays ...
  MustSh("ip neigh replace 169.254.0.1 lladdr 02:00:00:00:00:0c dev k0 nud permanent");
  EXPECT_TRUE(until("169.254.0.1", 0, std::string("02:00:00:00:00:0c")));  // ... and still updates
  EXPECT_EQ(mac_on("fe80::1", 1), mac1);
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// An IPv6 multipath route deleted one next-hop at a time
// (and built with add + append) stayed in the RIB after the kernel dropped it.
TEST_F(KernelSourceTest, Ipv6MultipathDeletedOneNextHopAtATime) {
  StartSource({});
  MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad && ip -6 addr add 2001:db8:2::1/64 dev k1 nodad");
  MustSh("ip -6 route add 2001:db8:99::/48 nexthop via 2001:db8:1::2 dev k0 nexthop via 2001:db8:2::2 dev k1");
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::vector<NextHop>{NextHop::ToHost()}));  // k1 is no FIBNIC port
  MustSh("ip -6 route del 2001:db8:99::/48 via 2001:db8:2::2 dev k1");
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::vector<NextHop>{{A("2001:db8:1::2"), 0}}));
  MustSh("ip -6 route del 2001:db8:99::/48");
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::nullopt));
  MustSh("ip -6 route add 2001:db8:98::/48 via 2001:db8:1::2 dev k0");
  MustSh("ip -6 route append 2001:db8:98::/48 via 2001:db8:2::2 dev k1");
  EXPECT_TRUE(RouteIs("2001:db8:98::/48", std::vector<NextHop>{NextHop::ToHost()}));
  MustSh("ip -6 route del 2001:db8:98::/48 via 2001:db8:2::2 dev k1");
  EXPECT_TRUE(RouteIs("2001:db8:98::/48", std::vector<NextHop>{{A("2001:db8:1::2"), 0}}));
  MustSh("ip -6 route del 2001:db8:98::/48");
  EXPECT_TRUE(RouteIs("2001:db8:98::/48", std::nullopt));
  // Two routes of one prefix and metric that are not one multipath route
  // (no gateway: the kernel keeps them apart and uses one): punt while both are there.
  MustSh("ip -6 route add 2001:db8:97::/64 dev k0 metric 7");
  EXPECT_TRUE(RouteIs("2001:db8:97::/64", std::vector<NextHop>{{std::nullopt, 0}}));
  MustSh("ip -6 route append 2001:db8:97::/64 dev k1 metric 7");
  EXPECT_TRUE(RouteIs("2001:db8:97::/64", std::vector<NextHop>{NextHop::ToHost()})) << Sh("ip -6 route show 2001:db8:97::/64");
  MustSh("ip -6 route del 2001:db8:97::/64 dev k1 metric 7");
  EXPECT_TRUE(RouteIs("2001:db8:97::/64", std::vector<NextHop>{{std::nullopt, 0}})) << Sh("ip -6 route show 2001:db8:97::/64");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// With a TOS-specific route beside a plain one for the same
// prefix, the device sent all of it to the plain route's gateway while the
// kernel sends that TOS elsewhere. The device has no TOS: the prefix punts.
// Found by the kernel differential harness's soak: IPv6 keeps a blackhole route and a route
// via a gateway of one prefix and metric side by side (they never form a
// multipath route) and uses the first. The source kept one route per metric:
// a replace of the gateway route erased the blackhole too (the kernel
// replaces only a route that, like the new one, is a multipath candidate),
// and the device forwarded 2001:db8:200::/48 while the kernel dropped it.
TEST_F(KernelSourceTest, Ipv6BlackholeBesideAGatewayRouteOfItsMetricPunts) {
  MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad");
  StartSource({});
  MustSh("ip -6 route add blackhole 2001:db8:99::/48");
  MustSh("ip -6 route append 2001:db8:99::/48 via 2001:db8:1::2 dev k0");
  MustSh("ip -6 route replace 2001:db8:99::/48 via 2001:db8:1::3 dev k0");
  const std::string kernel = Sh("ip -6 route show 2001:db8:99::/48");
  ASSERT_NE(kernel.find("blackhole"), std::string::npos) << kernel;
  ASSERT_NE(kernel.find("via 2001:db8:1::3"), std::string::npos) << kernel;
  // The kernel uses one of the two; the device must not forward.
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", host)) << kernel;
  EXPECT_FALSE(WaitFor([&] { return PathsOf("2001:db8:99::/48") != host; }, 2s)) << kernel;
  MustSh("ip -6 route del blackhole 2001:db8:99::/48");
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::vector<NextHop>{{A("2001:db8:1::3"), 0}}))
      << Sh("ip -6 route show 2001:db8:99::/48");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// IPv4 `ip route replace` replaces the first route of its prefix,
// table, TOS and metric and leaves the others (they come from `append` and
// `prepend`); a plain `ip route del` takes the first. The source erased every
// route of the rank on a replace, so after the delete it had none while the
// kernel forwarded by the route appended first.
TEST_F(KernelSourceTest, Ipv4ReplaceReplacesOnlyTheFirstRouteOfItsRank) {
  StartSource({});
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.2");
  MustSh("ip route append 198.51.100.0/24 via 10.0.0.3");
  MustSh("ip route prepend unreachable 198.51.100.0/24");
  MustSh("ip route replace 198.51.100.0/24 via 10.0.0.4");  // replaces the unreachable
  MustSh("ip route del 198.51.100.0/24");                   // the first: via 10.0.0.4
  EXPECT_TRUE(RouteIs("198.51.100.0/24", host)) << Sh("ip route show 198.51.100.0/24");
  MustSh("ip route del 198.51.100.0/24 via 10.0.0.3");
  const std::string kernel = Sh("ip route show 198.51.100.0/24");
  ASSERT_EQ(kernel.find("via 10.0.0.4"), std::string::npos) << kernel;
  ASSERT_NE(kernel.find("via 10.0.0.2"), std::string::npos) << kernel;
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.2"), 0}})) << kernel;
  // Replaced in the middle of the rank: the new route takes the first's place.
  MustSh("ip route append blackhole 198.51.100.0/24");
  MustSh("ip route prepend 198.51.100.0/24 via 10.0.0.5");
  MustSh("ip route replace 198.51.100.0/24 via 10.0.0.6");  // replaces via 10.0.0.5
  MustSh("ip route del 198.51.100.0/24 via 10.0.0.2 && ip route del 198.51.100.0/24 via 10.0.0.6");
  ASSERT_NE(Sh("ip route show 198.51.100.0/24").find("blackhole"), std::string::npos);
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{NextHop::Drop()})) << Sh("ip route show 198.51.100.0/24");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// The kernel keeps IPv4 routes of one rank apart when their type
// or metrics differ (a blackhole beside an unreachable, `via G mtu 1400`
// beside `via G`); the source keyed them by their path alone, so the second
// overwrote the first and deleting one lost both while the kernel still
// used the other.
TEST_F(KernelSourceTest, Ipv4RoutesOfOneRankDifferingInTypeOrMetricsStayApart) {
  MustSh("ip route add 198.51.0.0/16 via 10.0.0.7");  // the cover a lost route would fall to
  StartSource({});
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.2");
  MustSh("ip route append 198.51.100.0/24 via 10.0.0.2 mtu 1400");
  MustSh("ip route del 198.51.100.0/24 via 10.0.0.2");  // the first: without mtu
  ASSERT_NE(Sh("ip route show 198.51.100.0/24").find("mtu 1400"), std::string::npos);
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.2"), 0}}))
      << Sh("ip route show 198.51.100.0/24");
  MustSh("ip route add blackhole 198.51.101.0/24 && ip route append unreachable 198.51.101.0/24");
  MustSh("ip route del blackhole 198.51.101.0/24");
  ASSERT_NE(Sh("ip route show 198.51.101.0/24").find("unreachable"), std::string::npos);
  EXPECT_TRUE(RouteIs("198.51.101.0/24", host)) << Sh("ip route show 198.51.101.0/24");
  EXPECT_FALSE(WaitFor([&] { return PathsOf("198.51.101.0/24") != host; }, 1s));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

TEST_F(KernelSourceTest, TosRouteBesideAPlainOnePunts) {
  StartSource({});
  MustSh("ip route add 203.0.113.0/24 via 10.0.0.2");
  EXPECT_TRUE(RouteIs("203.0.113.0/24", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  MustSh("ip route add 203.0.113.0/24 tos 0x10 via 10.0.0.3");
  EXPECT_TRUE(RouteIs("203.0.113.0/24", std::vector<NextHop>{NextHop::ToHost()}));
  MustSh("ip route del 203.0.113.0/24 tos 0x10 via 10.0.0.3");
  EXPECT_TRUE(RouteIs("203.0.113.0/24", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// 'ip link set k0 down' drops the IPv4 routes through k0
// from the kernel without any RTM_DELROUTE; the RIB kept them, and once the
// link was up and the gateway resolved again the device forwarded where the
// kernel uses another route.
TEST_F(KernelSourceTest, LinkDownDropsItsIpv4Routes) {
  StartSource({});
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.2");
  MustSh("ip route add 198.51.101.0/24 nexthop via 10.0.0.2 dev k0 nexthop via 10.1.0.2 dev k1");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  MustSh("ip link set k0 down");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::nullopt)) << Sh("ip route show");
  // The multipath route keeps its other next-hop (not a FIBNIC port: punt).
  EXPECT_TRUE(RouteIs("198.51.101.0/24", std::vector<NextHop>{NextHop::ToHost()}));
  MustSh("ip link set k0 up");
  EXPECT_TRUE(RouteIs("10.0.0.0/24", std::vector<NextHop>{{std::nullopt, 0}}));  // the connected route returns
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::nullopt));  // the gateway route does not, in the kernel either
  EXPECT_TRUE(Sh("ip route show 198.51.100.0/24").empty());
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness (tests/kdiff):
// when k0 loses its carrier (the far end goes down) the kernel keeps its
// routes, flagged linkdown, and with ignore_routes_with_linkdown=1 skips them
// for a covering route; no route message says so. The device kept forwarding
// through k0. A path without carrier is now never used: punt.
// Found by the kernel differential harness:
// a link going down only marks the IPv4 next-hops of a multipath route that
// keeps a live one dead, and its coming up revives them, without a message;
// the source erased them, so after k0 down/up and k1 down it had no route
// left while the kernel still forwards via k0.
TEST_F(KernelSourceTest, MultipathNextHopsRevivedWhenTheirLinkComesBack) {
  StartSource({});
  MustSh("ip route add 198.51.100.0/24 nexthop via 10.0.0.9 dev k0 nexthop via 10.1.0.2 dev k1");
  ASSERT_TRUE(WaitFor([&] { return PathsOf("198.51.100.0/24").has_value(); }, 10s));
  MustSh("ip link set k0 down && ip link set k0 up");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip route show 198.51.100.0/24").find("linkdown") == std::string::npos; }, 10s));
  MustSh("ip link set k1 down");
  ASSERT_NE(Sh("ip route get 198.51.100.1").find("via 10.0.0.9 dev k0"), std::string::npos)  // the kernel's answer
      << Sh("ip route show 198.51.100.0/24");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}))
      << Sh("ip route show 198.51.100.0/24");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness's soak: deleting an interface's last IPv4 address disables IPv4 on
// it — the routes through it leave the kernel's FIB and a multipath route's
// next-hops through it are marked dead, without a route message — and a new
// address revives those next-hops, also silently. The source kept the routes:
// after `addr del 10.3.0.1/24 dev k3` the device still sent 100.64.0.0/10 to
// port 3 while the kernel had no route for it.
TEST_F(KernelSourceTest, LastIpv4AddressDeletedTakesTheRoutesThroughItsLink) {
  MustSh("ip addr add 10.0.5.1/24 dev k0");
  StartSource({});
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.9 dev k0");
  MustSh("ip route add 198.51.102.0/24 dev k0");
  MustSh("ip route add 198.51.101.0/24 nexthop via 10.0.0.9 dev k0 nexthop via 10.1.0.2 dev k1");
  ASSERT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  MustSh("ip addr del 10.0.0.1/24 dev k0");  // 10.0.5.1 remains: IPv4 stays on
  ASSERT_FALSE(Sh("ip route show 198.51.100.0/24").empty());
  MustSh("ip addr del 10.0.5.1/24 dev k0");  // the last one
  ASSERT_TRUE(Sh("ip route show 198.51.100.0/24").empty());  // the kernel's own table
  ASSERT_NE(Sh("ip route show 198.51.101.0/24").find("dead"), std::string::npos);
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::nullopt));
  EXPECT_TRUE(RouteIs("198.51.102.0/24", std::nullopt));
  EXPECT_TRUE(RouteIs("198.51.101.0/24", host));  // left with its path via k1 (not a FIBNIC port)
  // A new address revives the next-hop through k0: with k1 down, the kernel
  // forwards via k0 again.
  MustSh("ip addr add 10.0.0.1/24 dev k0");
  MustSh("ip link set k1 down");
  ASSERT_NE(Sh("ip route get 198.51.101.1").find("via 10.0.0.9 dev k0"), std::string::npos)
      << Sh("ip route show 198.51.101.0/24");
  EXPECT_TRUE(RouteIs("198.51.101.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}))
      << Sh("ip route show 198.51.101.0/24");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

TEST_F(KernelSourceTest, LinkdownPathsAreNotUsed) {
  MustSh("sysctl -qw net.ipv4.conf.all.ignore_routes_with_linkdown=1");
  StartSource({});
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.9 dev k0");
  MustSh("ip route add 0.0.0.0/0 via 10.1.0.2 dev k1");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  MustSh("ip netns exec " + peer_ns + " ip link set k0p down");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{NextHop::ToHost()})) << Sh("ip route show");
  EXPECT_NE(Sh("ip route get 198.51.100.1").find("dev k1"), std::string::npos);  // the kernel skips it
  MustSh("ip netns exec " + peer_ns + " ip link set k0p up");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the FRR harness (tests/frrdiff: a fibnicd restart with nothing
// changed wrote the device): a route added while its link had no carrier
// comes flagged linkdown; the carrier's return clears the flag in the
// kernel without a route message, and the source kept punting the route.
TEST_F(KernelSourceTest, RouteAddedWithoutCarrierIsUsedOnceTheCarrierIsBack) {
  StartSource({});
  MustSh("ip netns exec " + peer_ns + " ip link set k0p down");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip route show 10.0.0.0/24").find("linkdown") != std::string::npos; }, 10s));
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.9 dev k0");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{NextHop::ToHost()})) << Sh("ip route show");
  MustSh("ip netns exec " + peer_ns + " ip link set k0p up");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip route show 198.51.100.0/24").find("linkdown") == std::string::npos; }, 10s));
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}})) << Sh("ip route show");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness: with
// ignore_routes_with_linkdown=1 the kernel reports a next-hop without carrier
// as dead (RTNH_F_DEAD | RTNH_F_LINKDOWN) in the route message, and clears
// that silently when the carrier returns. The source kept the reported DEAD:
// when k1 later went down it took the route for one without a live next-hop
// and erased it, while the kernel kept forwarding it via k0.
TEST_F(KernelSourceTest, NextHopReportedDeadForLackOfCarrierLivesOnWhenItReturns) {
  MustSh("sysctl -qw net.ipv4.conf.all.ignore_routes_with_linkdown=1");
  StartSource({}, {{"k0", 0}, {"k1", 1}});
  MustSh("ip netns exec " + peer_ns + " ip link set k0p down");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip link show k0").find("NO-CARRIER") != std::string::npos; }, 10s));
  MustSh("ip route add 198.51.100.0/24 nexthop via 10.0.0.9 dev k0 nexthop via 10.1.0.2 dev k1");
  ASSERT_NE(Sh("ip route show 198.51.100.0/24").find("dead linkdown"), std::string::npos);
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.1.0.2"), 1}}));
  MustSh("ip netns exec " + peer_ns + " ip link set k0p up");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip route show 198.51.100.0/24").find("dead") == std::string::npos; }, 10s));
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}, {A("10.1.0.2"), 1}}));
  MustSh("ip link set k1 down");
  ASSERT_NE(Sh("ip route get 198.51.100.1").find("via 10.0.0.9 dev k0"), std::string::npos)
      << Sh("ip route show 198.51.100.0/24");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}))
      << Sh("ip route show 198.51.100.0/24");
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness (tests/kdiff): an
// `ip rule` sending 198.51.0.0/16 to table 100 (unreachable there) left the
// device forwarding it by main's routes. A rule that may decide elsewhere
// punts its destination and every route inside it; one already there when
// the source starts is found by the dump.
TEST_F(KernelSourceTest, PolicyRulesPuntTheirDestinations) {
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.9 dev k0");
  MustSh("ip route add 0.0.0.0/0 via 10.0.0.9 dev k0");
  MustSh("ip route add unreachable 198.51.0.0/16 table 100");
  MustSh("ip rule add to 198.51.0.0/16 table 100 pref 100");
  MustSh("ip rule add to 203.0.113.0/24 table main pref 101");  // only main: harmless
  StartSource({});
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{NextHop::ToHost()})) << Sh("ip rule");
  EXPECT_TRUE(RouteIs("198.51.0.0/16", std::vector<NextHop>{NextHop::ToHost()}));
  EXPECT_TRUE(RouteIs("0.0.0.0/0", std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  EXPECT_EQ(PathsOf("203.0.113.0/24"), std::nullopt);
  EXPECT_NE(Sh("ip route get 198.51.100.1 2>&1").find("No route to host"), std::string::npos);  // the kernel's answer
  MustSh("ip rule del to 198.51.0.0/16 table 100 pref 100");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  EXPECT_TRUE(RouteIs("198.51.0.0/16", std::nullopt));
  MustSh("ip -6 rule add to 2001:db8:5::/48 prohibit pref 100");
  MustSh("ip -6 route add 2001:db8:5:1::/64 dev k0");
  EXPECT_TRUE(RouteIs("2001:db8:5:1::/64", std::vector<NextHop>{NextHop::ToHost()}));
  EXPECT_TRUE(RouteIs("2001:db8:5::/48", std::vector<NextHop>{NextHop::ToHost()}));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness (tests/kdiff): a
// next-hop object's change is announced as an NLM_F_REPLACE of each route
// using it; that erased an appended route of the same prefix and metric, so
// the device forwarded by the object while the kernel used the other route.
TEST_F(KernelSourceTest, NexthopObjectChangeKeepsAnAppendedSibling) {
  StartSource({});
  MustSh("ip nexthop add id 1 via 10.0.0.9 dev k0");
  MustSh("ip route add 198.51.100.0/24 via 10.1.0.2 dev k1");
  MustSh("ip route append 198.51.100.0/24 nhid 1");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{NextHop::ToHost()}));
  const uint64_t before = Stats().messages;
  MustSh("ip nexthop replace id 1 via 10.0.0.8 dev k0");
  EXPECT_TRUE(WaitFor([&] { return Stats().messages > before; }, 10s));
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), std::vector<NextHop>{NextHop::ToHost()});
  EXPECT_NE(Sh("ip route get 198.51.100.1").find("dev k1"), std::string::npos);  // the kernel's answer
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness: with
// nexthop_compat_mode=0 the kernel removes a route whose next-hop object goes
// away — here by its link going down — without any route message, and the
// source kept forwarding by the paths the route was announced with. Routes
// by object punted for a while; now the source follows the objects and
// mirrors the silent removal: the route goes, and the device forwards as
// the kernel does, by the metric-2000 route via k1 (a FIBNIC port here).
TEST_F(KernelSourceTest, RouteByNexthopObjectRemovedSilentlyOnLinkDownGoes) {
  MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad && ip -6 addr add 2001:db8:2::1/64 dev k1 nodad");
  MustSh("ip -6 neigh replace 2001:db8:1::3 lladdr 02:00:00:00:00:03 dev k0 nud permanent");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip link show k0").find("LOWER_UP") != std::string::npos; }, 10s));
  MustSh("ip nexthop add id 4 via 2001:db8:1::3 dev k0 && ip nexthop add id 11 group 4");
  MustSh("ip -6 route add ::/0 via 2001:db8:2::3 dev k1 metric 2000");
  StartSource({}, {{"k0", 0}, {"k1", 1}});
  MustSh("ip -6 route add ::/0 nhid 11");  // announced with its path (compat mode 1)
  ASSERT_TRUE(RouteIs("::/0", std::vector<NextHop>{{A("2001:db8:1::3"), 0}}));
  MustSh("echo 0 > /proc/sys/net/ipv4/nexthop_compat_mode");
  MustSh("ip link set k0 down && ip link set k0 up");
  MustSh("ip -6 addr replace 2001:db8:1::1/64 dev k0 nodad");
  MustSh("ip -6 neigh replace 2001:db8:1::3 lladdr 02:00:00:00:00:03 dev k0 nud permanent");
  ASSERT_TRUE(WaitFor([&] { return Sh("ip link show k0").find("LOWER_UP") != std::string::npos; }, 10s));
  MustSh("ip nexthop replace id 4 via 2001:db8:1::3 dev k0");
  ASSERT_NE(Sh("ip -6 route get 2001:db8:99::1").find("via 2001:db8:2::3 dev k1"), std::string::npos);  // the kernel's answer
  EXPECT_TRUE(RouteIs("::/0", std::vector<NextHop>{{A("2001:db8:2::3"), 1}}));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Found by the kernel differential harness: the source's
// resolution request (RTM_NEWNEIGH NTF_USE) reaching an entry an admin had
// just made PERMANENT turned it INCOMPLETE without a notification, and the
// device kept the MAC. The io thread is held while a route via the gateway
// is added and the entry goes PERMANENT: the source reads the route first,
// asks for the gateway it has not heard of, and only then reads the
// neighbour. The kernel's entry must stay PERMANENT.
TEST_F(KernelSourceTest, ResolutionRequestNeverDemotesAPermanentNeighbour) {
  StartSource({});
  for (int i = 0; i < 3; ++i) {
    Sh("ip route del 10.70.0.0/16 2>/dev/null; ip neigh del 10.0.0.7 dev k0 2>/dev/null");
    ASSERT_TRUE(WaitFor([&] { return !NeighOf("10.0.0.7") && !PathsOf("10.70.0.0/16"); }, 10s));
    const uint64_t asked = Stats().resolve_requests;
    WhileHeld([&] {
      MustSh("ip route add 10.70.0.0/16 via 10.0.0.7 && "
             "ip neigh replace 10.0.0.7 lladdr 02:00:00:00:00:07 dev k0 nud permanent");
    });
    ASSERT_TRUE(WaitFor([&] { auto n = NeighOf("10.0.0.7"); return n && n->state == NeighState::kPermanent; }, 10s));
    EXPECT_GT(Stats().resolve_requests, asked);  // the race this test is about did happen
    EXPECT_NE(Sh("ip neigh show 10.0.0.7 dev k0 nud all").find("PERMANENT"), std::string::npos)
        << "attempt " << i << ": " << Sh("ip neigh show 10.0.0.7 dev k0 nud all");
  }
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

TEST_F(KernelSourceTest, NeighboursAndGatewayResolution) {
  StartSource({});
  MustSh("ip neigh add 10.0.0.2 lladdr 02:00:00:00:00:02 dev k0 nud permanent");
  ASSERT_TRUE(WaitFor([&] { return NeighOf("10.0.0.2").has_value(); }, 10s));
  EXPECT_EQ(NeighOf("10.0.0.2")->mac.ToString(), "02:00:00:00:00:02");
  EXPECT_EQ(NeighOf("10.0.0.2")->port, 0);
  EXPECT_EQ(NeighOf("10.0.0.2")->state, NeighState::kPermanent);
  MustSh("ip neigh replace 10.0.0.2 lladdr 02:00:00:00:00:22 dev k0 nud reachable");
  EXPECT_TRUE(WaitFor([&] { auto n = NeighOf("10.0.0.2"); return n && n->mac.ToString() == "02:00:00:00:00:22"; }, 10s));
  MustSh("ip neigh del 10.0.0.2 dev k0");
  EXPECT_TRUE(WaitFor([&] { return !NeighOf("10.0.0.2").has_value(); }, 10s));
  MustSh("ip neigh add 10.1.0.7 lladdr 02:00:00:00:00:07 dev k1 nud permanent");  // not a FIBNIC port

  // Nobody sends traffic to 10.0.0.9: only the source's request makes the
  // kernel resolve it (the peer namespace answers ARP).
  const std::string peer_mac =
      Sh("ip netns exec " + peer_ns + " cat /sys/class/net/k0p/address");
  MustSh("ip route add 10.60.0.0/16 via 10.0.0.9");
  ASSERT_TRUE(WaitFor([&] { auto n = NeighOf("10.0.0.9"); return n && NeighUsable(n->state); }, 15s))
      << Sh("ip neigh show");
  EXPECT_EQ(NeighOf("10.0.0.9")->mac.ToString() + "\n", peer_mac);
  EXPECT_GE(Stats().resolve_requests, 1u);
  EXPECT_FALSE(NeighOf("10.1.0.7").has_value());
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// ipnumad's mode: neighbours (dumped and as events) reach the sink, while no
// route is dumped, subscribed to or parsed — the connected routes the fixture
// made and 200 routes added under it leave the source's message count and
// route table untouched.
TEST_F(KernelSourceTest, NeighboursOnlyTakesNoRouteMessage) {
  MustSh("ip route add 10.50.0.0/16 via 10.0.0.2");
  MustSh("ip neigh add 10.0.0.5 lladdr 02:00:00:00:00:05 dev k0 nud permanent");  // before start: the dump
  KernelSourceConfig cfg;
  cfg.ports = {{"k0", 0}};
  source = KernelSource::NeighboursOnly(io, sink, cfg);
  ASSERT_TRUE(source->Start().ok());
  io_thread = std::thread([this] { io.run(); });
  ASSERT_TRUE(WaitFor([&] { return NeighOf("10.0.0.5").has_value(); }, 10s));
  ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 10s));
  const uint64_t after_dump = Stats().messages;
  std::string batch;
  for (int i = 0; i < 200; ++i) batch += "route add 10.70." + std::to_string(i) + ".0/24 via 10.0.0.2\n";
  MustSh("printf '" + batch + "' | ip -batch -");
  MustSh("ip neigh add 10.0.0.6 lladdr 02:00:00:00:00:06 dev k0 nud permanent");
  ASSERT_TRUE(WaitFor([&] { return NeighOf("10.0.0.6").has_value(); }, 10s));
  const KernelSourceStats s = Stats();
  EXPECT_LT(s.messages - after_dump, 10u) << "route events reached the neighbour-only source";
  EXPECT_EQ(s.routes, 0u);
  EXPECT_EQ(s.route_updates, 0u);
  EXPECT_EQ(s.ignored, 0u);
  EXPECT_TRUE(sink.routes().empty());
  EXPECT_EQ(NeighOf("10.0.0.6")->mac.ToString(), "02:00:00:00:00:06");
  EXPECT_EQ(s.errors, 0u) << s.last_error;
}

}  // namespace
}  // namespace fibnic::testing
