// Replay-aware stale handling. zebra's replay after a reconnect has no end
// marker and stalls between bursts: what it did not replay is forgotten
// once nothing was replayed for the hold, bounded by a ceiling, never while
// routes are still arriving.
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
#include "sources/netlink/netlink_build.h"
#include "tests/sources/netns_util.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::InlineRoute;
using testing::P;
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
    source = std::make_unique<FpmSource>(io, cfg);
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
  void TearDown() override {
    if (source) OnLoop([&] { source->Stop(); });
    work.reset();
    io.stop();
    if (thread.joinable()) thread.join();
  }
  FpmSourceStats Stats() {
    return OnLoop([&] { return source->stats(); });
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
  std::unique_ptr<FpmSource> source;
  std::mutex log_mu;
  std::vector<std::string> log;
};

// zebra reconnects and replays slowly (a route every 150 ms, for 1.8 s,
// longer than 4 x the hold); no route it replays is forgotten, and the one
// it does not replay goes 400 ms after the last. (A sweep at stale_hold
// once 1 s quiet, at 4 x stale_hold at the latest, forgot the unreplayed
// tail at 1.6 s.)
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
  FakeZebra z(source->port());
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().connections == 2; }, 5s));
  for (const auto& p : replayed) {
    std::this_thread::sleep_for(150ms);
    z.Route(p);
  }
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().stale_pending == 1; }, 2s)) << Stats().stale_pending;
  EXPECT_TRUE(Stats().replaying);
  EXPECT_EQ(Stats().routes, 13u);
  ASSERT_TRUE(testing::WaitFor([&] { return Stats().routes == 12; }, 3s));
  EXPECT_EQ(Stats().stale_swept, 1u) << "a replayed route was forgotten";
  EXPECT_FALSE(Stats().replaying);
  EXPECT_TRUE(Logged("replay over (nothing replayed for")) << "why the sweep came is not logged";
}

TEST_F(FpmSourceReplay, CeilingShorterThanHoldIsRefused) {
  FpmSourceConfig cfg;
  cfg.stale_hold = 5s;
  cfg.stale_hold_max = 1s;
  FpmSource s(io, cfg);
  const Status st = s.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("stale_hold_max"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace fibnic
