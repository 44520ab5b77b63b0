#include "sources/netlink/netlink_route.h"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "sources/netlink/netlink_paths.h"
#include "tests/sources/test_util.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic {
namespace {

using testing::A;
using testing::InlineRoute;
using testing::P;
using testing::Via;

StatusOr<NlMessage> Parse(const std::vector<uint8_t>& b) {
  const auto aligned = testing::Aligned(b);
  return ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(aligned.data()), b.size());
}

TEST(NetlinkRoute, RoundTripsSingleAndMultipath) {
  for (const auto& r : {InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}),
                        InlineRoute("2001:db8::/32", {Via("fe80::1", 10), Via("fe80::2", 11)}),
                        InlineRoute("0.0.0.0/0", {Via("192.0.2.1", 10), Via("192.0.2.2", 11), Via("192.0.2.3", 30)}),
                        InlineRoute("10.9.0.0/24", {}, /*del=*/true)}) {
    auto m = Parse(BuildRouteMessage(r));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ASSERT_EQ(m->kind, NlMessage::Kind::kRoute);
    EXPECT_EQ(m->route.prefix, r.prefix);
    EXPECT_EQ(m->route.del, r.del);
    EXPECT_EQ(m->route.table, RT_TABLE_MAIN);
    EXPECT_EQ(m->route.protocol, RTPROT_BGP);
    EXPECT_EQ(m->route.paths, r.paths);
  }
}

TEST(NetlinkRoute, NexthopObjectsAndGroups) {
  NlNexthop single;
  single.id = 7;
  single.path = Via("192.0.2.9", 11);
  auto m = Parse(BuildNexthopMessage(single));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->kind, NlMessage::Kind::kNexthop);
  EXPECT_EQ(m->nexthop.id, 7u);
  EXPECT_EQ(m->nexthop.path, single.path);

  NlNexthop group;
  group.id = 8;
  group.group = {{7, 1}, {9, 3}};
  m = Parse(BuildNexthopMessage(group));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->nexthop.group, group.group);

  NlNexthop bh;
  bh.id = 10;
  bh.blackhole = true;
  m = Parse(BuildNexthopMessage(bh));
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(m->nexthop.blackhole);
}

TEST(NetlinkRoute, RejectsMalformedNamingTheOffset) {
  auto bytes = BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  // Make RTA_DST (first attribute, right after nlmsghdr + rtmsg = 28) claim 200 bytes.
  bytes[28] = 200;
  auto m = Parse(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("at byte 28"), std::string::npos) << m.status().message();

  // Header length disagreeing with the buffer.
  bytes = BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  bytes.resize(bytes.size() - 4);
  EXPECT_FALSE(Parse(bytes).ok());

  // Prefix length 33 for IPv4.
  bytes = BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  bytes[16 + 1] = 33;
  m = Parse(bytes);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("prefix length 33"), std::string::npos);
}

TEST(NetlinkRoute, ForEachMessageNamesBadOffset) {
  auto a = BuildRouteMessage(InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)}));
  auto buf = testing::Concat({a, a});
  buf.resize(buf.size() - 2);
  std::vector<uint32_t> aligned((buf.size() + 3) / 4);
  std::memcpy(aligned.data(), buf.data(), buf.size());
  int seen = 0;
  Status st = ForEachNetlinkMessage(reinterpret_cast<const uint8_t*>(aligned.data()), buf.size(),
                                    [&](const nlmsghdr*, size_t) { ++seen; return OkStatus(); });
  EXPECT_EQ(seen, 1);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("at byte " + std::to_string(a.size())), std::string::npos) << st.message();
}

TEST(FibPaths, PuntsWhatTheFibnicMustNotForward) {
  const auto ports = testing::TestPorts();
  auto ok = FibPaths(RTN_UNICAST, Family::kV4, {Via("192.0.2.2", 11), Via("192.0.2.1", 10)}, "", ports);
  ASSERT_EQ(ok.paths.size(), 2u);
  EXPECT_EQ(ok.paths[0], (NextHop{A("192.0.2.1"), 0}));
  EXPECT_EQ(ok.paths[1], (NextHop{A("192.0.2.2"), 1}));
  EXPECT_TRUE(ok.punt_why.empty());

  NlPath connected;
  connected.ifindex = 12;
  auto c = FibPaths(RTN_UNICAST, Family::kV4, {connected}, "", ports);
  ASSERT_EQ(c.paths.size(), 1u);
  EXPECT_EQ(c.paths[0], (NextHop{std::nullopt, 2}));

  const std::vector<NextHop> host{NextHop::ToHost()};
  for (uint8_t t : {RTN_LOCAL, RTN_UNREACHABLE, RTN_PROHIBIT, RTN_BROADCAST, RTN_THROW}) {
    EXPECT_EQ(FibPaths(t, Family::kV4, {Via("192.0.2.1", 10)}, "", ports).paths, host) << int(t);
  }
  // A blackhole discards silently (no ICMP for the host to send): a drop.
  for (Family f : {Family::kV4, Family::kV6}) {
    const auto b = FibPaths(RTN_BLACKHOLE, f, {}, "", ports);
    EXPECT_EQ(b.paths, std::vector<NextHop>{NextHop::Drop()});
    EXPECT_TRUE(b.punt_why.empty());
  }
  // Not a FIBNIC port, alone or as one path of several.
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {Via("192.0.2.1", 3)}, "", ports).paths, host);
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {Via("192.0.2.1", 10), Via("192.0.2.9", 3)}, "", ports).paths, host);
  // Encapsulation, no path, an IPv6 route via an IPv4 gateway. (An IPv4
  // route via an IPv6 next-hop, RFC 5549, is forwarded.)
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {Via("192.0.2.1", 10)}, "encap", ports).paths, host);
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {}, "", ports).paths, host);
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV6, {Via("192.0.2.1", 10)}, "", ports).paths, host);
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {Via("fe80::1", 10)}, "", ports).paths,
            (std::vector<NextHop>{{A("fe80::1"), 0}}));
  // A dead path is skipped; all dead punts.
  NlPath dead = Via("192.0.2.7", 11);
  dead.flags = RTNH_F_DEAD;
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {Via("192.0.2.1", 10), dead}, "", ports).paths,
            (std::vector<NextHop>{{A("192.0.2.1"), 0}}));
  EXPECT_EQ(FibPaths(RTN_UNICAST, Family::kV4, {dead}, "", ports).paths, host);
}

}  // namespace
}  // namespace fibnic
