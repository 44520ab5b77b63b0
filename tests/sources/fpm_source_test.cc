// The FPM listener over real loopback sockets: one live feed at a time. A
// second connection while zebra's is live (a local user taking over the feed
// to inject routes or forge offload state) is
// refused, logged and counted; zebra's connection keeps feeding. Failed
// before the listener refused: the newcomer replaced zebra's connection.
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "sources/fpm/fpm_source.h"
#include "tests/sources/test_util.h"
#include "tests/support/fake_zebra.h"
#include "tests/support/on_loop.h"

namespace fibnic {
namespace {

namespace asio = boost::asio;
using namespace std::chrono_literals;
using testing::FakeZebra;
using testing::InlineRoute;
using testing::Via;

NlRoute Bgp(const std::string& prefix) { return InlineRoute(prefix, {Via("192.0.2.1", 10)}); }

template <typename F>
bool WaitFor(F pred, std::chrono::milliseconds limit = 3000ms) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return pred();
}

class FpmListener : public ::testing::Test {
 protected:
  void SetUp() override {
    FpmSourceConfig cfg;
    cfg.port = 0;
    cfg.log = [this](const std::string& m) {
      std::lock_guard lk(mu_);
      logs_.push_back(m);
    };
    src_ = std::make_unique<FpmSource>(io_, cfg);
    ASSERT_TRUE(src_->Start().ok());
    thread_ = std::thread([this] { io_.run(); });
  }
  void TearDown() override {
    testing::OnLoop(io_, [this] {
      src_->Stop();
      work_.reset();
      return 0;
    });
    thread_.join();
  }
  FpmSourceStats Stats() { return testing::OnLoop(io_, [this] { return src_->stats(); }); }
  uint64_t Routes() { return Stats().messages; }  // zebra's route messages taken
  std::string Logs() {
    std::lock_guard lk(mu_);
    std::string all;
    for (const auto& l : logs_) all += l + "\n";
    return all;
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<FpmSource> src_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> logs_;
};

TEST_F(FpmListener, SecondConnectionIsRefusedWhileTheFirstIsLive) {
  std::optional<FakeZebra> zebra(std::in_place, src_->port());
  ASSERT_TRUE(WaitFor([&] { return Stats().connected; }));
  const std::string zebra_peer = Stats().peer;
  zebra->Send(Bgp("198.51.100.0/24"));
  ASSERT_TRUE(WaitFor([&] { return Routes() == 1; })) << Logs();

  // The intruder connects, is closed at once, and what it sends goes nowhere.
  FakeZebra intruder(src_->port());
  intruder.Send(Bgp("203.0.113.0/24"));
  EXPECT_TRUE(intruder.ClosedWithin(2s)) << "the intruder's connection was kept";

  const FpmSourceStats s = Stats();
  EXPECT_EQ(s.refused, 1u);
  EXPECT_EQ(s.connections, 1u);
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.peer, zebra_peer);
  EXPECT_EQ(s.resyncs, 0u) << "the intruder counted as zebra's reconnect";
  EXPECT_NE(Logs().find("refused a connection"), std::string::npos) << Logs();
  EXPECT_EQ(Routes(), 1u) << "the intruder's route was taken";

  // zebra's feed is untouched.
  zebra->Send(Bgp("198.51.101.0/24"));
  EXPECT_TRUE(WaitFor([&] { return Routes() == 2; })) << Logs();

  // Once zebra goes, the next connection is zebra's again.
  zebra.reset();
  ASSERT_TRUE(WaitFor([&] { return !Stats().connected; }));
  FakeZebra again(src_->port());
  ASSERT_TRUE(WaitFor([&] { return Stats().connected; }));
  EXPECT_EQ(Stats().connections, 2u);
  EXPECT_EQ(Stats().refused, 1u);
}

// Found by fibnicd_flood_test: every refused connection logged a line, so a
// local user looping on connect() wrote ~10,000 journal lines a second. Now
// the first refusal is logged and the rest are counted, not logged.
TEST_F(FpmListener, RefusedConnectionFloodDoesNotFloodTheLog) {
  FakeZebra zebra(src_->port());
  ASSERT_TRUE(WaitFor([&] { return Stats().connected; }));
  for (int i = 0; i < 200; ++i) FakeZebra intruder(src_->port());
  ASSERT_TRUE(WaitFor([&] { return Stats().refused == 200; })) << Stats().refused;
  size_t lines = 0;
  {
    std::lock_guard lk(mu_);
    for (const auto& l : logs_) lines += l.find("refused a connection") != std::string::npos;
  }
  EXPECT_EQ(lines, 1u) << Logs();
  EXPECT_TRUE(Stats().connected);
}

}  // namespace
}  // namespace fibnic
