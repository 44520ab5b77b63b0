// Offload replies to zebra, end to end over TCP: a client playing zebra sends
// routes through a real FpmSource whose states come from a scripted oracle
// and whose routes are a plain map playing the kernel's (zebra installs each
// route in the kernel before it sends it), and reads what comes back — one
// FPM frame per reply, RTM_NEWROUTE with NLM_F_REQUEST, zebra's protocol and
// table, the state's flags. Checked: a reply per route sent (also when
// re-sent unchanged, and after a reconnect for every replayed route), none
// while nothing changed, a changed state found by the walk after a commit, a
// failed push, a route the kernel brings after zebra's frame, the kernel's
// routes of other daemons never answered, and a zebra that does not read
// (bounded buffer, overruns counted, the rest sent at the next quiet point).
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio.hpp>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <cstring>
#include <iostream>
#include <thread>

#include "sources/fpm/fpm_source.h"
#include "tests/sources/fake_route_notes.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"
#include "tests/support/fake_zebra.h"
#include "tests/support/netns_util.h"
#include "tests/support/on_loop.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::FakeZebra;
using testing::FpmReply;
using testing::InlineRoute;
using testing::P;
using testing::Via;

// States as a test scripts them (offloaded unless set); every question is
// answered at once. A route the kernel does not hold is not on the device:
// kNone, as the Fib answers.
class ScriptedOracle : public FpmOffloadOracle {
 public:
  explicit ScriptedOracle(const testing::FakeRouteNotes& kernel) : kernel_(kernel) {}
  void Ask(std::vector<Prefix> prefixes, std::function<void(std::vector<FpmOffload>)> answer) override {
    std::vector<FpmOffload> out;
    {
      std::lock_guard<std::mutex> lock(mu);
      for (const Prefix& p : prefixes) {
        auto it = states.find(p);
        out.push_back(!kernel_.Find(p, 254) ? FpmOffload::kNone
                      : failing             ? FpmOffload::kFailed
                      : it == states.end()  ? FpmOffload::kOffloaded
                                            : it->second);
      }
      ++questions;
    }
    answer(std::move(out));
  }
  uint64_t commits() const override { return commit_count.load(); }
  void Set(const std::string& p, FpmOffload s) {
    std::lock_guard<std::mutex> lock(mu);
    states[P(p)] = s;
  }

  std::mutex mu;
  std::map<Prefix, FpmOffload> states;
  bool failing = false;
  int questions = 0;
  std::atomic<uint64_t> commit_count{0};

 private:
  const testing::FakeRouteNotes& kernel_;
};

NlRoute Bgp(const std::string& prefix) { return InlineRoute(prefix, {Via("192.0.2.1", 10)}); }

class FpmOffloadTest : public ::testing::Test {
 protected:
  void Start(size_t buffer = 1 << 20) {
    FpmSourceConfig cfg;
    cfg.port = 0;
    cfg.offload_quiet = 100ms;
    cfg.offload = &oracle;
    cfg.routes = &kernel;
    cfg.offload_walk_every = 200ms;
    cfg.offload_buffer = buffer;
    cfg.log = [](const std::string&) {};
    source = std::make_unique<FpmSource>(io, cfg);
    ASSERT_TRUE(source->Start().ok());
    thread = std::thread([this] { io.run(); });
  }
  void TearDown() override {
    if (source) boost::asio::post(io, [this] { source->Stop(); });
    work.reset();
    io.stop();
    if (thread.joinable()) thread.join();
  }
  FpmSourceStats Stats() {
    return testing::OnLoop(io, [this] { return source->stats(); });
  }

  testing::FakeRouteNotes kernel;
  ScriptedOracle oracle{kernel};
  testing::RecordingSink sink;
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread thread;
  std::unique_ptr<FpmSource> source;
};

TEST_F(FpmOffloadTest, OneReplyPerRouteSentCarryingZebrasProtocolAndTheState) {
  Start();
  oracle.Set("10.2.0.0/16", FpmOffload::kTrapped);
  oracle.Set("2001:db8::/32", FpmOffload::kOffloaded);
  FakeZebra zebra(source->port(), &kernel);
  NlRoute ospf = Bgp("10.2.0.0/16");
  ospf.protocol = RTPROT_OSPF;
  zebra.Send(Bgp("10.1.0.0/16"));
  zebra.Send(ospf);
  zebra.Send(InlineRoute("2001:db8::/32", {Via("fe80::1", 10)}));
  auto replies = zebra.Read(3);
  ASSERT_EQ(replies.size(), 3u);
  std::map<Prefix, FpmReply> by;
  for (const FpmReply& r : replies) by[r.prefix] = r;
  ASSERT_EQ(by.size(), 3u);
  for (const auto& [p, r] : by) {
    EXPECT_TRUE(r.nlmsg_flags & NLM_F_REQUEST) << p.ToString();
    EXPECT_EQ(r.table, 254u) << p.ToString();
  }
  EXPECT_EQ(by[P("10.1.0.0/16")].protocol, RTPROT_BGP);
  EXPECT_EQ(by[P("10.1.0.0/16")].rtm_flags, unsigned{RTM_F_OFFLOAD});
  EXPECT_EQ(by[P("10.2.0.0/16")].protocol, RTPROT_OSPF);
  EXPECT_EQ(by[P("10.2.0.0/16")].rtm_flags, unsigned{RTM_F_OFFLOAD | RTM_F_TRAP});
  EXPECT_EQ(by[P("2001:db8::/32")].rtm_flags, unsigned{RTM_F_OFFLOAD});

  // Nothing changed, nothing committed: no reply, however long we wait.
  EXPECT_TRUE(zebra.Read(1, 600ms).empty());
  // zebra re-sends a route unchanged (it waits for a reply again): one reply.
  zebra.Send(Bgp("10.1.0.0/16"));
  replies = zebra.Read(2, 1s);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].prefix, P("10.1.0.0/16"));

  // A state changes without a frame (a neighbour went): after a commit, the
  // walk at the next quiet point tells zebra — that route only.
  oracle.Set("10.1.0.0/16", FpmOffload::kTrapped);
  ++oracle.commit_count;
  replies = zebra.Read(2, 2s);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].prefix, P("10.1.0.0/16"));
  EXPECT_EQ(replies[0].rtm_flags, unsigned{RTM_F_OFFLOAD | RTM_F_TRAP});

  // A failed push: the routes asked about then are reported failed.
  {
    std::lock_guard<std::mutex> lock(oracle.mu);
    oracle.failing = true;
  }
  zebra.Send(Bgp("10.3.0.0/16"));
  replies = zebra.Read(1);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].rtm_flags, unsigned{RTM_F_OFFLOAD_FAILED});
  const auto st = Stats();
  EXPECT_EQ(st.offload.failed, 1u);
  EXPECT_EQ(st.offload.overruns, 0u);
  EXPECT_GE(st.offload.walks, 1u);
}

TEST_F(FpmOffloadTest, ReconnectRepliesForEveryReplayedRoute) {
  Start();
  {
    FakeZebra zebra(source->port(), &kernel);
    for (int i = 0; i < 50; ++i) zebra.Send(Bgp("10.0." + std::to_string(i) + ".0/24"));
    EXPECT_EQ(zebra.Read(50).size(), 50u);
  }
  ASSERT_TRUE(testing::WaitFor([&] { return !Stats().connected; }, 5s));
  // The new zebra replays 40 of them, unchanged: each one gets its reply.
  FakeZebra zebra(source->port(), &kernel);
  for (int i = 0; i < 40; ++i) zebra.Send(Bgp("10.0." + std::to_string(i) + ".0/24"));
  auto replies = zebra.Read(41, 2s);
  EXPECT_EQ(replies.size(), 40u);
  std::set<Prefix> seen;
  for (const FpmReply& r : replies) seen.insert(r.prefix);
  EXPECT_EQ(seen.size(), 40u);
  EXPECT_FALSE(seen.count(P("10.0.45.0/24"))) << "a route this zebra did not send";
}

// The kernel's word on a route can reach fibnicd after zebra's frame: the
// route is answered once the kernel has it and something was committed.
TEST_F(FpmOffloadTest, RouteTheKernelBringsAfterZebrasFrameIsAnswered) {
  Start();
  FakeZebra zebra(source->port());  // sends without the kernel taking the route
  zebra.Send(Bgp("10.7.0.0/16"));
  EXPECT_TRUE(zebra.Read(1, 500ms).empty()) << "answered before the kernel had the route";
  kernel.Add(P("10.7.0.0/16"), RTPROT_BGP);
  ++oracle.commit_count;
  const auto replies = zebra.Read(1, 3s);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].prefix, P("10.7.0.0/16"));
  EXPECT_EQ(replies[0].rtm_flags, unsigned{RTM_F_OFFLOAD});
  EXPECT_EQ(kernel.note(P("10.7.0.0/16")), static_cast<uint8_t>(FpmOffload::kOffloaded));
}

// The walks answer the kernel's routes of zebra's protocols (those its frames
// carried) only: a route BIRD or an operator put in the kernel is never
// answered, nor one of another table.
TEST_F(FpmOffloadTest, KernelRoutesOfOtherDaemonsAreNeverAnswered) {
  Start();
  kernel.Add(P("10.8.0.0/16"), /*RTPROT_BIRD=*/12);
  kernel.Add(P("10.9.0.0/16"), RTPROT_STATIC);
  kernel.Add(P("10.10.0.0/16"), RTPROT_BGP, /*table=*/100);
  FakeZebra zebra(source->port(), &kernel);
  zebra.Send(Bgp("10.1.0.0/16"));
  ASSERT_EQ(zebra.Read(1).size(), 1u);
  // Commits, quiet points, walks over every route: still nothing for them.
  for (int i = 0; i < 3; ++i) {
    ++oracle.commit_count;
    for (const FpmReply& r : zebra.Read(1, 500ms)) ADD_FAILURE() << "answered " << r.prefix.ToString();
  }
  EXPECT_GE(Stats().offload.walks, 1u);
  // A route of zebra's protocol in the table it follows is zebra's: a walk
  // answers it although no frame named it (zebra installed it; its frame is
  // still to come).
  kernel.Add(P("10.11.0.0/16"), RTPROT_BGP);
  ++oracle.commit_count;
  const auto replies = zebra.Read(1, 3s);
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0].prefix, P("10.11.0.0/16"));
}

TEST_F(FpmOffloadTest, ZebraNotReadingOverrunsABoundedBufferThenCatchesUp) {
  // Room for ~80 replies per buffer; zebra sends 3000 routes while it does
  // not read. Once it reads again, every route has its reply. Its receive
  // window is small: otherwise the sockets' buffers (autotuned to hundreds
  // of KB) took every reply as it came and the bounded buffer never filled.
  Start(/*buffer=*/4000);
  FakeZebra zebra(source->port(), &kernel, /*rcvbuf=*/4096);
  for (int i = 0; i < 3000; ++i) zebra.Send(Bgp("10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".0/24"));
  std::set<Prefix> seen;
  const auto end = std::chrono::steady_clock::now() + 20s;
  while (seen.size() < 3000 && std::chrono::steady_clock::now() < end) {
    for (const FpmReply& r : zebra.Read(3000, 200ms)) seen.insert(r.prefix);
  }
  EXPECT_EQ(seen.size(), 3000u);
  const auto st = Stats();
  std::cout << "replies " << st.offload.replies << ", overruns " << st.offload.overruns << ", walks "
            << st.offload.walks << ", questions " << st.offload.questions << std::endl;
  EXPECT_GT(st.offload.overruns, 0u) << "the buffer never filled: the test did not test it";
  EXPECT_EQ(st.offload.replies, 3000u) << "a route replied twice";
}

}  // namespace
}  // namespace fibnic
