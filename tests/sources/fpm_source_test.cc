// The FPM listener over real loopback sockets: one live feed at a time. A
// second connection while zebra's is live (a local user taking over the feed
// to inject routes or forge offload state) is
// refused, logged and counted; zebra's connection keeps feeding. Failed
// before the listener refused: the newcomer replaced zebra's connection.
#include <sys/socket.h>
#include <sys/time.h>

#include <cerrno>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio.hpp>
#include <gtest/gtest.h>

#include "sources/fpm/fpm_source.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace std::chrono_literals;
using testing::InlineRoute;
using testing::P;
using testing::Via;

std::vector<uint8_t> RouteFrame(const std::string& prefix) {
  auto msg = BuildRouteMessage(InlineRoute(prefix, {Via("192.0.2.1", 10)}));
  return EncodeFpmFrame(msg.data(), msg.size());
}

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
  template <typename F>
  auto OnIo(F fn) {
    std::packaged_task<decltype(fn())()> task(std::move(fn));
    auto fut = task.get_future();
    asio::post(io_, [&task] { task(); });
    return fut.get();
  }
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
    OnIo([this] {
      src_->Stop();
      work_.reset();
      return 0;
    });
    thread_.join();
  }
  FpmSourceStats Stats() { return OnIo([this] { return src_->stats(); }); }
  uint64_t Routes() { return Stats().messages; }  // zebra's route messages taken
  std::string Logs() {
    std::lock_guard lk(mu_);
    std::string all;
    for (const auto& l : logs_) all += l + "\n";
    return all;
  }
  tcp::endpoint Endpoint() { return {asio::ip::make_address("127.0.0.1"), src_->port()}; }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::unique_ptr<FpmSource> src_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> logs_;
};

TEST_F(FpmListener, SecondConnectionIsRefusedWhileTheFirstIsLive) {
  asio::io_context client_io;
  tcp::socket zebra(client_io);
  zebra.connect(Endpoint());
  ASSERT_TRUE(WaitFor([&] { return Stats().connected; }));
  const std::string zebra_peer = Stats().peer;
  asio::write(zebra, asio::buffer(RouteFrame("198.51.100.0/24")));
  ASSERT_TRUE(WaitFor([&] { return Routes() == 1; })) << Logs();

  // The intruder connects, is closed at once, and what it sends goes nowhere.
  tcp::socket intruder(client_io);
  intruder.connect(Endpoint());
  boost::system::error_code ec;
  asio::write(intruder, asio::buffer(RouteFrame("203.0.113.0/24")), ec);
  const timeval two_seconds{2, 0};
  ::setsockopt(intruder.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &two_seconds, sizeof two_seconds);
  char byte;
  const ssize_t n = ::recv(intruder.native_handle(), &byte, 1, 0);  // 0: the server closed it
  EXPECT_TRUE(n == 0 || (n < 0 && errno == ECONNRESET)) << "the intruder's connection was kept (n=" << n << ")";

  const FpmSourceStats s = Stats();
  EXPECT_EQ(s.refused, 1u);
  EXPECT_EQ(s.connections, 1u);
  EXPECT_TRUE(s.connected);
  EXPECT_EQ(s.peer, zebra_peer);
  EXPECT_EQ(s.resyncs, 0u) << "the intruder counted as zebra's reconnect";
  EXPECT_NE(Logs().find("refused a connection"), std::string::npos) << Logs();
  EXPECT_EQ(Routes(), 1u) << "the intruder's route was taken";

  // zebra's feed is untouched.
  asio::write(zebra, asio::buffer(RouteFrame("198.51.101.0/24")));
  EXPECT_TRUE(WaitFor([&] { return Routes() == 2; })) << Logs();

  // Once zebra goes, the next connection is zebra's again.
  zebra.close();
  ASSERT_TRUE(WaitFor([&] { return !Stats().connected; }));
  tcp::socket again(client_io);
  again.connect(Endpoint());
  ASSERT_TRUE(WaitFor([&] { return Stats().connected; }));
  EXPECT_EQ(Stats().connections, 2u);
  EXPECT_EQ(Stats().refused, 1u);
}

// Found by fibnicd_flood_test: every refused connection logged a line, so a
// local user looping on connect() wrote ~10,000 journal lines a second. Now
// the first refusal is logged and the rest are counted, not logged.
TEST_F(FpmListener, RefusedConnectionFloodDoesNotFloodTheLog) {
  asio::io_context client_io;
  tcp::socket zebra(client_io);
  zebra.connect(Endpoint());
  ASSERT_TRUE(WaitFor([&] { return Stats().connected; }));
  for (int i = 0; i < 200; ++i) {
    tcp::socket intruder(client_io);
    intruder.connect(Endpoint());
  }
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
