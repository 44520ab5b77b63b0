// IPv6 `ip -6 route replace` of a route that is not zebra's, where a prefix
// and metric hold several routes: the kernel (fib6_add_rt2node) replaces the
// first route that is, like the new one, a multipath candidate (unicast via
// a gateway) or not — else the first of the metric — and keeps the others.
// The source kept the new route alone in its entry, dropping the routes the
// kernel kept beside it (a device route beside a gateway route), and did not
// know which of two device routes was the first. Each case checks the
// kernel's own table first (`ip -j route show`), then the RIB once the
// source has read past the change.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/sources/kernel_source_fixture.h"

namespace fibnic::testing {
namespace {

// The kernel's IPv6 routes of prefix p, in its order, as "gateway dev".
std::vector<std::string> KernelRoutes(const std::string& p) {
  std::vector<std::string> out;
  for (const auto& r : nlohmann::json::parse(Sh("ip -6 -j route show " + p))) {
    out.push_back(r.value("gateway", "-") + " " + r.value("dev", ""));
  }
  return out;
}

class KernelV6ReplaceTest : public KernelSourceTest {
 protected:
  void SetUp() override {
    KernelSourceTest::SetUp();
    // k2: a third interface (not a FIBNIC port) for a third device route.
    MustSh("ip link add k2 type veth peer name k2p && ip link set k2 up && ip link set k2p up");
    MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad && ip -6 addr add 2001:db8:2::1/64 dev k1 nodad");
  }
  // Waits until the source has read every message the kernel sent so far: a
  // marker route added after them has arrived.
  void Settle() {
    const std::string marker = "192.0.2." + std::to_string(++markers_) + "/32";
    MustSh("ip route add " + marker + " via 10.0.0.9");
    ASSERT_TRUE(RouteIs(marker, std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  }
  const std::vector<NextHop> connected_k0{{std::nullopt, 0}};
  int markers_ = 0;
};

// A gateway route and a device route of one metric: replacing with a
// gateway route takes the gateway route, the device route stays; replacing
// with a device route takes the device route, the gateway route stays.
TEST_F(KernelV6ReplaceTest, Ipv6ReplaceLeavesTheRouteOfTheOtherKind) {
  StartSource({});
  const std::string p = "2001:db8:99::/48";
  MustSh("ip -6 route add " + p + " via 2001:db8:1::2 dev k0 metric 20");
  MustSh("ip -6 route append " + p + " dev k0 metric 20");
  MustSh("ip -6 route replace " + p + " via 2001:db8:1::3 dev k0 proto static metric 20");
  ASSERT_EQ(KernelRoutes(p), (std::vector<std::string>{"2001:db8:1::3 k0", "- k0"}));
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_EQ(PathsOf(p), host) << "two routes of one metric: the kernel picks";
  MustSh("ip -6 route del " + p + " via 2001:db8:1::3 dev k0 metric 20");
  ASSERT_EQ(KernelRoutes(p), std::vector<std::string>{"- k0"});
  EXPECT_TRUE(RouteIs(p, connected_k0)) << Sh("ip -6 route show " + p);

  const std::string q = "2001:db8:98::/48";
  MustSh("ip -6 route add " + q + " via 2001:db8:1::2 dev k0 metric 20");
  MustSh("ip -6 route append " + q + " dev k1 metric 20");
  MustSh("ip -6 route replace " + q + " dev k0 proto boot metric 20");
  ASSERT_EQ(KernelRoutes(q), (std::vector<std::string>{"2001:db8:1::2 k0", "- k0"}));
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_EQ(PathsOf(q), host);
  MustSh("ip -6 route del " + q + " via 2001:db8:1::2 dev k0 metric 20");
  ASSERT_EQ(KernelRoutes(q), std::vector<std::string>{"- k0"});
  EXPECT_TRUE(RouteIs(q, connected_k0)) << Sh("ip -6 route show " + q);
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// Device routes only: a replace takes the first of them — the first of its
// kind (a device route) or, for a gateway route, the first of the metric —
// in the order the kernel added them, whether the source heard them as
// events or in its start-up dump.
TEST_F(KernelV6ReplaceTest, Ipv6ReplaceTakesTheFirstRouteInTheKernelsOrder) {
  const std::string dumped = "2001:db8:97::/48";
  MustSh("ip -6 route add " + dumped + " dev k1 metric 20");
  MustSh("ip -6 route append " + dumped + " dev k0 metric 20");
  StartSource({});
  MustSh("ip -6 route replace " + dumped + " via 2001:db8:1::2 dev k0 metric 20");
  ASSERT_EQ(KernelRoutes(dumped), (std::vector<std::string>{"2001:db8:1::2 k0", "- k0"}));
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_EQ(PathsOf(dumped), host);
  MustSh("ip -6 route del " + dumped + " via 2001:db8:1::2 dev k0 metric 20");
  ASSERT_EQ(KernelRoutes(dumped), std::vector<std::string>{"- k0"});
  EXPECT_TRUE(RouteIs(dumped, connected_k0)) << Sh("ip -6 route show " + dumped);

  const std::string heard = "2001:db8:96::/48";
  MustSh("ip -6 route add " + heard + " dev k1 metric 20");
  MustSh("ip -6 route append " + heard + " dev k0 metric 20");
  MustSh("ip -6 route replace " + heard + " dev k2 metric 20");
  ASSERT_EQ(KernelRoutes(heard), (std::vector<std::string>{"- k2", "- k0"}));
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_EQ(PathsOf(heard), host);
  MustSh("ip -6 route del " + heard + " dev k2 metric 20");
  ASSERT_EQ(KernelRoutes(heard), std::vector<std::string>{"- k0"});
  EXPECT_TRUE(RouteIs(heard, connected_k0)) << Sh("ip -6 route show " + heard);
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// A replace among routes of one metric that the source keeps apart (a
// device route and an unreachable one): the kernel takes one and does not
// say which. The source asks the kernel again (a re-dump) instead of keeping
// a route the kernel may no longer have: one kept by mistake forwarded once
// the kernel's own routes of the prefix went (found by the kdiff soak: the
// device sent a blackholed destination out of a port).
TEST_F(KernelV6ReplaceTest, AReplaceTheKernelDoesNotExplainIsAskedOfTheKernel) {
  StartSource({});
  const std::string p = "2001:db8:97::/48";
  MustSh("ip -6 route add " + p + " dev k0 metric 20");
  MustSh("ip -6 route append unreachable " + p + " metric 20");
  MustSh("ip -6 route replace " + p + " dev k1 metric 20");
  ASSERT_EQ(KernelRoutes(p), (std::vector<std::string>{"- k1", "- lo"}));
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_EQ(PathsOf(p), host) << "two routes of one metric: the kernel picks";
  ASSERT_TRUE(WaitFor([&] { return Stats().unsure_redumps >= 1 && !Stats().dumping; }, 10s));
  MustSh("ip -6 route del " + p + " dev k1 metric 20");
  ASSERT_EQ(KernelRoutes(p), std::vector<std::string>{"- lo"});
  EXPECT_TRUE(RouteIs(p, host)) << Sh("ip -6 route show " + p);
  MustSh("ip -6 route del " + p + " metric 20");
  ASSERT_TRUE(KernelRoutes(p).empty());
  // Nothing left: never dev k0 (connected on port 0), which the replace took.
  EXPECT_TRUE(RouteIs(p, std::nullopt)) << "a route the kernel no longer has";
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

// The kernel's dump lists a multipath route at its first sibling and goes on
// after its last: a route of the same metric between them in the kernel's
// list is held and never listed. Here a device route on a link without
// carrier, left between the siblings when the multipath route replaced the
// blackhole before it. The re-dump that follows the replace (the source
// cannot tell which route it took) must not sweep that route: a later
// replace by a next-hop object takes it, not the multipath route, and once
// the object goes the kernel still forwards by the multipath route (found
// by the kdiff soak: the prefix was gone and its cover's blackhole dropped
// what the kernel forwarded).
TEST_F(KernelV6ReplaceTest, ARouteTheKernelsDumpHidesBesideAMultipathRouteIsKept) {
  StartSource({});
  const std::string p = "2001:db8:95::/48";
  MustSh("ip link set k1p down");  // k1 without carrier: its device route is dead
  MustSh("ip -6 route add blackhole " + p + " metric 20");
  MustSh("ip -6 route append " + p + " dev k1 metric 20");
  MustSh("ip -6 route replace " + p + " metric 20 nexthop via 2001:db8:1::2 dev k0 nexthop via 2001:db8:1::3 dev k0");
  // The kernel's own listing shows the multipath route alone.
  const auto listed = nlohmann::json::parse(Sh("ip -6 -j route show " + p));
  ASSERT_EQ(listed.size(), 1u) << listed.dump();
  ASSERT_TRUE(listed[0].contains("nexthops")) << listed.dump();
  ASSERT_TRUE(WaitFor([&] { return Stats().unsure_redumps >= 1 && !Stats().dumping; }, 10s));
  EXPECT_EQ(PathsOf(p), host) << "two routes of one metric (one the dump did not list): the kernel picks";
  // A replace by an object takes the hidden device route: the multipath route stays.
  MustSh("ip nexthop add id 95 via 2001:db8:1::4 dev k0");
  MustSh("ip -6 route replace " + p + " nhid 95 metric 20");
  MustSh("ip nexthop del id 95");
  const auto left = nlohmann::json::parse(Sh("ip -6 -j route show " + p));
  ASSERT_EQ(left.size(), 1u) << left.dump();
  ASSERT_TRUE(left[0].contains("nexthops")) << "the kernel no longer holds the multipath route: " << left.dump();
  ASSERT_NO_FATAL_FAILURE(Settle());
  const std::vector<NextHop> multipath{{A("2001:db8:1::2"), 0}, {A("2001:db8:1::3"), 0}};
  EXPECT_TRUE(WaitFor([&] { return PathsOf(p) == multipath || PathsOf(p) == host; }, 10s))
      << "the kernel forwards by the multipath route; the source has "
      << (PathsOf(p) ? std::to_string(PathsOf(p)->size()) + " paths" : std::string("no route"));
  // Where the dumps cannot tell a hidden route from one the kernel replaced
  // (here the blackhole: the multipath replace took it, but it might as well
  // sit between the siblings), the prefix punts; what was kept never becomes
  // the answer once the multipath route goes, and leaves at the re-dump that
  // follows.
  const std::string q = "2001:db8:94::/48";
  ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 10s));
  const uint64_t redumps = Stats().unsure_redumps;
  MustSh("ip -6 route add blackhole " + q + " metric 20");
  MustSh("ip -6 route append " + q + " dev k1 metric 20");
  MustSh("ip -6 route replace " + q + " metric 20 nexthop via 2001:db8:1::2 dev k0 nexthop via 2001:db8:1::3 dev k0");
  ASSERT_TRUE(WaitFor([&] { return Stats().unsure_redumps > redumps && !Stats().dumping; }, 10s));
  EXPECT_EQ(PathsOf(q), host);
  MustSh("ip -6 route del " + q + " dev k1 metric 20");
  ASSERT_NO_FATAL_FAILURE(Settle());
  EXPECT_TRUE(PathsOf(q) == host || PathsOf(q) == multipath);
  sink.ForgetDrops();
  MustSh("ip -6 route del " + q + " metric 20");
  ASSERT_TRUE(nlohmann::json::parse(Sh("ip -6 -j route show " + q)).empty()) << Sh("ip -6 route show " + q);
  EXPECT_TRUE(RouteIs(q, std::nullopt)) << "the kernel holds nothing for the prefix; the source has "
                                        << (PathsOf(q) == host ? std::string("a punt") : std::string("a route"));
  EXPECT_FALSE(sink.EverDropped(P(q))) << "the blackhole the dumps could not place was given as the prefix's route";
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}


// The kernel refuses a route identical to one it holds (EEXIST), but a
// replace makes one: it takes the first route of its kind, which need not be
// the one the new route repeats. Then the prefix holds the same route twice
// — an unreachable route, a device route, a route by next-hop object — and a
// delete takes one of them. The other still answers: never the cover (found
// by the kdiff soak: the device forwarded by 2001:db8::/32 what the kernel's
// remaining unreachable route refused). Heard as events, and read in the
// start-up dump, where the kernel lists each copy.
class KernelV6DuplicateTest : public KernelV6ReplaceTest {
 protected:
  struct Case {
    std::string prefix;
    std::vector<std::string> make;  // leaves the prefix holding `route` twice
    std::string route;              // as `ip -6 route show` lists it
    std::optional<std::vector<NextHop>> answer;
  };
  std::vector<Case> Cases() const {
    return {
        {"2001:db8:90::/48",
         {"route add P dev k0 metric 20", "route append unreachable P metric 20",
          "route replace unreachable P metric 20"},
         "- lo", host},
        {"2001:db8:91::/48",
         {"route add P dev k1 metric 20", "route append P dev k0 metric 20", "route replace P dev k0 metric 20"},
         "- k0", connected_k0},
        {"2001:db8:92::/48",
         {"route add unreachable P metric 20", "route append P nhid 93 metric 20", "route replace P nhid 93 metric 20"},
         "2001:db8:1::4 k0", std::vector<NextHop>{{A("2001:db8:1::4"), 0}}},
    };
  }
  void Make(const Case& c) {
    for (std::string line : c.make) {
      line.replace(line.find('P'), 1, c.prefix);
      MustSh("ip -6 " + line);
    }
    ASSERT_EQ(KernelRoutes(c.prefix), (std::vector<std::string>{c.route, c.route}));
  }
  void DeleteOneThenTheOther(const Case& c) {
    MustSh("ip -6 route del " + c.prefix + " metric 20");
    ASSERT_EQ(KernelRoutes(c.prefix), std::vector<std::string>{c.route});
    ASSERT_NO_FATAL_FAILURE(Settle());
    EXPECT_TRUE(RouteIs(c.prefix, c.answer)) << c.prefix << ": the kernel still holds " << c.route << "; the source has "
                                             << (PathsOf(c.prefix) ? std::to_string(PathsOf(c.prefix)->size()) + " paths"
                                                                   : std::string("no route"));
    MustSh("ip -6 route del " + c.prefix + " metric 20");
    ASSERT_TRUE(KernelRoutes(c.prefix).empty());
    EXPECT_TRUE(RouteIs(c.prefix, std::nullopt)) << c.prefix;
  }
  void SetUp() override {
    KernelV6ReplaceTest::SetUp();
    MustSh("ip nexthop add id 93 via 2001:db8:1::4 dev k0");
    MustSh("ip -6 route add 2001:db8::/32 via 2001:db8:2::9 dev k1");  // the cover
  }
};

TEST_F(KernelV6DuplicateTest, ARouteAReplaceDuplicatedIsHeldTwice) {
  StartSource({});
  for (const Case& c : Cases()) {
    ASSERT_NO_FATAL_FAILURE(Make(c));
    ASSERT_NO_FATAL_FAILURE(Settle());
    // Where the replaced route was of another entry, the source asks the
    // kernel again: its answer is what the deletes below act on.
    ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 10s));
    EXPECT_TRUE(WaitFor([&] { return PathsOf(c.prefix) == c.answer || PathsOf(c.prefix) == host; }, 10s)) << c.prefix;
    ASSERT_NO_FATAL_FAILURE(DeleteOneThenTheOther(c));
  }
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

TEST_F(KernelV6DuplicateTest, ARouteTheStartUpDumpListsTwiceIsHeldTwice) {
  for (const Case& c : Cases()) ASSERT_NO_FATAL_FAILURE(Make(c));
  StartSource({});
  for (const Case& c : Cases()) {
    EXPECT_TRUE(WaitFor([&] { return PathsOf(c.prefix) == c.answer || PathsOf(c.prefix) == host; }, 10s)) << c.prefix;
    ASSERT_NO_FATAL_FAILURE(DeleteOneThenTheOther(c));
  }
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

}  // namespace
}  // namespace fibnic::testing
