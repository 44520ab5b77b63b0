// An IPv6 route the kernel holds twice (a replace made the copy; the
// kernel refuses to add one): a dump lists each copy, a delete takes one.
// The kernel's own behaviour is checked in kernel_v6_replace_test.cc
// (KernelV6DuplicateTest); here, without a kernel, the re-dump cases it
// cannot set up on demand: a copy the dump hides beside a multipath route,
// and a re-dump that lists fewer copies than the table held.
#include <gtest/gtest.h>

#include <linux/rtnetlink.h>

#include <string>
#include <utility>

#include "sources/kernel/kernel_table.h"
#include "tests/sources/kernel_messages.h"
#include "tests/sources/recording_sink.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic {
namespace {

constexpr uint32_t kK0 = 10;
const char* const kP = "2001:db8:90::/48";

class Table {
 public:
  Table() : table(sink, PortNames{{"k0", 0}}, KernelTableOptions{}, nullptr) {
    Feed(testing::LinkMessage(kK0, "k0", 0, std::nullopt), 0);
  }
  void Feed(const std::vector<uint8_t>& m, uint16_t flags) {
    auto aligned = testing::Aligned(m);
    testing::Header(aligned)->nlmsg_flags = flags;
    ASSERT_TRUE(table.Apply(testing::Header(std::as_const(aligned))).ok());
  }
  static NlRoute Route(uint8_t type, std::vector<NlPath> paths, bool del = false) {
    NlRoute r;
    r.del = del;
    r.prefix = *Prefix::Parse(kP);
    r.table = RT_TABLE_MAIN;
    r.protocol = RTPROT_BOOT;
    r.type = type;
    r.priority = 20;
    r.paths = std::move(paths);
    return r;
  }
  static NlRoute Unreachable(bool del = false) { return Route(RTN_UNREACHABLE, {NlPath{std::nullopt, 1}}, del); }
  static NlRoute Multipath() {
    return Route(RTN_UNICAST, {NlPath{*IpAddr::Parse("2001:db8::2"), kK0}, NlPath{*IpAddr::Parse("2001:db8::3"), kK0}});
  }
  // A dump listing k0 and `listed`, the sweep after it.
  void Dump(const std::vector<NlRoute>& listed) {
    table.BeginResync();
    Feed(testing::LinkMessage(kK0, "k0", 0, std::nullopt), NLM_F_MULTI);
    for (const NlRoute& r : listed) Feed(BuildRouteMessage(r), NLM_F_MULTI);
    table.EndResync();
  }
  void Delete(const NlRoute& r) {
    NlRoute d = r;
    d.del = true;
    Feed(BuildRouteMessage(d), 0);
  }
  std::optional<std::vector<NextHop>> Paths() const { return sink.PathsOf(*Prefix::Parse(kP)); }
  testing::RecordingSink sink;
  KernelTable table;
};

const std::vector<NextHop> kHost{NextHop::ToHost()};

TEST(KernelTableCopies, ARouteADumpListsTwiceGoesWithItsSecondDelete) {
  Table t;
  t.Dump({Table::Unreachable(), Table::Unreachable()});
  EXPECT_EQ(t.Paths(), kHost);
  t.Delete(Table::Unreachable());
  EXPECT_EQ(t.Paths(), kHost) << "the kernel still holds one copy";
  t.Delete(Table::Unreachable());
  EXPECT_EQ(t.Paths(), std::nullopt);
}

TEST(KernelTableCopies, AReDumpListingOneCopyLeavesOne) {
  Table t;
  t.Dump({Table::Unreachable(), Table::Unreachable()});
  t.Dump({Table::Unreachable()});
  t.Delete(Table::Unreachable());
  EXPECT_EQ(t.Paths(), std::nullopt) << "a copy the kernel no longer listed was kept";
}

// The kernel's dump lists a multipath route at its first sibling and goes
// on after its last: a copy between the siblings is never listed.
TEST(KernelTableCopies, ACopyTheDumpMayHideBesideAMultipathRouteIsKept) {
  Table t;
  t.Dump({Table::Unreachable(), Table::Unreachable()});
  t.Dump({Table::Unreachable(), Table::Multipath()});
  EXPECT_EQ(t.Paths(), kHost);
  t.Delete(Table::Multipath());
  t.Delete(Table::Unreachable());
  EXPECT_EQ(t.Paths(), kHost) << "the copy the dump could not list was dropped";
}

TEST(KernelTableCopies, ADeviceRouteListedTwiceIsTwoRoutes) {
  Table t;
  const NlRoute dev = Table::Route(RTN_UNICAST, {NlPath{std::nullopt, kK0}});
  t.Dump({dev, dev});
  EXPECT_EQ(t.Paths(), kHost) << "two routes of one metric: the kernel picks";
  t.Delete(dev);
  EXPECT_EQ(t.Paths(), (std::vector<NextHop>{{std::nullopt, 0}}));
  t.Delete(dev);
  EXPECT_EQ(t.Paths(), std::nullopt);
}

}  // namespace
}  // namespace fibnic
