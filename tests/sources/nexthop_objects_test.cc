// NexthopObjects: the kernel's next-hop objects and groups, resolved for the
// routes naming them, and removed by the kernel's rules (net/ipv4/nexthop.c,
// as `ip monitor` shows them on 6.18: docs/sources.md). The expected values
// are those rules applied by hand to small object sets.
#include "sources/netlink/nexthop_objects.h"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <algorithm>

namespace fibnic {
namespace {

NlNexthop Single(uint32_t id, const std::string& gw, uint32_t ifindex) {
  NlNexthop n;
  n.id = id;
  n.path.gateway = *IpAddr::Parse(gw);
  n.path.ifindex = ifindex;
  return n;
}

NlNexthop Group(uint32_t id, std::vector<NlGroupMember> members) {
  NlNexthop n;
  n.id = id;
  n.group = std::move(members);
  return n;
}

std::vector<uint32_t> Ids(const std::vector<NlNexthop>& v) {
  std::vector<uint32_t> out;
  for (const auto& n : v) out.push_back(n.id);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<uint32_t> Sorted(std::vector<uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(NexthopObjects, GroupsResolveToTheirMembersWithWeights) {
  NexthopObjects o;
  o.Put(Single(1, "10.0.0.9", 7));
  o.Put(Single(2, "10.1.0.2", 8));
  o.Put(Group(10, {{1, 1}, {2, 3}}));
  const auto r = o.Resolve(10);
  EXPECT_EQ(r.type, RTN_UNICAST);
  EXPECT_TRUE(r.unsupported.empty());
  ASSERT_EQ(r.paths.size(), 2u);
  EXPECT_EQ(r.paths[0].gateway, *IpAddr::Parse("10.0.0.9"));
  EXPECT_EQ(r.paths[0].ifindex, 7u);
  EXPECT_EQ(r.paths[1].weight, 3);
  // Replacing a member changes the group: both are reported.
  EXPECT_EQ(Sorted(o.Put(Single(1, "10.0.0.8", 7))), (std::vector<uint32_t>{1, 10}));
  EXPECT_EQ(o.Resolve(10).paths[0].gateway, *IpAddr::Parse("10.0.0.8"));
}

TEST(NexthopObjects, UnknownBlackholeAndUnsupportedPunt) {
  NexthopObjects o;
  EXPECT_FALSE(o.Resolve(5).unsupported.empty());  // unknown
  NlNexthop bh;
  bh.id = 20;
  bh.blackhole = true;
  o.Put(bh);
  EXPECT_EQ(o.Resolve(20).type, RTN_BLACKHOLE);
  o.Put(Group(21, {{20, 1}}));
  EXPECT_EQ(o.Resolve(21).type, RTN_BLACKHOLE);
  o.Put(Group(22, {{20, 1}, {6, 1}}));  // a member not (yet) known
  EXPECT_FALSE(o.Resolve(22).unsupported.empty());
  o.Put(Single(1, "10.0.0.9", 7));
  NlNexthop res = Group(23, {{1, 1}});
  res.unsupported = "resilient next-hop group";
  o.Put(res);
  EXPECT_EQ(o.Resolve(23).unsupported, "resilient next-hop group");
  // A member arriving later changes the group waiting for it.
  EXPECT_EQ(Sorted(o.Put(Single(6, "10.0.0.6", 7))), (std::vector<uint32_t>{6, 22}));
}

// `ip link set k0 down` (or no carrier, or deleted): the objects through k0
// go, groups lose them, a group left empty goes; blackholes stay. No message.
TEST(NexthopObjects, LinkDownRemovesObjectsThroughItAndEmptiedGroups) {
  NexthopObjects o;
  o.Put(Single(1, "10.0.0.9", 7));
  o.Put(Single(2, "10.1.0.2", 8));
  o.Put(Single(4, "2001:db8::2", 7));
  o.Put(Group(10, {{1, 1}, {2, 1}}));
  o.Put(Group(11, {{4, 1}}));
  o.Put(Group(12, {{1, 1}, {4, 1}}));
  NlNexthop bh;
  bh.id = 20;
  bh.blackhole = true;
  o.Put(bh);
  const auto c = o.RemoveVia(7);
  EXPECT_EQ(Ids(c.removed), (std::vector<uint32_t>{1, 4, 11, 12}));
  EXPECT_EQ(c.changed, (std::vector<uint32_t>{10}));
  ASSERT_NE(o.Find(10), nullptr);
  EXPECT_EQ(o.Find(10)->group, (std::vector<NlGroupMember>{{2, 1}}));
  EXPECT_NE(o.Find(20), nullptr);
  EXPECT_EQ(o.size(), 3u);  // 2, 10, 20
  EXPECT_TRUE(o.RemoveVia(7).removed.empty());
  // A later member 1 is not a member of 10 again (the kernel forgot it).
  EXPECT_EQ(o.Put(Single(1, "10.0.0.9", 7)), (std::vector<uint32_t>{1}));
}

TEST(NexthopObjects, DeletingAMemberShrinksItsGroupsAndSweepHasNoCascade) {
  NexthopObjects o;
  o.Put(Single(1, "10.0.0.9", 7), 1);
  o.Put(Single(2, "10.1.0.2", 8), 1);
  o.Put(Group(10, {{1, 1}, {2, 1}}), 1);
  o.Put(Group(11, {{2, 1}}), 1);
  auto c = o.Remove(2);
  EXPECT_EQ(Ids(c.removed), (std::vector<uint32_t>{2, 11}));
  EXPECT_EQ(c.changed, (std::vector<uint32_t>{10}));
  EXPECT_TRUE(o.Remove(2).removed.empty());
  // A re-dump (gen 2) brought only 1 and 10: nothing else goes with a swept one.
  o.Put(Single(1, "10.0.0.9", 7), 2);
  EXPECT_EQ(Ids(o.Sweep(2)), (std::vector<uint32_t>{10}));
  EXPECT_NE(o.Find(1), nullptr);
  EXPECT_EQ(o.GroupsHolding(1), nullptr);
}

}  // namespace
}  // namespace fibnic
