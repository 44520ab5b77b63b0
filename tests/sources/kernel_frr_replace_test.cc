// A route of a protocol the kernel source is told to ignore (here bgp, as
// zebra installs it) replacing at a rank (prefix, table, TOS, metric) where
// routes of other protocols live (the source keeps none of the ignored
// protocol's routes): the kernel replaces one route of the rank —
// IPv4 the first, IPv6 the one that is, like zebra's, a multipath candidate
// — and the others stay. The source must keep exactly what the kernel kept.
// Each case checks the kernel's own answer first (`ip -j route show`).
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <nlohmann/json.hpp>

#include "tests/sources/kernel_source_fixture.h"

namespace fibnic::testing {
namespace {

// The kernel's routes of prefix p that are not zebra's, as "gateway dev proto".
std::vector<std::string> KernelOthers(const std::string& fam, const std::string& p) {
  std::vector<std::string> out;
  for (const auto& r : nlohmann::json::parse(Sh("ip " + fam + " -j route show " + p))) {
    if (r.value("protocol", "") == "bgp") continue;
    out.push_back(r.value("gateway", "-") + " " + r.value("dev", "") + " " + r.value("protocol", "boot"));
  }
  return out;
}

TEST_F(KernelSourceTest, FrrReplaceTakesOneRouteOfItsRank) {
  KernelSourceConfig cfg;
  cfg.ignore_protocols = {RTPROT_BGP};
  StartSource(cfg);
  MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad && ip -6 addr add 2001:db8:2::1/64 dev k1 nodad");
  // IPv4, one route of the rank: replaced.
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.2 proto static metric 20");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.2"), 0}}));
  MustSh("ip route replace 198.51.100.0/24 via 10.1.0.2 proto bgp metric 20");
  ASSERT_EQ(KernelOthers("-4", "198.51.100.0/24"), std::vector<std::string>{});
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::nullopt));
  // IPv4, two routes of the rank (`ip route append`): the first is replaced,
  // the second stays and is then the one the kernel's other routes offer.
  MustSh("ip route add 203.0.113.0/24 via 10.0.0.2 proto static metric 20");
  MustSh("ip route append 203.0.113.0/24 via 10.0.0.3 metric 20");
  EXPECT_TRUE(RouteIs("203.0.113.0/24", host));  // two of one rank: the kernel picks
  MustSh("ip route replace 203.0.113.0/24 via 10.1.0.2 proto bgp metric 20");
  ASSERT_EQ(KernelOthers("-4", "203.0.113.0/24"), std::vector<std::string>{"10.0.0.3 k0 boot"})
      << Sh("ip route show 203.0.113.0/24");
  EXPECT_TRUE(RouteIs("203.0.113.0/24", std::vector<NextHop>{{A("10.0.0.3"), 0}}));
  // IPv6, a gateway route and a device route of one metric: zebra's gateway
  // route replaces the gateway route, the device route stays.
  MustSh("ip -6 route add 2001:db8:99::/48 via 2001:db8:1::2 dev k0 proto static metric 20");
  MustSh("ip -6 route append 2001:db8:99::/48 dev k0 metric 20");
  MustSh("ip -6 route replace 2001:db8:99::/48 via 2001:db8:2::2 dev k1 proto bgp metric 20");
  ASSERT_EQ(KernelOthers("-6", "2001:db8:99::/48"), std::vector<std::string>{"- k0 boot"})
      << Sh("ip -6 route show 2001:db8:99::/48");
  EXPECT_TRUE(RouteIs("2001:db8:99::/48", std::vector<NextHop>{{std::nullopt, 0}}));
  // IPv6, one device route of the metric: zebra's gateway route replaces it.
  MustSh("ip -6 route add 2001:db8:98::/48 dev k0 proto static metric 20");
  EXPECT_TRUE(RouteIs("2001:db8:98::/48", std::vector<NextHop>{{std::nullopt, 0}}));
  MustSh("ip -6 route replace 2001:db8:98::/48 via 2001:db8:2::2 dev k1 proto bgp metric 20");
  ASSERT_EQ(KernelOthers("-6", "2001:db8:98::/48"), std::vector<std::string>{});
  EXPECT_TRUE(RouteIs("2001:db8:98::/48", std::nullopt));
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

}  // namespace
}  // namespace fibnic::testing
