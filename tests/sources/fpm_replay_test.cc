// Issue #16, replay-aware stale handling. zebra's replay after a reconnect
// has no end marker and stalls between bursts: the stale sweep must come
// once nothing was replayed for the hold, bounded by a ceiling, never while
// routes are still arriving. And while zebra's routes are stale, the
// kernel's deletion of one (a restarted zebra deleting what it no longer
// has) takes it off at once.
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <atomic>
#include <boost/asio.hpp>
#include <cstring>
#include <future>
#include <thread>

#include "sources/fpm/fpm_frame.h"
#include "sources/fpm/fpm_replay.h"
#include "sources/fpm/fpm_source.h"
#include "sources/fpm/fpm_table.h"
#include "sources/kernel/kernel_table.h"
#include "sources/netlink/netlink_build.h"
#include "tests/sources/netns_util.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::InlineRoute;
using testing::P;
using testing::RecordingSink;
using testing::Via;
using Clock = FpmReplayWatch::Clock;

TEST(FpmReplayWatch, OverOnlyOnceNothingWasReplayedForTheHold) {
  FpmReplayWatch w(3s, 60s);
  const Clock::time_point t0{};
  EXPECT_FALSE(w.DueAt());  // no zebra: nothing to wait for, nothing swept
  EXPECT_FALSE(w.Over(t0 + 1h));
  w.Connected(t0);
  EXPECT_EQ(*w.DueAt(), t0 + 3s);
  // A replay with stalls of up to 2.9 s between bursts, for 40 s.
  for (auto t = t0 + 1s; t < t0 + 40s; t += 2900ms) {
    EXPECT_FALSE(w.Over(t)) << "over while routes still arrive, at " << (t - t0).count();
    w.Replayed(t);
  }
  const Clock::time_point last = t0 + 1s + 13 * 2900ms;
  EXPECT_EQ(*w.DueAt(), last + 3s);
  EXPECT_FALSE(w.Over(last + 2999ms));
  EXPECT_TRUE(w.Over(last + 3s));
  EXPECT_NE(w.Why(last + 3s).find("nothing replayed for 3.0 s"), std::string::npos) << w.Why(last + 3s);
  w.Disconnected();
  EXPECT_FALSE(w.Over(last + 1h));
}

TEST(FpmReplayWatch, CeilingEndsAReplayThatNeverGoesQuiet) {
  FpmReplayWatch w(3s, 20s);
  const Clock::time_point t0{};
  w.Connected(t0);
  for (auto t = t0; t < t0 + 20s; t += 500ms) {
    EXPECT_FALSE(w.Over(t));
    w.Replayed(t);
  }
  EXPECT_TRUE(w.Over(t0 + 20s));
  EXPECT_NE(w.Why(t0 + 20s).find("stale_hold_max"), std::string::npos) << w.Why(t0 + 20s);
  // A new connection starts a new replay.
  w.Connected(t0 + 30s);
  EXPECT_FALSE(w.Over(t0 + 32s));
}

// A zebra stand-in over TCP: sends frames to the source's port.
class FakeZebra {
 public:
  explicit FakeZebra(uint16_t port) : socket_(io_) {
    socket_.connect({boost::asio::ip::make_address("127.0.0.1"), port});
  }
  void Send(const std::vector<uint8_t>& netlink) {
    const auto frame = EncodeFpmFrame(netlink.data(), netlink.size());
    boost::asio::write(socket_, boost::asio::buffer(frame));
  }
  void Route(const std::string& prefix) { Send(BuildRouteMessage(InlineRoute(prefix, {Via("192.0.2.1", 10)}))); }
  void Close() { socket_.close(); }

 private:
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

class FpmSourceReplay : public ::testing::Test {
 protected:
  void Start(FpmSourceConfig cfg) {
    cfg.port = 0;
    cfg.log = [this](const std::string& m) {
      std::lock_guard<std::mutex> l(log_mu);
      log.push_back(m);
    };
    source = std::make_unique<FpmSource>(io, sink, cfg);
    ASSERT_TRUE(source->Start().ok());
    thread = std::thread([this] { io.run(); });
  }
  template <typename F>
  auto OnLoop(F f) {
    std::promise<decltype(f())> p;
    boost::asio::post(io, [&] {
      if constexpr (std::is_void_v<decltype(f())>) {
        f();
        p.set_value();
      } else {
        p.set_value(f());
      }
    });
    return p.get_future().get();
  }
  // zebra's next-hop object 19 and 10.1.0.0/16 by it; returns the route.
  static NlRoute SendRouteByObject19(FakeZebra& z) {
    NlNexthop g;
    g.id = 19;
    g.path = Via("192.0.2.1", 10);
    z.Send(BuildNexthopMessage(g));
    NlRoute r = InlineRoute("10.1.0.0/16", {});
    r.nh_id = 19;
    z.Send(BuildRouteMessage(r));
    return r;
  }
  void TearDown() override {
    if (source) OnLoop([&] { source->Stop(); });
    work.reset();
    io.stop();
    if (thread.joinable()) thread.join();
  }
  FpmSourceStats Stats() {
    return OnLoop([&] { return source->stats(); });
  }
  bool Has(const char* p) {
    return OnLoop([&] { return sink.routes().count(P(p)) != 0; });
  }
  bool Logged(const std::string& needle) {
    std::lock_guard<std::mutex> l(log_mu);
    for (const auto& m : log) {
      if (m.find(needle) != std::string::npos) return true;
    }
    return false;
  }

  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread thread;
  RecordingSink sink;
  std::unique_ptr<FpmSource> source;
  std::mutex log_mu;
  std::vector<std::string> log;
};

// zebra reconnects and replays slowly (a route every 150 ms, for 1.8 s,
// longer than 4 x the hold); the route it replays last must never leave
// the RIB, and the one it does not replay goes 400 ms after the last.
// (The old rule — sweep at stale_hold once 1 s quiet, at 4 x stale_hold at
// the latest — swept the unreplayed tail at 1.6 s.)
TEST_F(FpmSourceReplay, NoSweepWhileTheReplayStillArrives) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 400ms;
  cfg.stale_hold_max = 30s;
  Start(cfg);
  std::vector<std::string> replayed;
  for (int i = 0; i < 12; ++i) replayed.push_back("10." + std::to_string(i) + ".0.0/16");
  {
    FakeZebra z(source->port());
    for (const auto& p : replayed) z.Route(p);
    z.Route("10.99.0.0/16");
    ASSERT_TRUE(testing::WaitFor([&] { return Stats().routes == 13; }, 5s));
    z.Close();
  }
  ASSERT_TRUE(testing::WaitFor([&] { return !Stats().connected; }, 5s));
  OnLoop([&] { sink.TakeLog(); });
  FakeZebra z(source->port());
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().connections == 2; }, 5s));
  for (const auto& p : replayed) {
    std::this_thread::sleep_for(150ms);
    z.Route(p);
  }
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().stale_pending == 1; }, 2s)) << Stats().stale_pending;
  EXPECT_TRUE(Stats().replaying);
  EXPECT_TRUE(Has("10.99.0.0/16"));
  ASSERT_TRUE(testing::WaitFor([&] { return !Has("10.99.0.0/16"); }, 3s));
  EXPECT_EQ(Stats().stale_swept, 1u);
  EXPECT_FALSE(Stats().replaying);
  EXPECT_TRUE(Logged("replay over (nothing replayed for")) << "why the sweep came is not logged";
  for (const auto& line : OnLoop([&] { return sink.TakeLog(); })) {
    EXPECT_EQ(line, "delete 10.99.0.0/16") << "a replayed route left the RIB, or the replay was re-sent to it";
  }
}

// zebra is gone (or restarted and not yet replaying): the kernel deletes one
// of its routes; the RIB follows at once, the rest stays until the replay.
TEST_F(FpmSourceReplay, KernelDeletionWhileZebraIsAwayTakesTheRouteOff) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 300ms;
  Start(cfg);
  {
    FakeZebra z(source->port());
    z.Route("10.1.0.0/16");
    z.Route("10.2.0.0/16");
    ASSERT_TRUE(testing::WaitFor([&] { return Stats().routes == 2; }, 5s));
    // Connected, replay over: a kernel deletion is zebra's normal first step
    // of a delete (FPM follows); the table keeps the route until zebra says
    // so, the device does what the kernel does meanwhile (no route: in flux).
    ASSERT_TRUE(testing::WaitFor([&] { return !Stats().replaying; }, 5s));
    OnLoop([&] { source->KernelRoute(testing::KernelView("10.2.0.0/16", true)); });
    EXPECT_FALSE(Has("10.2.0.0/16"));
    EXPECT_EQ(Stats().routes, 2u);
    OnLoop([&] { source->KernelRoute(testing::KernelView("10.2.0.0/16", false, {testing::Via("192.0.2.1", 10)})); });  // back: FPM's again
    EXPECT_TRUE(Has("10.2.0.0/16"));
    z.Close();
  }
  ASSERT_TRUE(testing::WaitFor([&] { return !Stats().connected; }, 5s));
  OnLoop([&] { source->KernelRoute(testing::KernelView("10.1.0.0/16", true, {}, 0, 100)); });  // another table: not ours
  EXPECT_TRUE(Has("10.1.0.0/16"));
  OnLoop([&] { source->KernelRoute(testing::KernelView("10.1.0.0/16", true)); });
  EXPECT_FALSE(Has("10.1.0.0/16"));
  EXPECT_TRUE(Has("10.2.0.0/16"));
  EXPECT_EQ(Stats().kernel_dropped, 1u);
  EXPECT_EQ(Stats().stale_pending, 1u);
}

// The same for a deleted next-hop object (zebra's next-hop group mode): the
// kernel drops the routes using it without a route message.
TEST_F(FpmSourceReplay, KernelNexthopDeletionWhileZebraIsAwayTakesItsRoutesOff) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 300ms;
  Start(cfg);
  {
    FakeZebra z(source->port());
    SendRouteByObject19(z);
    z.Route("10.2.0.0/16");
    ASSERT_TRUE(testing::WaitFor([&] { return Stats().routes == 2 && !Stats().replaying; }, 5s));
    z.Close();
  }
  ASSERT_TRUE(testing::WaitFor([&] { return !Stats().connected; }, 5s));
  OnLoop([&] { source->KernelNexthopDeleted(19); });
  ASSERT_TRUE(testing::WaitFor([&] { return !Has("10.1.0.0/16"); }, 2s));
  EXPECT_TRUE(Has("10.2.0.0/16"));
  EXPECT_EQ(Stats().routes, 1u) << "the stale route stayed in the table";
}

// With zebra connected the kernel's deletion is followed too — the kernel
// forwards by the cover, so does the device (zebra deleted the object under
// a route whose move the kernel refused: FpmObjectDeletedUnderARouteTest) —
// but FPM's route stays in the table until zebra's own word on it.
TEST_F(FpmSourceReplay, KernelNexthopDeletionWithZebraThereLeavesTheRouteToTheCoverUntilZebrasWord) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 300ms;
  Start(cfg);
  FakeZebra z(source->port());
  NlRoute r = SendRouteByObject19(z);
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().routes == 1 && !Stats().replaying && Has("10.1.0.0/16"); }, 5s));
  OnLoop([&] { source->KernelNexthopDeleted(19); });
  OnLoop([] {});  // after the posted burst
  EXPECT_FALSE(Has("10.1.0.0/16"));
  EXPECT_EQ(Stats().routes, 1u);
  r.del = true;
  z.Send(BuildRouteMessage(r));
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().routes == 0; }, 5s));
  EXPECT_FALSE(Has("10.1.0.0/16"));
}

// Start-up (issue #14 6(a)): with zebra's routes in the kernel, the FPM
// source's initial state is in once zebra's replay is over; without them
// at once; and initial_wait bounds the wait, saying why.
TEST_F(FpmSourceReplay, InitialStateWaitsForZebrasReplayWhenTheKernelHasItsRoutes) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 300ms;
  cfg.initial_wait = 20s;
  Start(cfg);
  EXPECT_TRUE(OnLoop([&] { return source->initial_sync_done(); })) << "no zebra routes in the kernel: no wait";
  OnLoop([&] { source->KernelRoute(testing::KernelView("10.1.0.0/16", false)); });
  EXPECT_FALSE(OnLoop([&] { return source->initial_sync_done(); }));
  FakeZebra z(source->port());
  z.Route("10.1.0.0/16");
  std::this_thread::sleep_for(200ms);
  EXPECT_FALSE(OnLoop([&] { return source->initial_sync_done(); })) << "done before the replay went quiet";
  ASSERT_TRUE(testing::WaitFor([&] { return OnLoop([&] { return source->initial_sync_done(); }); }, 3s));
  EXPECT_TRUE(Has("10.1.0.0/16"));
}

// zebra replays what it selected, also routes the kernel refused or does
// not hold yet (FIBSYNC_SEED=101640212860585, docs/oracle.md): at the
// replay's end the source asks for one dump of the kernel's routes, and a
// replayed route the dump does not show is not in the kernel (the cover).
// Start-up's initial state waits for that dump's end.
TEST_F(FpmSourceReplay, AReplaysEndAsksForOneKernelDumpThatLeavesWhatTheKernelLacksToTheCover) {
  std::atomic<int> dumps{0};
  FpmSourceConfig cfg;
  cfg.stale_hold = 300ms;
  cfg.initial_wait = 20s;
  cfg.request_kernel_dump = [&] { ++dumps; };
  Start(cfg);
  const KernelRouteView in_kernel = testing::KernelView("10.1.0.0/16", false, {Via("192.0.2.1", 10)});
  OnLoop([&] { source->KernelRoute(in_kernel); });
  FakeZebra z(source->port());
  z.Route("10.1.0.0/16");
  z.Route("10.2.0.0/16");
  ASSERT_TRUE(testing::WaitFor([&] { return dumps.load() == 1; }, 3s)) << "no dump asked for at the replay's end";
  EXPECT_FALSE(OnLoop([&] { return source->initial_sync_done(); })) << "done before the dump";
  EXPECT_TRUE(Has("10.2.0.0/16")) << "decided at arrival";
  OnLoop([&] {
    source->KernelDumpBegins();
    source->KernelRoute(in_kernel);
    source->KernelDumpEnds(true);
  });
  EXPECT_TRUE(OnLoop([&] { return source->initial_sync_done(); }));
  EXPECT_TRUE(Has("10.1.0.0/16"));
  EXPECT_FALSE(Has("10.2.0.0/16"));
  EXPECT_TRUE(Logged("replayed, not in the kernel"));
  EXPECT_EQ(dumps.load(), 1);
  // The kernel adds it after all: forwarded.
  OnLoop([&] { source->KernelRoute(testing::KernelView("10.2.0.0/16", false, {Via("192.0.2.1", 10)})); });
  EXPECT_TRUE(Has("10.2.0.0/16"));
}

TEST_F(FpmSourceReplay, InitialWaitBoundsTheWaitForAnAbsentZebra) {
  FpmSourceConfig cfg;
  cfg.initial_wait = 300ms;
  Start(cfg);
  OnLoop([&] { source->KernelRoute(testing::KernelView("10.1.0.0/16", false)); });
  EXPECT_FALSE(OnLoop([&] { return source->initial_sync_done(); }));
  ASSERT_TRUE(testing::WaitFor([&] { return OnLoop([&] { return source->initial_sync_done(); }); }, 3s));
  EXPECT_TRUE(Logged("zebra has not connected after initial_wait")) << "the log does not say why";
}

TEST_F(FpmSourceReplay, CeilingShorterThanHoldIsRefused) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 5s;
  cfg.stale_hold_max = 1s;
  FpmSource s(io, sink, cfg);
  const Status st = s.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("stale_hold_max"), std::string::npos) << st.message();
}

// The kernel source tells of zebra's routes it ignores (recorded netlink
// messages as zebra's install and delete look: protocol bgp, table 254).
TEST(KernelIgnoredRoutes, DeletionsOfFrrRoutesAreReported) {
  RecordingSink sink;
  std::vector<std::tuple<Prefix, uint32_t, bool>> seen;
  KernelTableOptions o;
  o.ignore_protocols = FrrRouteProtocols();
  o.ignored_route = [&](const KernelRouteView& v) { seen.emplace_back(v.prefix, v.table, v.deleted); };
  KernelTable table(sink, PortNames{{"k0", 0}}, o, nullptr);
  auto feed = [&](const NlRoute& r) {
    const auto m = BuildRouteMessage(r);
    std::vector<uint32_t> aligned((m.size() + 3) / 4);
    std::memcpy(aligned.data(), m.data(), m.size());
    ASSERT_TRUE(table.Apply(reinterpret_cast<const nlmsghdr*>(aligned.data())).ok());
  };
  feed(InlineRoute("203.0.113.0/24", {Via("10.0.0.2", 10)}));
  feed(InlineRoute("203.0.113.0/24", {}, true));
  NlRoute mine = InlineRoute("198.51.100.0/24", {}, true);
  mine.protocol = RTPROT_BOOT;  // `ip route`: the kernel source's own
  feed(mine);
  EXPECT_EQ(seen, (std::vector<std::tuple<Prefix, uint32_t, bool>>{{P("203.0.113.0/24"), 254, false},
                                                                  {P("203.0.113.0/24"), 254, true}}));
  EXPECT_TRUE(sink.routes().empty());
  // zebra's next-hop object deleted (nhmsg.nh_protocol = RTPROT_ZEBRA); not
  // one of another protocol.
  std::vector<uint32_t> deleted;
  KernelTableOptions n = o;
  n.ignored_nexthop_deleted = [&](uint32_t id) { deleted.push_back(id); };
  KernelTable with_objects(sink, PortNames{{"k0", 0}}, n, nullptr);
  for (uint8_t protocol : {uint8_t{RTPROT_ZEBRA}, uint8_t{RTPROT_BOOT}}) {
    NlNexthop g;
    g.del = true;
    g.id = protocol;
    g.path = Via("10.0.0.2", 10);
    auto m = BuildNexthopMessage(g);
    m[sizeof(nlmsghdr) + 2] = protocol;  // nhmsg.nh_protocol
    std::vector<uint32_t> aligned((m.size() + 3) / 4);
    std::memcpy(aligned.data(), m.data(), m.size());
    ASSERT_TRUE(with_objects.Apply(reinterpret_cast<const nlmsghdr*>(aligned.data())).ok());
  }
  EXPECT_EQ(deleted, (std::vector<uint32_t>{RTPROT_ZEBRA}));
}

}  // namespace
}  // namespace fibnic
