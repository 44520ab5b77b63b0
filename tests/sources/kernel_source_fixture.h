// The kernel source's integration fixture: the test process in a fresh
// network namespace with k0 (FIBNIC port 0; its far end k0p in a peer
// namespace answering for 10.0.0.9) and k1 (far end k1p beside it), and a
// KernelSource feeding a RecordingSink on its own io thread.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <boost/asio.hpp>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "sources/kernel/kernel_source.h"
#include "tests/sources/recording_sink.h"
#include "tests/support/netns_util.h"
#include "tests/support/on_loop.h"
#include "tests/support/parse.h"

namespace fibnic::testing {

using namespace std::chrono_literals;

class KernelSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::EnterNewNetns();
    peer_ns = "fibnic-kpeer-" + std::to_string(getpid());
    // k0: a FIBNIC port (its far end k0p lives in a peer namespace that
    // answers ARP for 10.0.0.9); k1: not a FIBNIC port.
    MustSh("ip netns add " + peer_ns);
    MustSh("ip link add k0 type veth peer name k0p && ip link set k0p netns " + peer_ns);
    MustSh("ip addr add 10.0.0.1/24 dev k0 && ip link set k0 up");
    MustSh("ip netns exec " + peer_ns + " sh -c 'ip addr add 10.0.0.9/24 dev k0p && ip link set k0p up'");
    MustSh("ip link add k1 type veth peer name k1p && ip addr add 10.1.0.1/24 dev k1 && ip link set k1 up && ip link set k1p up");
  }
  void TearDown() override {
    if (source) boost::asio::post(io, [this] { source->Stop(); });
    work.reset();
    io.stop();
    if (io_thread.joinable()) io_thread.join();
    Sh("ip netns del " + peer_ns + " 2>/dev/null");
  }
  void StartSource(KernelSourceConfig cfg, PortNames ports = {{"k0", 0}}) {
    cfg.ports = std::move(ports);
    cfg.log = [](const std::string& m) { std::cout << "kernel: " << m << std::endl; };
    source = std::make_unique<KernelSource>(io, sink, cfg);
    ASSERT_TRUE(source->Start().ok());
    io_thread = std::thread([this] { io.run(); });
  }
  KernelSourceStats Stats() {
    return OnLoop(io, [this] { return source->stats(); });
  }
  std::optional<std::vector<NextHop>> PathsOf(const std::string& p) { return sink.PathsOf(P(p)); }
  bool RouteIs(const std::string& p, const std::optional<std::vector<NextHop>>& want) {
    return WaitFor([&] { return PathsOf(p) == want; }, 10s);
  }
  // Runs fn while the source's loop is held in a task the test posted, so
  // the kernel's messages about what fn changes wait unread until it returns.
  void WhileHeld(const std::function<void()>& fn) {
    std::promise<void> release, held;
    auto released = release.get_future().share();  // the task may outlive this frame
    boost::asio::post(io, [&held, released] {
      held.set_value();
      released.wait();
    });
    held.get_future().wait();
    fn();
    release.set_value();
  }
  // Runs `ip -batch FILE` while the source's loop is held: a burst larger
  // than the socket's buffer loses events (an overrun).
  void RunStalled(const std::string& batch) {
    int rc = 0;
    std::string out;
    WhileHeld([&] { out = Sh("ip -batch " + batch + " 2>&1", &rc); });
    ASSERT_EQ(rc, 0) << out;
  }
  // The most routes given to the RIB between two runs of a task the test
  // posts to the loop (seen: the running count at each run).
  static uint64_t MostBetweenTurns(const std::vector<uint64_t>& seen) {
    uint64_t most = 0;
    for (size_t i = 1; i < seen.size(); ++i) most = std::max(most, seen[i] - seen[i - 1]);
    return most;
  }
  std::optional<Neighbor> NeighOf(const std::string& a) {
    auto n = sink.neighbors();
    auto it = n.find(A(a));
    if (it == n.end()) return std::nullopt;
    return it->second;
  }

  std::string peer_ns;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread io_thread;
  RecordingSink sink;
  std::unique_ptr<KernelSource> source;
  const std::vector<NextHop> host{NextHop::ToHost()};
};

}  // namespace fibnic::testing
