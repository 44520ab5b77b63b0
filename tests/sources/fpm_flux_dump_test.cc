// Routes in flux across a re-dump of the kernel (sources/fpm/fpm_flux.h):
// the kernel source's socket overran, the events of some of zebra's kernel
// deletions were lost, and the re-dump is all that tells of them. The
// kernel table and the FPM table wired as fibnicd wires them; "lost" events
// are simply not fed.
#include <linux/rtnetlink.h>

#include <cstring>

#include <gtest/gtest.h>

#include "sources/fpm/fpm_table.h"
#include "sources/kernel/kernel_table.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using testing::A;
using testing::InlineRoute;
using testing::P;
using testing::RecordingSink;
using testing::Via;

class FpmFluxDumpTest : public ::testing::Test {
 protected:
  FpmFluxDumpTest() {
    o.ignore_protocols = FrrRouteProtocols();
    o.ignored_route = [this](const KernelRouteView& v) { fpm.KernelRoute(v); };
    o.ignored_dump_begins = [this] { fpm.KernelDumpBegins(); };
    o.ignored_dump_ends = [this](bool complete) { fpm.KernelDumpEnds(complete); };
    kernel = std::make_unique<KernelTable>(kernel_sink, PortNames{{"k0", 0}}, o, nullptr);
  }
  void Fpm(const NlRoute& r) {
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(fpm.ApplyFrame(m.data(), m.size()).ok());
  }
  // zebra's DEL + NEW of one route in one frame (how it sends a change).
  void FpmReplace(const NlRoute& r) {
    NlRoute del = r;
    del.del = true;
    del.paths.clear();
    const auto m = testing::Concat({BuildRouteMessage(del), BuildRouteMessage(r)});
    ASSERT_TRUE(fpm.ApplyFrame(m.data(), m.size()).ok());
  }
  // A route message from the kernel: an event, or one of a dump (NLM_F_MULTI).
  void Kernel(const NlRoute& r, bool dump = false) {
    const auto m = BuildRouteMessage(r);
    std::vector<uint32_t> aligned((m.size() + 3) / 4);
    std::memcpy(aligned.data(), m.data(), m.size());
    auto* h = reinterpret_cast<nlmsghdr*>(aligned.data());
    if (dump) h->nlmsg_flags |= NLM_F_MULTI;
    ASSERT_TRUE(kernel->Apply(h).ok());
  }
  // Both streams agree on r (zebra installed it, the kernel echoed it).
  void Installed(const NlRoute& r) {
    Fpm(r);
    Kernel(r);
  }
  void Dump(const std::vector<NlRoute>& shown, bool complete = true) {
    kernel->BeginResync();
    for (const NlRoute& r : shown) Kernel(r, true);
    kernel->EndResync(complete);
  }
  std::optional<std::vector<NextHop>> Device(const std::string& p) {
    auto r = sink.routes();
    auto it = r.find(P(p));
    if (it == r.end()) return std::nullopt;
    return it->second.paths;
  }
  RecordingSink sink, kernel_sink;
  FpmTableOptions options;
  FpmTable fpm{sink, testing::TestPorts(), options};
  KernelTableOptions o;
  std::unique_ptr<KernelTable> kernel;
  const std::vector<NextHop> host{NextHop::ToHost()};
  const std::vector<NextHop> via1{{A("192.0.2.1"), 0}};
  const NlRoute a = InlineRoute("10.1.0.0/16", {Via("192.0.2.1", 10)});
  const NlRoute b = InlineRoute("10.2.0.0/16", {Via("192.0.2.1", 10)});
  const NlRoute c = InlineRoute("10.3.0.0/16", {Via("192.0.2.1", 10)});
  const NlRoute d = InlineRoute("10.4.0.0/16", {Via("192.0.2.5", 11)});
};

// zebra deleted b and d from the kernel during the overrun (their events
// lost), FPM has not caught up. b, which FPM still holds, must not be
// forwarded: the kernel no longer forwards along it (no route: the cover). d was in flux (the kernel had it, FPM
// not yet): now both agree it is gone, so it no longer punts.
TEST_F(FpmFluxDumpTest, ReDumpTakesWhatItNoLongerShowsAsDeleted) {
  Installed(a);
  Installed(b);
  Installed(c);
  Kernel(d);
  ASSERT_EQ(Device("10.4.0.0/16"), host);
  ASSERT_EQ(Device("10.2.0.0/16"), via1);
  Dump({a, c});
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
  EXPECT_EQ(Device("10.2.0.0/16"), std::nullopt);
  EXPECT_EQ(Device("10.3.0.0/16"), via1);
  EXPECT_EQ(Device("10.4.0.0/16"), std::nullopt);
  EXPECT_EQ(fpm.counts().kernel_dump_gone, 2u);
  // FPM's delete of b catches up: it agrees with the kernel.
  NlRoute del_b = b;
  del_b.del = true;
  del_b.paths.clear();
  Fpm(del_b);
  EXPECT_EQ(Device("10.2.0.0/16"), std::nullopt);
  EXPECT_EQ(fpm.flux_punting(), 0u);
  // Every route shown by the next dump: nothing more is taken as gone.
  Dump({a, c});
  EXPECT_EQ(fpm.counts().kernel_dump_gone, 2u);
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
}

// A restarted zebra deleted its predecessor's routes (stale here: zebra
// has not replayed them) during the overrun: they go at once, as the
// deletions' events would have taken them.
TEST_F(FpmFluxDumpTest, StaleRoutesTheReDumpNoLongerShowsAreDropped) {
  Installed(a);
  Installed(b);
  fpm.MarkAllStale();
  Dump({a});
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
  EXPECT_EQ(Device("10.2.0.0/16"), std::nullopt);
  EXPECT_EQ(fpm.counts().kernel_dropped, 1u);
  EXPECT_EQ(fpm.stale_count(), fpm.stale_walked());
}

// NLM_F_DUMP_INTR: the table changed under the dump, which may have missed
// routes the kernel has. Nothing is concluded; the next dump does.
TEST_F(FpmFluxDumpTest, InterruptedDumpConcludesNothing) {
  Installed(a);
  Installed(b);
  Dump({a}, false);
  EXPECT_EQ(Device("10.2.0.0/16"), via1);
  EXPECT_EQ(fpm.counts().kernel_dump_gone, 0u);
  Dump({a});
  EXPECT_EQ(Device("10.2.0.0/16"), std::nullopt);
}

// The dump is read in slices, FPM's frames in between. What FPM does to a
// route the dump already showed does not undo the kernel's word: a change
// (DEL + NEW in one frame) and a delete followed by a re-add keep it. A
// route FPM brings that the dump did not show is not in the kernel at the
// end (FPM may be replaying a state the kernel has since left, or one it
// refused); if the kernel has it after all, its event (held during the
// dump, applied right after its end) follows and brings it back.
TEST_F(FpmFluxDumpTest, FpmFramesBetweenDumpSlicesKeepTheKernelsWord) {
  Installed(a);
  Installed(c);
  kernel->BeginResync();
  Kernel(a, true);
  Kernel(c, true);
  FpmReplace(a);
  NlRoute del_c = c;
  del_c.del = true;
  del_c.paths.clear();
  Fpm(del_c);
  Fpm(c);
  Fpm(b);
  kernel->EndResync(true);
  EXPECT_EQ(Device("10.1.0.0/16"), via1);
  EXPECT_EQ(Device("10.3.0.0/16"), via1);
  EXPECT_EQ(Device("10.2.0.0/16"), std::nullopt);
  EXPECT_EQ(fpm.counts().kernel_dump_gone, 1u);
  Kernel(b);  // the held event, applied after the dump
  EXPECT_EQ(Device("10.2.0.0/16"), via1);
}

// With the flux map full, a route FPM holds that the dump no longer shows
// punts by placeholder (the one in flux is left to its cover as the kernel
// leaves it), and the placeholder is not then taken for another
// route the kernel lost (which would drop it).
TEST_F(FpmFluxDumpTest, FullFluxMapPuntsByPlaceholder) {
  options.flux_max = 1;
  FpmTable small{sink, testing::TestPorts(), options};
  o.ignored_route = [&](const KernelRouteView& v) { small.KernelRoute(v); };
  o.ignored_dump_begins = [&] { small.KernelDumpBegins(); };
  o.ignored_dump_ends = [&](bool complete) { small.KernelDumpEnds(complete); };
  KernelTable k(kernel_sink, PortNames{{"k0", 0}}, o, nullptr);
  for (const NlRoute& r : {a, b, c}) {
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(small.ApplyFrame(m.data(), m.size()).ok());
  }
  k.BeginResync();
  k.EndResync(true);
  int punted = 0, none = 0;
  for (const char* p : {"10.1.0.0/16", "10.2.0.0/16", "10.3.0.0/16"}) {
    punted += Device(p) == host;
    none += Device(p) == std::nullopt;
  }
  EXPECT_EQ(punted, 2);
  EXPECT_EQ(none, 1);
  EXPECT_EQ(small.counts().kernel_dump_gone, 3u);
  EXPECT_EQ(small.counts().flux_overflows, 2u);
  EXPECT_EQ(small.routes(), 3u);
}

}  // namespace
}  // namespace fibnic
