// The kernel source and the kernel's next-hop objects (`ip nexthop`), in a
// private network namespace with the kernel as the oracle: for addresses in
// every route by object (and the routes covering them), the RIB's longest
// match must send them where `ip route get` sends 32 flows — objects and
// groups made, replaced and deleted, and the removals the kernel makes
// without a message (a link going down or losing its carrier takes the
// objects through it, groups lose them or go, and the routes using them go),
// in both nexthop_compat_mode settings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/sources/kernel_source_fixture.h"

namespace fibnic::testing {
namespace {

const PortNames kPorts{{"k0", 0}, {"k1", 1}};

// What the kernel does with addr: the (gateway, port) pairs 32 UDP flows go
// to (fib_multipath_hash_policy=1 spreads them over a group's paths), Drop
// for a blackhole (RTM_GETROUTE answers EINVAL, "Invalid argument"), or
// ToHost when it does not forward otherwise (unreachable, ...) or uses an
// interface that is not a FIBNIC port.
std::vector<NextHop> KernelAnswer(const std::string& addr) {
  std::set<NextHop> out;
  for (int sport = 1000; sport < 1032; ++sport) {
    int rc = 0;
    const std::string j =
        Sh("ip -j route get " + addr + " ipproto udp sport " + std::to_string(sport) + " dport 53 2>&1", &rc);
    if (rc != 0) return {j.find("Invalid argument") != std::string::npos ? NextHop::Drop() : NextHop::ToHost()};
    const auto r = nlohmann::json::parse(j).at(0);
    const auto port = kPorts.find(r.value("dev", ""));
    if (r.value("type", "unicast") != "unicast" || port == kPorts.end()) return {NextHop::ToHost()};
    NextHop hop{std::nullopt, port->second};
    if (r.contains("gateway")) hop.gateway = A(r["gateway"].get<std::string>());
    if (r.contains("via")) hop.gateway = A(r["via"]["host"].get<std::string>());
    out.insert(hop);
  }
  return {out.begin(), out.end()};
}

std::string Show(const std::vector<NextHop>& v) {
  std::string s;
  for (const NextHop& h : v) s += (s.empty() ? "" : ", ") + h.ToString();
  return s.empty() ? "nothing" : s;
}

class KernelNexthopTest : public KernelSourceTest {
 protected:
  // The RIB's longest match for addr (what the device would do with it).
  std::vector<NextHop> DeviceAnswer(const std::string& addr) {
    const IpAddr a = A(addr);
    const Route* best = nullptr;
    const auto routes = sink.routes();
    for (const auto& [p, r] : routes) {
      if (p.Contains(a) && (!best || p.len() > best->prefix.len())) best = &r;
    }
    if (!best) return {};
    std::vector<NextHop> paths = best->paths;
    std::sort(paths.begin(), paths.end());
    return paths;
  }
  // Every address answered as the kernel does (a punt only where allowed);
  // waits for the source to catch up. Returns how many were forwarded.
  int Agrees(const std::vector<std::string>& addrs, const std::set<std::string>& may_punt = {}) {
    std::string diff;
    int forwarded = 0;
    WaitFor(
        [&] {
          diff.clear();
          forwarded = 0;
          for (const std::string& a : addrs) {
            const auto kernel = KernelAnswer(a), device = DeviceAnswer(a);
            const bool punt = device == std::vector<NextHop>{NextHop::ToHost()};
            const bool drop = device == std::vector<NextHop>{NextHop::Drop()};
            if (device == kernel || (punt && may_punt.count(a))) {
              forwarded += punt || drop ? 0 : 1;
              continue;
            }
            diff += "  " + a + ": kernel " + Show(kernel) + ", device " + Show(device) + "\n";
          }
          return diff.empty();
        },
        10s);
    EXPECT_TRUE(diff.empty()) << diff << Sh("ip nexthop; ip route; ip -6 route");
    return forwarded;
  }
  void Scenario(int compat_mode);
  // The gateways' neighbours, PERMANENT: a group member whose gateway has
  // an entry in a state that is not NUD_VALID (fibnicd's own resolution
  // request makes one) is skipped by the kernel's group hashing
  // (nexthop_is_good_nh), which the RIB leaves to the neighbour stage.
  void Neighbours() {
    for (const char* n : {"10.0.0.8 dev k0", "10.0.0.9 dev k0", "10.1.0.2 dev k1", "2001:db8:1::3 dev k0",
                          "2001:db8:1::4 dev k0", "2001:db8:2::3 dev k1"}) {
      MustSh(std::string("ip neigh replace ") + n + " lladdr 02:00:00:00:00:01 nud permanent");
    }
  }
  // Objects cannot be made through a link without carrier: wait for it.
  void WaitCarrier(const std::string& dev) {
    ASSERT_TRUE(WaitFor([&] { return Sh("ip link show " + dev).find("LOWER_UP") != std::string::npos; }, 10s));
  }
};

// Both link ends in namespaces: k0 → k0p (peer namespace), k1 → k1p (here).
void KernelNexthopTest::Scenario(int compat_mode) {
  MustSh("sysctl -qw net.ipv4.nexthop_compat_mode=" + std::to_string(compat_mode));
  MustSh("sysctl -qw net.ipv4.fib_multipath_hash_policy=1 net.ipv6.fib_multipath_hash_policy=1");
  MustSh("ip -6 addr add 2001:db8:1::1/64 dev k0 nodad && ip -6 addr add 2001:db8:2::1/64 dev k1 nodad");
  WaitCarrier("k0");
  WaitCarrier("k1");
  Neighbours();
  MustSh("ip nexthop add id 1 via 10.0.0.9 dev k0 && ip nexthop add id 2 via 10.1.0.2 dev k1");
  MustSh("ip nexthop add id 3 dev k0 && ip nexthop add id 20 blackhole");
  MustSh("ip nexthop add id 4 via 2001:db8:1::3 dev k0 && ip nexthop add id 5 via 2001:db8:2::3 dev k1");
  MustSh("ip nexthop add id 10 group 1/2 && ip nexthop add id 11 group 4/5 && ip nexthop add id 12 group 4");
  MustSh("ip nexthop add id 13 group 1/2 type resilient buckets 8");
  // Covers for every route by object (not through an object: they stay).
  MustSh("ip route add 198.51.0.0/16 via 10.0.0.9 dev k0 && ip -6 route add 2001:db8::/32 via 2001:db8:1::3 dev k0");
  MustSh("ip route add 198.51.100.0/24 nhid 1 && ip route add 198.51.101.0/24 nhid 10");
  MustSh("ip -6 route add 2001:db8:a::/48 nhid 4");
  StartSource({}, kPorts);  // the rest arrive as events
  MustSh("ip route add 198.51.102.0/24 nhid 20 && ip route add 198.51.103.0/24 nhid 3");
  MustSh("ip route add 198.51.104.0/24 nhid 13 && ip route add 198.51.105.0/24 nhid 5");  // IPv4 via an IPv6 object
  MustSh("ip -6 route add 2001:db8:b::/48 nhid 11 && ip -6 route add 2001:db8:c::/48 nhid 12");
  const std::vector<std::string> addrs{"198.51.100.1", "198.51.101.1", "198.51.102.1", "198.51.103.1",
                                       "198.51.104.1", "198.51.105.1", "198.51.200.1", "2001:db8:a::1",
                                       "2001:db8:b::1", "2001:db8:c::1", "2001:db8:f::1"};
  const std::set<std::string> resilient{"198.51.104.1"};  // punts
  EXPECT_EQ(Agrees(addrs, resilient), 9);
  EXPECT_EQ(DeviceAnswer("198.51.101.1"), (std::vector<NextHop>{{A("10.0.0.9"), 0}, {A("10.1.0.2"), 1}}));
  EXPECT_EQ(DeviceAnswer("198.51.104.1"), std::vector<NextHop>{NextHop::ToHost()});

  // Replaced objects change every route using them, directly or through a group.
  MustSh("ip nexthop replace id 1 via 10.0.0.8 dev k0 && ip nexthop replace id 10 group 1/3");
  MustSh("ip nexthop replace id 4 via 2001:db8:1::4 dev k0");
  EXPECT_EQ(Agrees(addrs, resilient), 9);
  EXPECT_EQ(DeviceAnswer("198.51.101.1"), (std::vector<NextHop>{{std::nullopt, 0}, {A("10.0.0.8"), 0}}));

  // k1 down: 2 and 5 go without a message, 11 keeps 4, 198.51.105.0/24 (by
  // 5) goes silently; its traffic takes the /16.
  MustSh("ip link set k1 down");
  EXPECT_EQ(Agrees(addrs, resilient), 9);
  EXPECT_FALSE(PathsOf("198.51.105.0/24").has_value());
  EXPECT_EQ(DeviceAnswer("198.51.105.1"), (std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  EXPECT_EQ(DeviceAnswer("2001:db8:b::1"), (std::vector<NextHop>{{A("2001:db8:1::4"), 0}}));
  MustSh("ip link set k1 up && ip -6 addr replace 2001:db8:2::1/64 dev k1 nodad");
  WaitCarrier("k1");
  Neighbours();
  MustSh("ip nexthop add id 2 via 10.1.0.2 dev k1 && ip nexthop replace id 10 group 1/2");
  EXPECT_EQ(Agrees(addrs, resilient), 9);

  // Deleting 4 removes 11 and 12 (4 was their only member) and every route
  // by them, announced or not depending on nexthop_compat_mode: the /32
  // covering them takes their traffic.
  MustSh("ip nexthop del id 4");
  EXPECT_EQ(Agrees(addrs, resilient), 9);
  for (const char* p : {"2001:db8:a::/48", "2001:db8:b::/48", "2001:db8:c::/48"}) EXPECT_FALSE(PathsOf(p)) << p;

  // k0 loses its carrier: every object through k0 goes, 10 keeps 2, the
  // resilient group loses its last member and goes with its route. Routes
  // through k0 without carrier punt (the kernel uses them only to drop).
  MustSh("ip netns exec " + peer_ns + " ip link set k0p down");
  const std::set<std::string> all(addrs.begin(), addrs.end());
  EXPECT_EQ(Agrees(addrs, all), 1);
  EXPECT_EQ(DeviceAnswer("198.51.101.1"), (std::vector<NextHop>{{A("10.1.0.2"), 1}}));
  for (const char* p : {"198.51.100.0/24", "198.51.103.0/24", "198.51.104.0/24"}) {
    EXPECT_FALSE(PathsOf(p)) << p;
    EXPECT_EQ(Sh(std::string("ip route show ") + p), "") << p;  // the kernel dropped it too
  }
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

TEST_F(KernelNexthopTest, RoutesByObjectForwardAsTheKernelDoesCompatMode1) { Scenario(1); }
TEST_F(KernelNexthopTest, RoutesByObjectForwardAsTheKernelDoesCompatMode0) { Scenario(0); }

// An overrun re-dumps the objects before the routes: a route by an object
// made while events were lost forwards by it; one swept punts until known.
TEST_F(KernelNexthopTest, ObjectsAreReDumpedBeforeTheRoutesUsingThem) {
  StartSource({}, kPorts);
  ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 10s));
  WaitCarrier("k0");
  MustSh("ip nexthop add id 7 via 10.0.0.9 dev k0 && ip route add 198.51.110.0/24 nhid 7");
  ASSERT_TRUE(RouteIs("198.51.110.0/24", std::vector<NextHop>{{A("10.0.0.9"), 0}}));
  const uint64_t resyncs = Stats().resyncs;
  WhileHeld([&] {
    MustSh("ip nexthop replace id 7 via 10.0.0.7 dev k0");
    boost::asio::post(io, [this] { source->RequestResync(); });
  });
  EXPECT_TRUE(RouteIs("198.51.110.0/24", std::vector<NextHop>{{A("10.0.0.7"), 0}}));
  EXPECT_TRUE(WaitFor([&] { return Stats().resyncs > resyncs && !Stats().dumping; }, 10s));
  EXPECT_EQ(Stats().nexthop_objects, 1u);
  EXPECT_EQ(Agrees({"198.51.110.1"}), 1);
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

}  // namespace
}  // namespace fibnic::testing
