// zebra's RIB is not the kernel's after an install or update the kernel
// refused, and zebra's replay (to a restarted fibnicd) carries zebra's
// (docs/oracle.md, "Found, fixed, and left (FRR)", forms (a), (b), (c) and the forwarding
// divergence of FIBSYNC_SEED=101640212860585). The rule: where the kernel
// and FPM disagree (flux), the device does what the kernel does; at a
// replay's end one dump of the kernel's routes says which replayed routes
// are not in the kernel. The kernel table and the FPM table wired as
// fibnicd wires them (the FPM table reads the kernel's objects).
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>

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

class FpmFluxRefusedTest : public ::testing::Test {
 protected:
  FpmFluxRefusedTest() {
    o.ignore_protocols = FrrRouteProtocols();
    o.ignored_route = [this](const KernelRouteView& v) { fpm->KernelRoute(v); };
    o.ignored_dump_begins = [this] { fpm->KernelDumpBegins(); };
    o.ignored_dump_ends = [this](bool complete) { fpm->KernelDumpEnds(complete); };
    o.ignored_nexthop_added = [this](uint32_t id) { fpm->KernelObjectAdded(id); };
    o.ignored_nexthop_deleted = [this](uint32_t id) { fpm->KernelObjectsGone({id}); };
    kernel = std::make_unique<KernelTable>(kernel_sink, PortNames{{"k0", 0}}, o, nullptr);
    options.kernel_holds_object = [this](uint32_t id) { return kernel->holds_nexthop_object(id); };
    options.kernel_object = [this](uint32_t id) { return kernel->resolve_nexthop_object(id); };
    fpm = std::make_unique<FpmTable>(*sink, testing::TestPorts(), options);
  }
  static NlNexthop Object(uint32_t id, const NlPath& path) {
    NlNexthop n;
    n.id = id;
    n.protocol = RTPROT_ZEBRA;
    n.path = path;
    return n;
  }
  static NlRoute ByObject(const std::string& p, uint32_t id, bool del = false) {
    NlRoute r = InlineRoute(p, {}, del);
    r.nh_id = id;
    return r;
  }
  void Fpm(const NlRoute& r) {
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(fpm->ApplyFrame(m.data(), m.size()).ok());
  }
  void FpmObject(const NlNexthop& n) {
    const auto m = BuildNexthopMessage(n);
    ASSERT_TRUE(fpm->ApplyFrame(m.data(), m.size()).ok());
  }
  void Apply(const std::vector<uint8_t>& m, bool dump) {
    std::vector<uint32_t> aligned((m.size() + 3) / 4);
    std::memcpy(aligned.data(), m.data(), m.size());
    auto* h = reinterpret_cast<nlmsghdr*>(aligned.data());
    if (dump) h->nlmsg_flags |= NLM_F_MULTI;
    ASSERT_TRUE(kernel->Apply(h).ok());
  }
  // A route message from the kernel: an event, or one of a dump.
  void Kernel(const NlRoute& r, bool dump = false) { Apply(BuildRouteMessage(r), dump); }
  void KernelObject(const NlNexthop& n, bool dump = false) { Apply(BuildNexthopMessage(n), dump); }
  // The dump a replay's end asks for (FpmSourceConfig::request_kernel_dump).
  void Dump(const std::vector<NlNexthop>& objects, const std::vector<NlRoute>& routes) {
    kernel->BeginResync();
    for (const NlNexthop& n : objects) KernelObject(n, true);
    for (const NlRoute& r : routes) Kernel(r, true);
    kernel->EndResync(true);
  }
  // fibnicd restarted: a new FPM table, the kernel's start-up dump, zebra's
  // replay of what it selected.
  void Restart(const std::vector<NlNexthop>& objects, const std::vector<NlRoute>& routes) {
    fpm.reset();
    sink = std::make_unique<RecordingSink>();
    fpm = std::make_unique<FpmTable>(*sink, testing::TestPorts(), options);
    Dump(objects, routes);
  }
  // A restart where zebra replays 198.51.100.0/24 by object k0, which the
  // kernel holds neither before nor at the replay's end (its dump).
  void ReplayAnObjectTheKernelLacks() {
    Restart({}, {});
    fpm->MarkAllStale();
    FpmObject(k0);
    Fpm(ByObject("198.51.100.0/24", 30));
    EXPECT_EQ(fpm->CheckKernelObjects(), 1u);
    fpm->SweepStale();
    Dump({}, {});
  }
  std::optional<std::vector<NextHop>> Device(const std::string& p) {
    auto r = sink->routes();
    auto it = r.find(P(p));
    if (it == r.end()) return std::nullopt;
    return it->second.paths;
  }
  std::unique_ptr<RecordingSink> sink = std::make_unique<RecordingSink>();
  RecordingSink kernel_sink;
  FpmTableOptions options;
  std::unique_ptr<FpmTable> fpm;
  KernelTableOptions o;
  std::unique_ptr<KernelTable> kernel;
  const std::vector<NextHop> host{NextHop::ToHost()};
  const std::vector<NextHop> via1{{A("192.0.2.1"), 0}};
  const std::vector<NextHop> via5{{A("192.0.2.5"), 1}};
  const std::vector<NextHop> via9{{A("192.0.2.9"), 2}};
  const NlNexthop k3{Object(24, Via("192.0.2.5", 11))};   // the kernel's (and zebra's old) object
  const NlNexthop k0{Object(30, Via("192.0.2.1", 10))};   // zebra's new one
};

// Form (b), FIBSYNC_SEED=100175138042614: zebra's update of a static was
// refused by the kernel, which kept the old route (nhid 24 via port 1);
// the running fibnicd never heard of the update, a restarted one gets it
// in zebra's replay. Both forward as the kernel does: along its object.
TEST_F(FpmFluxRefusedTest, FormBTheKernelKeptTheOldRouteAtARefusedUpdate) {
  KernelObject(k3);
  FpmObject(k3);
  Fpm(ByObject("203.0.113.0/24", 24));
  Kernel(ByObject("203.0.113.0/24", 24));
  ASSERT_EQ(Device("203.0.113.0/24"), via5);
  // The restart: the kernel's dump, then zebra's replay of its selected route.
  Restart({k3}, {ByObject("203.0.113.0/24", 24)});
  EXPECT_EQ(Device("203.0.113.0/24"), via5);
  fpm->MarkAllStale();
  FpmObject(k3);
  FpmObject(k0);
  Fpm(ByObject("203.0.113.0/24", 30));
  EXPECT_EQ(Device("203.0.113.0/24"), via5);
  fpm->SweepStale();
  Dump({k3}, {ByObject("203.0.113.0/24", 24)});
  EXPECT_EQ(Device("203.0.113.0/24"), via5);
  // zebra's next word that the kernel takes ends it.
  KernelObject(k0);
  Kernel(ByObject("203.0.113.0/24", 30));
  EXPECT_EQ(Device("203.0.113.0/24"), via1);
}

// Form (c), FIBSYNC_SEED=269035318607587 (2001:db8:300::/48 there; the rule
// is the same in both families): the kernel deleted the route at
// the refused update while FPM still holds the old one. The kernel then
// forwards by the cover, and so does the device — in the run that saw it
// and, after the replay's dump, in a restarted one.
TEST_F(FpmFluxRefusedTest, FormCTheKernelDeletedTheRouteAtARefusedUpdate) {
  KernelObject(k3);
  FpmObject(k3);
  Fpm(ByObject("198.19.7.0/24", 24));
  Kernel(ByObject("198.19.7.0/24", 24));
  ASSERT_EQ(Device("198.19.7.0/24"), via5);
  Kernel(ByObject("198.19.7.0/24", 24, true));
  EXPECT_EQ(Device("198.19.7.0/24"), std::nullopt);
  Restart({k3}, {});
  fpm->MarkAllStale();
  FpmObject(k3);
  FpmObject(k0);
  Fpm(ByObject("198.19.7.0/24", 30));
  fpm->SweepStale();
  Dump({k3}, {});
  EXPECT_EQ(Device("198.19.7.0/24"), std::nullopt);
}

// FIBSYNC_SEED=138807682517951 FRRDIFF_NHG=1 (a restart with the host
// unchanged wrote 198.18.0.0/24's cover code): zebra moved a static off
// object 24, the kernel refused the move (zebra sends nothing over FPM for
// it), and zebra deleted object 24 — the kernel deleted the old route with
// it, silently, and forwards by the cover. So does the device, whichever of
// the kernel's deletion and zebra's frame fibnicd reads first; before, it
// forwarded along the deleted object until zebra's frame, then punted.
class FpmObjectDeletedUnderARouteTest : public FpmFluxRefusedTest {
 protected:
  void AgreeOnObject24() {
    KernelObject(k3);
    FpmObject(k3);
    Fpm(ByObject(kPrefix, 24));
    Kernel(ByObject(kPrefix, 24));
    ASSERT_EQ(Device(kPrefix), via5);
  }
  NlNexthop Deleted24() const {
    NlNexthop del = k3;
    del.del = true;
    return del;
  }
  const std::string kPrefix = "198.18.0.0/24";
};

TEST_F(FpmObjectDeletedUnderARouteTest, TheKernelsDeletionReadFirstLeavesThePrefixToTheCover) {
  AgreeOnObject24();
  KernelObject(Deleted24());
  EXPECT_EQ(Device(kPrefix), std::nullopt) << "forwarded along an object the kernel deleted with its route";
  FpmObject(Deleted24());
  EXPECT_EQ(Device(kPrefix), std::nullopt) << "punted where the kernel forwards by the cover";
}

TEST_F(FpmObjectDeletedUnderARouteTest, ZebrasDeletionReadFirstPuntsUntilTheKernelsThenTheCover) {
  AgreeOnObject24();
  FpmObject(Deleted24());
  EXPECT_EQ(Device(kPrefix), host) << "a route naming an object FPM no longer holds";
  KernelObject(Deleted24());
  EXPECT_EQ(Device(kPrefix), std::nullopt) << "punted where the kernel forwards by the cover";
}

// zebra's usual order — the routes moved in the kernel, then the object
// deleted — leaves nothing in flux and follows FPM's route.
TEST_F(FpmObjectDeletedUnderARouteTest, AMoveTheKernelTookIsNotTakenForADeletion) {
  AgreeOnObject24();
  KernelObject(k0);
  FpmObject(k0);
  Kernel(ByObject(kPrefix, 30));
  KernelObject(Deleted24());
  Fpm(ByObject(kPrefix, 30));
  FpmObject(Deleted24());
  EXPECT_EQ(Device(kPrefix), via1);
  EXPECT_EQ(fpm->in_flux(), 0u);
}

// Form (a) and the forwarding divergence of FIBSYNC_SEED=101640212860585
// (2001:db8:100:1::/64 there, by a held object via k0):
// zebra replays a route it selected whose install the kernel refused (or
// has not made yet), by an object the kernel holds. At the replay's end
// the kernel's dump does not show it: it is not in the kernel, the device
// leaves it to the cover — until the kernel adds it.
TEST_F(FpmFluxRefusedTest, FormAReplayedRouteTheKernelDoesNotHoldIsLeftToTheCoverAtTheReplaysEnd) {
  Restart({k3}, {});
  fpm->MarkAllStale();
  FpmObject(k3);
  Fpm(ByObject("100.64.0.0/10", 24));
  fpm->CheckKernelObjects();
  fpm->SweepStale();
  Dump({k3}, {});
  EXPECT_EQ(Device("100.64.0.0/10"), std::nullopt);
  Kernel(ByObject("100.64.0.0/10", 24));
  EXPECT_EQ(Device("100.64.0.0/10"), via5);
  EXPECT_EQ(fpm->flux_punting(), 0u);
}

// fibnicd may read zebra's frame before the kernel's message for the same
// change: nothing is decided at the frame's arrival, and the kernel's add,
// shown by the replay's dump or told after it, is forwarded.
TEST_F(FpmFluxRefusedTest, ZebrasFrameReadBeforeTheKernelsMessageIsNotDecidedAtArrival) {
  Restart({k3}, {});
  fpm->MarkAllStale();
  FpmObject(k3);
  Fpm(ByObject("100.64.0.0/10", 24));
  Fpm(ByObject("198.18.5.0/24", 24));
  EXPECT_EQ(Device("100.64.0.0/10"), via5);
  fpm->SweepStale();
  // The kernel made the first before the dump, the second after it.
  Dump({k3}, {ByObject("100.64.0.0/10", 24)});
  EXPECT_EQ(Device("100.64.0.0/10"), via5);
  EXPECT_EQ(Device("198.18.5.0/24"), std::nullopt);
  Kernel(ByObject("198.18.5.0/24", 24));
  EXPECT_EQ(Device("198.18.5.0/24"), via5);
}

// FIBSYNC_SEED=51050717267298 (a BGP block of 2001:db8:100:60::/59's /64s
// there): at the replay's end the kernel did not hold zebra's object, so
// its replayed routes were not in the kernel; the kernel then made the
// object, and only seconds later (after the harness's checks) the routes.
// The object's add brings no route back; the kernel's route add does.
TEST_F(FpmFluxRefusedTest, AnObjectTheKernelMakesAfterTheReplaysEndBringsNoRouteBeforeTheKernelDoes) {
  ReplayAnObjectTheKernelLacks();
  EXPECT_EQ(Device("198.51.100.0/24"), std::nullopt);
  KernelObject(k0);
  EXPECT_EQ(Device("198.51.100.0/24"), std::nullopt);
  Kernel(ByObject("198.51.100.0/24", 30));
  EXPECT_EQ(Device("198.51.100.0/24"), via1);
  EXPECT_EQ(fpm->flux_punting(), 0u);
}

// FIBSYNC_SEED=84804601925745 FRRDIFF_NHG=1 (soak, after 3,011 events,
// right after a fibnicd restart; 2001:db8:100:61::/64 and its block there):
// the kernel's route by the old object (via port 1) when fibnicd started,
// zebra's replay by a new object the kernel did not hold yet, then the
// kernel deleted the old route (the prefix waits, FPM's route being no
// route either), made the new object — and the route only seconds later.
// The object's add compares the waiting prefix with the kernel again.
TEST_F(FpmFluxRefusedTest, AWaitingPrefixIsComparedWithTheKernelAgainWhenItsObjectIsMade) {
  const NlNexthop k2{Object(31, Via("192.0.2.9", 12))};
  Restart({k3}, {ByObject("198.51.100.0/24", 24)});
  EXPECT_EQ(Device("198.51.100.0/24"), via5);
  fpm->MarkAllStale();
  FpmObject(k3);
  FpmObject(k2);
  Fpm(ByObject("198.51.100.0/24", 31));
  EXPECT_EQ(fpm->CheckKernelObjects(), 1u);
  fpm->SweepStale();
  Dump({k3}, {ByObject("198.51.100.0/24", 24)});
  EXPECT_EQ(Device("198.51.100.0/24"), via5);
  Kernel(ByObject("198.51.100.0/24", 24, true));
  EXPECT_EQ(Device("198.51.100.0/24"), std::nullopt);
  KernelObject(k2);
  EXPECT_EQ(Device("198.51.100.0/24"), std::nullopt) << "forwarded before the kernel has the route";
  Kernel(ByObject("198.51.100.0/24", 31));
  EXPECT_EQ(Device("198.51.100.0/24"), via9);
}

// The same when zebra sends the object again (it re-installed it) before
// the kernel's route: no route until the kernel reports it.
TEST_F(FpmFluxRefusedTest, AnObjectZebraSendsAgainAfterTheReplaysEndBringsNoRouteBeforeTheKernelDoes) {
  ReplayAnObjectTheKernelLacks();
  FpmObject(k0);
  EXPECT_EQ(Device("198.51.100.0/24"), std::nullopt);
  KernelObject(k0);
  Kernel(ByObject("198.51.100.0/24", 30));
  EXPECT_EQ(Device("198.51.100.0/24"), via1);
}

// While in flux the device follows the kernel's object as the kernel
// changes it (no route message), and its deletion (which takes the route).
TEST_F(FpmFluxRefusedTest, APrefixInFluxFollowsTheKernelsObjectAndItsDeletion) {
  KernelObject(k3);
  FpmObject(k0);
  Fpm(ByObject("198.51.100.0/24", 30));
  Kernel(ByObject("198.51.100.0/24", 24));
  ASSERT_EQ(Device("198.51.100.0/24"), via5);
  KernelObject(Object(24, Via("192.0.2.9", 12)));
  EXPECT_EQ(Device("198.51.100.0/24"), via9);
  NlNexthop del = k3;
  del.del = true;
  KernelObject(del);
  EXPECT_EQ(Device("198.51.100.0/24"), std::nullopt);
  // An inline kernel route or an object the kernel source does not hold: a punt.
  Kernel(ByObject("198.51.100.0/24", 77));
  EXPECT_EQ(Device("198.51.100.0/24"), host);
}

// Inline mode (`no fpm use-next-hop-groups`): zebra installs by objects in
// the kernel, its frames carry paths. The kernel's route by group 40 = {k2}
// agreed with FPM's route and was read first; zebra's next frame carries
// {k1, k2}, which the kernel does not hold (it refused or delayed the
// update, or its group lost the k1 member; docs/oracle.md,
// FIBSYNC_SEED=80385425264765 FRRDIFF_NHG=0). The device does what the
// kernel does — group 40's paths — until the kernel's word agrees.
class FpmInlineKernelObjectTest : public FpmFluxRefusedTest {
 protected:
  static NlNexthop Group(uint32_t id, const std::vector<uint32_t>& members) {
    NlNexthop n;
    n.id = id;
    n.protocol = RTPROT_ZEBRA;
    for (uint32_t m : members) n.group.push_back(NlGroupMember{m, 1});
    return n;
  }
  // The kernel holds k1 (41, port 0) and k2 (42, port 1), and zebra's inline
  // route via k2 agrees with the kernel's route by group 40 = {42}.
  void AgreeOnK2() {
    KernelObject(k1);
    KernelObject(k2);
    KernelObject(Group(40, {42}));
    Fpm(InlineRoute(kPrefix, {k2.path}));
    Kernel(ByObject(kPrefix, 40));
    ASSERT_EQ(Device(kPrefix), via5);
    ASSERT_EQ(fpm->in_flux(), 0u);
  }
  // zebra's inline route via k1 and k2 agrees with the kernel's route by
  // group 40 = {41, 42}.
  void AgreeOnGroupOfK1AndK2() {
    KernelObject(k1);
    KernelObject(k2);
    KernelObject(Group(40, {41, 42}));
    Fpm(InlineRoute(kPrefix, {k1.path, k2.path}));
    Kernel(ByObject(kPrefix, 40));
    ASSERT_EQ(SortedDevice(kPrefix), via1and5);
  }
  // The kernel deletes object 41 and drops it from group 40, announcing the
  // group and not the routes using it.
  void KernelDeletesK1() {
    NlNexthop del = k1;
    del.del = true;
    KernelObject(del);
  }
  std::optional<std::vector<NextHop>> SortedDevice(const std::string& p) {
    auto d = Device(p);
    if (d) std::sort(d->begin(), d->end());
    return d;
  }
  const std::string kPrefix = "198.51.100.0/24";
  const NlNexthop k1{Object(41, Via("192.0.2.1", 10))};
  const NlNexthop k2{Object(42, Via("192.0.2.5", 11))};
  const std::vector<NextHop> via1and5{{A("192.0.2.1"), 0}, {A("192.0.2.5"), 1}};
};

TEST_F(FpmInlineKernelObjectTest, ZebrasInlineFrameReadAfterTheKernelsEventFollowsTheKernelsGroup) {
  AgreeOnK2();
  Fpm(InlineRoute(kPrefix, {k1.path, k2.path}));
  EXPECT_EQ(Device(kPrefix), via5) << "zebra's paths, which the kernel's group 40 does not hold";
  // The kernel takes the update (a group holding both): FPM's route.
  KernelObject(Group(43, {41, 42}));
  Kernel(ByObject(kPrefix, 43));
  EXPECT_EQ(SortedDevice(kPrefix), via1and5);
  EXPECT_EQ(fpm->in_flux(), 0u);
}

TEST_F(FpmInlineKernelObjectTest, ZebraComingBackToTheKernelsPathsEndsIt) {
  AgreeOnK2();
  Fpm(InlineRoute(kPrefix, {k1.path, k2.path}));
  EXPECT_EQ(Device(kPrefix), via5);
  Fpm(InlineRoute(kPrefix, {k2.path}));
  EXPECT_EQ(Device(kPrefix), via5);
  EXPECT_EQ(fpm->in_flux(), 0u);
  // Still compared with group 40 afterwards.
  Fpm(InlineRoute(kPrefix, {k1.path}));
  EXPECT_EQ(Device(kPrefix), via5);
}

// The usual order: zebra makes the object and changes the kernel's route,
// then sends its frame — which fibnicd may read first. Until the kernel's
// event the device forwards along the kernel's group (no punt), then along
// FPM's paths, and nothing stays in flux.
TEST_F(FpmInlineKernelObjectTest, ZebrasInlineFrameReadFirstEndsInItsPathsAtTheKernelsEvent) {
  AgreeOnK2();
  KernelObject(Group(43, {41, 42}));
  Fpm(InlineRoute(kPrefix, {k1.path, k2.path}));
  EXPECT_EQ(Device(kPrefix), via5);
  Kernel(ByObject(kPrefix, 43));
  EXPECT_EQ(SortedDevice(kPrefix), via1and5);
  EXPECT_EQ(fpm->in_flux(), 0u);
  EXPECT_EQ(fpm->counts().punted_updates, 0u);
}

// The soak's case: the kernel's group 40 = {41, 42} agreed with zebra's
// route via k1 and k2; zebra deleted object 41 (a restarted zebra cleaning
// up) and the kernel dropped it from the group, announcing the group and
// not the routes using it. The device follows the group.
TEST_F(FpmInlineKernelObjectTest, AnInlineRouteFollowsTheKernelsGroupLosingAMemberWithoutARouteMessage) {
  AgreeOnGroupOfK1AndK2();
  KernelDeletesK1();
  EXPECT_EQ(Device(kPrefix), via5);
  // zebra's frame without k1 agrees again.
  Fpm(InlineRoute(kPrefix, {k2.path}));
  EXPECT_EQ(Device(kPrefix), via5);
  EXPECT_EQ(fpm->in_flux(), 0u);
}

// The same while the route is stale: zebra went away (SIGKILL leaves its
// routes in the kernel) and the kernel's group loses a member before the new
// zebra's replay or the sweep (docs/oracle.md had this window as "not
// covered": the stale route forwarded along zebra's old paths, the lost one
// included). The stale copy follows the kernel's group too, and a replay of
// zebra's old paths does not bring the lost member back.
TEST_F(FpmInlineKernelObjectTest, AStaleInlineRouteFollowsTheKernelsGroupLosingAMemberBeforeTheReplay) {
  AgreeOnGroupOfK1AndK2();
  fpm->MarkAllStale();  // zebra's connection is gone
  KernelDeletesK1();
  EXPECT_EQ(Device(kPrefix), via5) << "the stale route still sent flows to k1, which the kernel's group lost";
  Fpm(InlineRoute(kPrefix, {k1.path, k2.path}));  // the new zebra replays its predecessor's paths
  EXPECT_EQ(Device(kPrefix), via5) << "the replay brought k1 back while the kernel's group lacks it";
}

// Deleting an object deletes the kernel's routes using it (IPv4 without a
// message): an inline route that agreed with one leaves the device with it.
TEST_F(FpmInlineKernelObjectTest, AnInlineRouteLeavesWithTheKernelsObjectItAgreedWith) {
  KernelObject(k2);
  Fpm(InlineRoute(kPrefix, {k2.path}));
  Kernel(ByObject(kPrefix, 42));
  ASSERT_EQ(Device(kPrefix), via5);
  NlNexthop del = k2;
  del.del = true;
  KernelObject(del);
  EXPECT_EQ(Device(kPrefix), std::nullopt);
}

// Next-hop group mode: a route's set is the kernel's object id, compared as
// such; its ref names no kernel object of its own, so kinds do not grow.
TEST_F(FpmInlineKernelObjectTest, ARouteByObjectKeepsNoKernelObjectOfItsOwn) {
  KernelObject(k2);
  FpmObject(k2);
  Fpm(ByObject(kPrefix, 42));
  Kernel(ByObject(kPrefix, 42));
  ASSERT_EQ(Device(kPrefix), via5);
  EXPECT_EQ(fpm->refs().Find(P(kPrefix))->kernel_nh, 0u);
  EXPECT_EQ(fpm->refs().kinds(), 1u);
}

// IPv6 keeps routes by object of one prefix and metric side by side and
// forwards along the first; a restarted zebra adds its routes behind its
// predecessor's (NLM_F_CREATE without NLM_F_EXCL in the kernel's
// notification) and deletes those later (FIBSYNC_SEED=80385425264765
// FRRDIFF_NHG=0: 2001:db8:100:40::/64 by group 2140 via k2 in front of
// zebra's new route by 2294 via k1). The device follows the first route
// until it goes, then the one behind it.
class FpmSeveralIpv6RoutesTest : public FpmInlineKernelObjectTest {
 protected:
  void KernelWithFlags(const NlRoute& r, uint16_t flags) {
    const std::vector<uint8_t> m = BuildRouteMessage(r);
    std::vector<uint32_t> aligned((m.size() + 3) / 4);
    std::memcpy(aligned.data(), m.data(), m.size());
    auto* h = reinterpret_cast<nlmsghdr*>(aligned.data());
    h->nlmsg_flags = flags;  // as the kernel notifies it (BuildRouteMessage writes a replace)
    ASSERT_TRUE(kernel->Apply(h).ok());
  }
  // The old zebra's route by group 40 = {52} via port 2 agrees with FPM's.
  void OldZebrasRoute() {
    KernelObject(v6k1);
    KernelObject(v6k2);
    KernelObject(Group(40, {52}));
    Fpm(InlineRoute(kV6, {v6k2.path}));
    KernelWithFlags(ByObject(kV6, 40), NLM_F_CREATE | NLM_F_EXCL);
    ASSERT_EQ(Device(kV6), via6k2);
    fpm->MarkAllStale();  // zebra restarts
  }
  // The new zebra's route by object 51 (port 1), added behind the old one.
  void NewZebrasRouteBehind() { KernelWithFlags(ByObject(kV6, 51), NLM_F_CREATE); }
  const std::string kV6 = "2001:db8:100:40::/64";
  const NlNexthop v6k1{Object(51, Via("2001:db8:1::2", 11))};
  const NlNexthop v6k2{Object(52, Via("2001:db8:2::2", 12))};
  const std::vector<NextHop> via6k1{{A("2001:db8:1::2"), 1}};
  const std::vector<NextHop> via6k2{{A("2001:db8:2::2"), 2}};
};

TEST_F(FpmSeveralIpv6RoutesTest, ARouteAddedBehindTheKernelsFirstIsUsedOnlyWhenTheFirstGoes) {
  OldZebrasRoute();
  NewZebrasRouteBehind();
  Fpm(InlineRoute(kV6, {v6k1.path}));
  EXPECT_EQ(Device(kV6), via6k2) << "the kernel forwards along its first route";
  Kernel(ByObject(kV6, 40, true));  // the new zebra deletes its predecessor's
  EXPECT_EQ(Device(kV6), via6k1);
  EXPECT_EQ(fpm->flux_punting(), 0u);
}

TEST_F(FpmSeveralIpv6RoutesTest, ZebrasFrameReadBeforeTheRouteAddedBehindAlsoWaitsForTheFirstToGo) {
  OldZebrasRoute();
  Fpm(InlineRoute(kV6, {v6k1.path}));
  EXPECT_EQ(Device(kV6), via6k2);
  NewZebrasRouteBehind();
  EXPECT_EQ(Device(kV6), via6k2) << "the kernel forwards along its first route";
  Kernel(ByObject(kV6, 40, true));
  EXPECT_EQ(Device(kV6), via6k1);
  EXPECT_EQ(fpm->flux_punting(), 0u);
}

// The soak's whole sequence: the old group lost its k1 member when the new
// zebra deleted object 41's successor here (51 is the new zebra's own).
TEST_F(FpmSeveralIpv6RoutesTest, AReplayedRouteBehindTheOldOneFollowsTheOldGroupUntilItsDeletion) {
  const NlNexthop old_k1{Object(50, Via("2001:db8:1::2", 11))};
  KernelObject(old_k1);
  KernelObject(v6k2);
  KernelObject(Group(40, {50, 52}));
  Fpm(InlineRoute(kV6, {old_k1.path, v6k2.path}));
  KernelWithFlags(ByObject(kV6, 40), NLM_F_CREATE | NLM_F_EXCL);
  fpm->MarkAllStale();
  NlNexthop del = old_k1;
  del.del = true;
  KernelObject(del);
  EXPECT_EQ(Device(kV6), via6k2) << "group 40 lost its k1 member";
  KernelObject(v6k1);
  NewZebrasRouteBehind();
  Fpm(InlineRoute(kV6, {v6k1.path}));
  EXPECT_EQ(Device(kV6), via6k2);
  Kernel(ByObject(kV6, 40, true));
  EXPECT_EQ(Device(kV6), via6k1);
}

// A restarted fibnicd: the kernel's dump shows both routes, the first first.
TEST_F(FpmSeveralIpv6RoutesTest, ADumpShowingTwoRoutesOfAPrefixForwardsAlongTheFirst) {
  const NlNexthop g40 = Group(40, {52});
  Restart({v6k1, v6k2, g40}, {ByObject(kV6, 40), ByObject(kV6, 51)});
  fpm->MarkAllStale();
  Fpm(InlineRoute(kV6, {v6k1.path}));
  fpm->SweepStale();
  Dump({v6k1, v6k2, g40}, {ByObject(kV6, 40), ByObject(kV6, 51)});
  EXPECT_EQ(Device(kV6), via6k2);
  Kernel(ByObject(kV6, 40, true));
  EXPECT_EQ(Device(kV6), via6k1);
}

}  // namespace
}  // namespace fibnic
