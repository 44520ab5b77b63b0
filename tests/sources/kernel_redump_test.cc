// A re-dump the kernel marks interrupted (NLM_F_DUMP_INTR) may have skipped
// what the kernel still holds: an IPv4 address dump goes on by position, so
// addresses deleted before its cursor make it skip as many after it (6.18;
// the flag comes on the next message it sends: here k1's address). The
// source swept after such a dump as after a complete one: k0's own address,
// skipped, left its view, and once the deletions' events (read during the
// dump, held) were applied k0 had no IPv4 address left, so its routes went —
// for the device, to their cover — until the next dump brought them back.
// Nothing may be swept after an interrupted dump; the one after it sweeps.
#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <future>

#include "tests/sources/kernel_source_fixture.h"

namespace fibnic::testing {
namespace {

TEST_F(KernelSourceTest, InterruptedRedumpSweepsNothingTheKernelHolds) {
  // k0's own address after kOthers others in its list: the dump reads the
  // others first, over several turns of the loop.
  constexpr int kOthers = 8000;
  const std::string dir = "/tmp/fibnic-kredump-" + std::to_string(getpid());
  MustSh("mkdir -p " + dir);
  {
    std::ofstream add(dir + "/add"), del(dir + "/del");
    for (int i = 0; i < kOthers; ++i) {
      const std::string a = "10.200." + std::to_string(i >> 8) + "." + std::to_string(i & 255) + "/32 dev k0\n";
      add << "addr add " << a;
      del << "addr del " << a;
    }
    // Routes enough for the dump's route part to take several turns of the
    // loop: the deletions' events are read (and held) before it ends.
    for (int i = 0; i < 20000; ++i) {
      add << "route add 100." << (i >> 8) << "." << (i & 255) << ".0/24 via 10.1.0.2 dev k1\n";
    }
  }
  MustSh("ip addr del 10.0.0.1/24 dev k0 && ip -batch " + dir + "/add && ip addr add 10.0.0.1/24 dev k0");
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.9");
  StartSource({});
  const std::vector<NextHop> via_peer{{A("10.0.0.9"), 0}};
  ASSERT_TRUE(RouteIs("198.51.100.0/24", via_peer));
  ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 60s));
  sink.TakeLog();

  // Re-dump; once it has read a thousand messages (in its address part:
  // links and neighbours are a few), delete the others from the loop itself.
  const uint64_t before = Stats().messages;
  std::atomic<bool> deleted{false};
  std::promise<void> over;
  std::function<void()> tick = [&] {
    const KernelSourceStats st = source->stats();
    if (!deleted && st.messages - before >= 1000) {
      int rc = 0;
      const std::string out = Sh("ip -batch " + dir + "/del 2>&1", &rc);
      EXPECT_EQ(rc, 0) << out;
      deleted = true;
    }
    if (deleted && !st.dumping) {
      over.set_value();
      return;
    }
    boost::asio::post(io, tick);
  };
  boost::asio::post(io, [&] {
    source->RequestResync();
    boost::asio::post(io, tick);
  });
  ASSERT_EQ(over.get_future().wait_for(120s), std::future_status::ready);
  Sh("rm -rf " + dir);
  ASSERT_NE(Sh("ip -4 addr show dev k0").find("10.0.0.1/24"), std::string::npos);
  ASSERT_NE(Sh("ip route get 198.51.100.1").find("via 10.0.0.9 dev k0"), std::string::npos);
  ASSERT_GE(Stats().resyncs, 2u) << "the kernel did not mark the re-dump interrupted: nothing was shown";
  // The route never left: no call for it since the first dump.
  for (const std::string& call : sink.TakeLog()) {
    EXPECT_EQ(call.find("198.51.100.0/24"), std::string::npos) << call;
    EXPECT_EQ(call.find(" 10.0.0.0/24"), std::string::npos) << call;
  }
  EXPECT_EQ(PathsOf("198.51.100.0/24"), via_peer);
  EXPECT_EQ(Stats().errors, 0u) << Stats().last_error;
}

}  // namespace
}  // namespace fibnic::testing
