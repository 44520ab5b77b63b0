// Adjacencies on the kernel table alone (no root; also under ASan): a neighbour
// is an address on an interface. 169.254.0.1 and fe80::1 on k0 and k1 are four
// neighbours; deleting 169.254.0.1 on k1 leaves k0's, whose updates still
// reach the RIB; an IPv4 route via inet6 fe80::1 (RTA_VIA) and via
// 169.254.0.1 onlink reach it as next-hops on their port. Fed with messages
// as the kernel sends them.
#include <gtest/gtest.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <sys/socket.h>

#include <cstring>
#include <memory>

#include "sources/kernel/kernel_table.h"
#include "sources/netlink/netlink_build.h"
#include "tests/sources/kernel_messages.h"
#include "tests/sources/recording_sink.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic {
namespace {

constexpr uint32_t kK0 = 10, kK1 = 11;

std::vector<uint8_t> Bytes(nl_msg* m, uint16_t type) {
  nlmsghdr* h = nlmsg_hdr(m);
  h->nlmsg_type = type;
  const auto* b = reinterpret_cast<const uint8_t*>(h);
  std::vector<uint8_t> out(b, b + h->nlmsg_len);
  nlmsg_free(m);
  return out;
}

std::vector<uint8_t> LinkMessage(uint32_t ifindex, const char* name) {
  return testing::LinkMessage(ifindex, name, 0, std::nullopt);
}

std::vector<uint8_t> NeighMessage(bool add, const char* addr, const char* mac, uint32_t ifindex) {
  rtnl_neigh* n = rtnl_neigh_alloc();
  const IpAddr a = *IpAddr::Parse(addr);
  const auto bytes = a.bytes();
  nl_addr* dst = nl_addr_build(a.is_v4() ? AF_INET : AF_INET6, bytes.data(), a.is_v4() ? 4 : 16);
  const MacAddr m = *MacAddr::Parse(mac);
  nl_addr* ll = nl_addr_build(AF_LLC, m.b.data(), 6);
  rtnl_neigh_set_dst(n, dst);
  rtnl_neigh_set_lladdr(n, ll);
  rtnl_neigh_set_ifindex(n, static_cast<int>(ifindex));
  rtnl_neigh_set_state(n, NUD_PERMANENT);
  nl_msg* msg = nullptr;
  EXPECT_EQ(add ? rtnl_neigh_build_add_request(n, NLM_F_CREATE, &msg) : rtnl_neigh_build_delete_request(n, 0, &msg), 0);
  nl_addr_put(dst);
  nl_addr_put(ll);
  rtnl_neigh_put(n);
  return Bytes(msg, add ? RTM_NEWNEIGH : RTM_DELNEIGH);
}

class KernelTableNeigh : public ::testing::Test {
 protected:
  void SetUp() override {
    table = std::make_unique<KernelTable>(sink, PortNames{{"k0", 0}, {"k1", 1}}, KernelTableOptions{}, nullptr);
    Feed(LinkMessage(kK0, "k0"));
    Feed(LinkMessage(kK1, "k1"));
  }
  void Feed(const std::vector<uint8_t>& m) {
    const Status st = table->Apply(testing::Header(testing::Aligned(m)));
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  std::optional<std::string> MacOn(const char* addr, PortId port) {
    auto n = sink.neighbors_on_ports();
    auto it = n.find({*IpAddr::Parse(addr), port});
    if (it == n.end()) return std::nullopt;
    return it->second.mac.ToString();
  }
  std::optional<std::vector<NextHop>> PathsOf(const char* p) { return sink.PathsOf(*Prefix::Parse(p)); }
  testing::RecordingSink sink;
  std::unique_ptr<KernelTable> table;
};

TEST_F(KernelTableNeigh, OneLinkLocalAddressOnTwoPortsIsTwoNeighbours) {
  Feed(NeighMessage(true, "169.254.0.1", "02:00:00:00:00:0a", kK0));
  Feed(NeighMessage(true, "169.254.0.1", "02:00:00:00:00:0b", kK1));
  Feed(NeighMessage(true, "fe80::1", "02:00:00:00:00:0a", kK0));
  Feed(NeighMessage(true, "fe80::1", "02:00:00:00:00:0b", kK1));
  EXPECT_EQ(MacOn("169.254.0.1", 0), "02:00:00:00:00:0a");
  EXPECT_EQ(MacOn("169.254.0.1", 1), "02:00:00:00:00:0b");
  EXPECT_EQ(MacOn("fe80::1", 0), "02:00:00:00:00:0a");
  EXPECT_EQ(MacOn("fe80::1", 1), "02:00:00:00:00:0b");
  EXPECT_EQ(table->neighbors(), 4u);

  Feed(NeighMessage(false, "169.254.0.1", "02:00:00:00:00:0b", kK1));
  EXPECT_EQ(MacOn("169.254.0.1", 1), std::nullopt);
  EXPECT_EQ(MacOn("169.254.0.1", 0), "02:00:00:00:00:0a");  // k0's stays ...
  Feed(NeighMessage(true, "169.254.0.1", "02:00:00:00:00:0c", kK0));
  EXPECT_EQ(MacOn("169.254.0.1", 0), "02:00:00:00:00:0c");  // ... and still updates
  EXPECT_EQ(MacOn("fe80::1", 1), "02:00:00:00:00:0b");
  // A resync sweep that still sees k0's keeps it and drops nothing else.
  table->BeginResync();
  Feed(LinkMessage(kK0, "k0"));
  Feed(LinkMessage(kK1, "k1"));
  Feed(NeighMessage(true, "169.254.0.1", "02:00:00:00:00:0c", kK0));
  Feed(NeighMessage(true, "fe80::1", "02:00:00:00:00:0a", kK0));
  table->EndResync();
  EXPECT_EQ(MacOn("169.254.0.1", 0), "02:00:00:00:00:0c");
  EXPECT_EQ(MacOn("fe80::1", 0), "02:00:00:00:00:0a");
  EXPECT_EQ(MacOn("fe80::1", 1), std::nullopt);  // not in the dump: swept, on its port only
}

TEST_F(KernelTableNeigh, Ipv4RoutesViaInet6AndOnlinkAreNextHopsOnTheirPort) {
  NlRoute via6;
  via6.prefix = *Prefix::Parse("10.72.0.0/16");
  via6.table = RT_TABLE_MAIN;
  via6.protocol = RTPROT_BOOT;
  via6.type = RTN_UNICAST;
  via6.paths = {NlPath{*IpAddr::Parse("fe80::1"), kK0}, NlPath{*IpAddr::Parse("fe80::1"), kK1}};
  Feed(BuildRouteMessage(via6));  // RTA_MULTIPATH of RTA_VIA
  NlRoute onlink = via6;
  onlink.prefix = *Prefix::Parse("10.70.0.0/16");
  onlink.paths = {NlPath{*IpAddr::Parse("169.254.0.1"), kK1, RTNH_F_ONLINK}};
  Feed(BuildRouteMessage(onlink));
  EXPECT_EQ(PathsOf("10.72.0.0/16"),
            (std::vector<NextHop>{{*IpAddr::Parse("fe80::1"), 0}, {*IpAddr::Parse("fe80::1"), 1}}));
  EXPECT_EQ(PathsOf("10.70.0.0/16"), (std::vector<NextHop>{{*IpAddr::Parse("169.254.0.1"), 1}}));
}

}  // namespace
}  // namespace fibnic
