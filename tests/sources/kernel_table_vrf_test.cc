// VRF safety: the FIBNIC has one FIB. The kernel table follows
// main while no FIBNIC port is enslaved to a VRF, the VRF's table when every
// port is in that one VRF (and it is configured), and punts everything when
// the ports are split or the VRF's table is not followed — never main's
// routes for a VRF's traffic. Fed with link and route messages as the kernel
// sends them (this machine's kernel may lack VRF; the kernel harness checks
// the real thing in a virtual machine: kdiff_kernel_vrf_vm, tests/vm).
#include "sources/kernel/kernel_table.h"

#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
#include <netlink/route/link/vrf.h>

#include <cstring>
#include <memory>

#include "sources/netlink/netlink_build.h"
#include "tests/sources/kernel_messages.h"
#include "tests/sources/recording_sink.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic {
namespace {

using testing::LinkMessage;
using testing::RouteVia;
constexpr uint32_t kK0 = 10, kK1 = 11, kVrf = 20;

class KernelTableVrf : public ::testing::Test {
 protected:
  void Make(std::vector<uint32_t> tables) {
    KernelTableOptions o;
    o.tables = std::move(tables);
    table = std::make_unique<KernelTable>(sink, PortNames{{"k0", 0}, {"k1", 1}}, o, nullptr);
  }
  void Feed(const std::vector<uint8_t>& m) {
    ASSERT_TRUE(table->Apply(testing::Header(testing::Aligned(m))).ok());
  }
  void Links(uint32_t k0_master, uint32_t k1_master) {
    Feed(LinkMessage(kK0, "k0", k0_master, std::nullopt));
    Feed(LinkMessage(kK1, "k1", k1_master, std::nullopt));
  }
  std::optional<std::vector<NextHop>> PathsOf(const char* p) { return sink.PathsOf(*Prefix::Parse(p)); }
  testing::RecordingSink sink;
  std::unique_ptr<KernelTable> table;
};

const std::vector<NextHop> kPunt{NextHop::ToHost()};

TEST_F(KernelTableVrf, FollowsMainTheVrfOfAllPortsAndRefusesWhenSplit) {
  Make({255, 254, 10});
  Feed(LinkMessage(kVrf, "blue", 0, 10));
  Links(0, 0);
  Feed(RouteVia("198.51.100.0/24", 254, "10.0.0.2", kK0));
  Feed(RouteVia("198.51.100.0/24", 10, "10.0.0.3", kK0));
  Feed(RouteVia("203.0.113.0/24", 10, "10.1.0.3", kK1));
  // No port in a VRF: main, and not the VRF's table.
  EXPECT_EQ(PathsOf("198.51.100.0/24"), (std::vector<NextHop>{{IpAddr::Parse("10.0.0.2").value(), 0}}));
  EXPECT_EQ(PathsOf("203.0.113.0/24"), std::nullopt);
  EXPECT_EQ(table->counts().refusing, "");
  // Both enslaved: the VRF's table, not main's.
  Links(kVrf, kVrf);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), (std::vector<NextHop>{{IpAddr::Parse("10.0.0.3").value(), 0}}));
  EXPECT_EQ(PathsOf("203.0.113.0/24"), (std::vector<NextHop>{{IpAddr::Parse("10.1.0.3").value(), 1}}));
  // k1 released: split — everything punts, and says why.
  Links(kVrf, 0);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), kPunt);
  EXPECT_EQ(PathsOf("203.0.113.0/24"), kPunt);
  EXPECT_NE(table->counts().refusing.find("split"), std::string::npos) << table->counts().refusing;
  // Both released: main again.
  Links(0, 0);
  EXPECT_EQ(PathsOf("198.51.100.0/24"), (std::vector<NextHop>{{IpAddr::Parse("10.0.0.2").value(), 0}}));
  EXPECT_EQ(PathsOf("203.0.113.0/24"), std::nullopt);
  EXPECT_EQ(table->counts().refusing, "");
}

TEST_F(KernelTableVrf, PortsInAVrfWhoseTableIsNotFollowedPunt) {
  Make({255, 254});
  Feed(LinkMessage(kVrf, "blue", 0, 10));
  Links(kVrf, kVrf);
  Feed(RouteVia("198.51.100.0/24", 254, "10.0.0.2", kK0));
  EXPECT_EQ(PathsOf("198.51.100.0/24"), kPunt);
  EXPECT_NE(table->counts().refusing.find("table 10"), std::string::npos) << table->counts().refusing;
}

TEST_F(KernelTableVrf, PortEnslavedToAnUnknownMasterPunts) {
  Make({255, 254, 10});
  Links(kVrf, kVrf);  // the VRF's own link message has not come yet
  Feed(RouteVia("198.51.100.0/24", 254, "10.0.0.2", kK0));
  EXPECT_EQ(PathsOf("198.51.100.0/24"), kPunt);
  Feed(LinkMessage(kVrf, "blue", 0, 10));
  EXPECT_EQ(PathsOf("198.51.100.0/24"), std::nullopt);  // main's route is not the ports' table
  EXPECT_EQ(table->counts().refusing, "");
  Feed(RouteVia("198.51.100.0/24", 10, "10.0.0.3", kK0));
  EXPECT_EQ(PathsOf("198.51.100.0/24"), (std::vector<NextHop>{{IpAddr::Parse("10.0.0.3").value(), 0}}));
}

// A refused table punts every prefix: the record of what each was given is
// in its word, not an entry apart per prefix (a full table once took ~100
// MB more while refused). A route changed while refused still punts, and
// the table comes back whole.
TEST_F(KernelTableVrf, RefusingATableCostsNoEntryPerPrefix) {
  Make({255, 254, 10});
  Feed(LinkMessage(kVrf, "blue", 0, 10));
  Links(kVrf, kVrf);
  constexpr int kRoutes = 4000;
  auto prefix = [](int i) { return "10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".0/24"; };
  for (int i = 0; i < kRoutes; ++i) Feed(RouteVia(prefix(i).c_str(), 10, "10.200.0.2", i % 2 ? kK1 : kK0));
  const size_t following = table->route_memory();
  Links(kVrf, 0);  // split: everything punts
  ASSERT_NE(table->counts().refusing, "");
  for (int i = 0; i < kRoutes; ++i) ASSERT_EQ(PathsOf(prefix(i).c_str()), kPunt) << prefix(i);
  Feed(RouteVia(prefix(7).c_str(), 10, "10.200.0.3", kK0));
  EXPECT_EQ(PathsOf(prefix(7).c_str()), kPunt);
  EXPECT_LE(table->route_memory(), following + kRoutes) << "an entry per punted prefix";
  Links(kVrf, kVrf);
  EXPECT_EQ(table->counts().refusing, "");
  EXPECT_EQ(PathsOf(prefix(7).c_str()), (std::vector<NextHop>{{IpAddr::Parse("10.200.0.3").value(), 0}}));
  EXPECT_EQ(PathsOf(prefix(8).c_str()), (std::vector<NextHop>{{IpAddr::Parse("10.200.0.2").value(), 0}}));
  EXPECT_EQ(PathsOf(prefix(9).c_str()), (std::vector<NextHop>{{IpAddr::Parse("10.200.0.2").value(), 1}}));
}

}  // namespace
}  // namespace fibnic
