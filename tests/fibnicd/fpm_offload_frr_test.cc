// Offload replies against real FRR: fibnicd's pieces (the kernel source →
// Pipeline → Fib → a fake device; the FpmSource hearing which routes zebra
// installed, their states from FibOffloadOracle) under zebra
// `-M dplane_fpm_nl`, with bgpd learning routes from an eBGP peer and
// advertising them to a second one (the observer).
//
// A newer FRR (Debian testing's frr, 10.4 or later, in a debootstrap'd root,
// FIBNIC_FRR_NEW_ROOT; scripts/frr-root.sh), zebra
// `--asic-offload=notify_on_offload`, bgpd `bgp suppress-fib-pending`:
// zebra's `show ip route json` shows
// `offloaded` for a route the device forwards and `offloaded` + `trapped`
// for one it punts (a /25, a martian); the observer receives a route only
// once it is on the device (the pipeline is held, the route waits in zebra
// unadvertised; released, it reaches the device and then the observer), and
// the punted routes are advertised too.
//
// FRR 10.3 (Debian 13's, FIBNIC_FRR103_ROOT) reads the replies but cannot
// apply them: it takes the table field for a VRF id (FRR commit 29122bc9,
// undone in 10.4 by b2fc1679), finds no route and drops them — harmlessly.
// FRR 8.4 (the host's) reads and drops them. Either way the FPM connection
// stays up with no error and zebra keeps working.
#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <cstdlib>
#include <future>
#include <iostream>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fibnicd/fpm_offload_oracle.h"
#include "fibnicd/pipeline.h"
#include "hwif/fake_device_writer.h"
#include "sources/fpm/fpm_source.h"
#include "sources/kernel/kernel_source.h"
#include "tests/sources/frr_harness.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::FrrHarness;
using testing::FrrOptions;
using testing::WaitFor;

std::string Join(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += x + " ";
  return out;
}

class FpmOffloadFrrTest : public ::testing::Test {
 protected:
  void Start(FrrOptions options, const std::vector<std::string>& announced) {
    testing::EnterNewNetns();
    frr = std::make_unique<FrrHarness>(std::move(options));
    pipeline.Start();
    FpmSourceConfig cfg;
    cfg.port = 0;
    cfg.offload_quiet = 300ms;
    cfg.offload = &oracle;
    cfg.offload_walk_every = 1s;
    cfg.log = [](const std::string& m) { std::cout << "fpm: " << m << std::endl; };
    source = std::make_unique<FpmSource>(io, cfg);
    ASSERT_TRUE(source->Start().ok());
    io_thread = std::thread([this] { io.run(); });
    std::promise<Status> synced;
    pipeline.FinishInitialSync([&](Status st, const Fib&) { synced.set_value(st); });
    ASSERT_TRUE(synced.get_future().get().ok());
    frr->Setup(source->port(), announced, /*nhg=*/true);
    KernelSourceConfig kc;
    kc.ports = FrrHarness::Ports();
    kc.log = [](const std::string& m) { std::cout << "kernel: " << m << std::endl; };
    std::promise<bool> kernel_started;
    boost::asio::post(io, [&] {
      kernel = std::make_unique<KernelSource>(io, pipeline.sink(), kc);
      kernel_started.set_value(kernel->Start().ok());
    });
    ASSERT_TRUE(kernel_started.get_future().get());
    pipeline.sink().UpsertNeighbor(Neighbor{*IpAddr::Parse("10.99.0.2"), frr->PeerMac(), 1, NeighState::kReachable});
  }
  void TearDown() override {
    std::promise<void> stopped;
    boost::asio::post(io, [&] {
      if (source) source->Stop();
      if (kernel) kernel->Stop();
      stopped.set_value();
    });
    stopped.get_future().wait();
    work.reset();
    io.stop();
    if (io_thread.joinable()) io_thread.join();
    pipeline.Stop();
    if (HasFailure() && frr) std::cout << frr->Logs() << std::endl;
  }
  FpmSourceStats Stats() {
    std::promise<FpmSourceStats> p;
    boost::asio::post(io, [&] { p.set_value(source->stats()); });
    return p.get_future().get();
  }
  // What the device does with dst (read on the pipeline thread, which owns it).
  HwDecision OnDevice(const char* dst) {
    return pipeline.Query([&](const Fib&) {
      const std::vector<uint8_t> bar = EncodeBar(dev.device(), dev.generation());
      return HwLookup(bar.data(), bar.size(), *IpAddr::Parse(dst));
    });
  }
  bool Flag(const nlohmann::json& route, const char* flag) { return route.is_object() && route.value(flag, false); }

  FakeDeviceWriter dev;
  Pipeline pipeline{FibConfig{}, dev, BatchPolicy{}};
  FibOffloadOracle oracle{pipeline};
  boost::asio::io_context io;
  std::optional<boost::asio::executor_work_guard<boost::asio::io_context::executor_type>> work{io.get_executor()};
  std::thread io_thread;
  std::unique_ptr<FpmSource> source;
  std::unique_ptr<KernelSource> kernel;
  std::unique_ptr<FrrHarness> frr;
};

std::string RootOf(const char* env) {
  const char* root = std::getenv(env);
  EXPECT_TRUE(root && *root) << env << " unset: run through fpm_offload_frr_test.sh";
  return root ? root : "";
}

TEST_F(FpmOffloadFrrTest, FrrShowsOffloadAndAdvertisesOnlyWhatIsOnTheDevice) {
  const std::string root = RootOf("FIBNIC_FRR_NEW_ROOT");
  ASSERT_FALSE(root.empty());
  FrrOptions o;
  o.root = root;
  o.zebra_args = {"--asic-offload=notify_on_offload"};
  o.router_bgp = " bgp suppress-fib-pending\n";
  o.mgmtd = true;
  o.observer = true;
  // Forwarded; punted (longer than /24, its /24 not uniform); punted (martian).
  Start(o, {"203.0.113.0/24", "192.0.2.0/25", "240.1.0.0/16"});
  if (HasFatalFailure()) return;
  frr->StartZebra();
  frr->StartRouterBgpd();
  frr->StartPeer();
  frr->StartObserver();
  std::cout << frr->Vtysh("-c 'show version'").substr(0, 40) << std::endl;
  ASSERT_TRUE(WaitFor([&] { return frr->BgpEstablished() && frr->ObserverEstablished(); }, 60s)) << "BGP sessions";
  const std::set<std::string> all{"203.0.113.0/24", "192.0.2.0/25", "240.1.0.0/16"};
  std::set<std::string> seen;
  ASSERT_TRUE(WaitFor(
      [&] {
        seen = frr->ObserverRoutes();
        return std::includes(seen.begin(), seen.end(), all.begin(), all.end());
      },
      60s))
      << "the observer did not get every route (punted ones must be advertised too); it has " << Join(seen)
      << "\nzebra: " << frr->Vtysh("-d zebra -c 'show ip route json'") << "\nstats: " << Stats().offload.replies;
  const auto fwd = frr->ZebraRoute("203.0.113.0/24");
  EXPECT_TRUE(Flag(fwd, "offloaded")) << fwd.dump();
  EXPECT_FALSE(Flag(fwd, "trapped")) << fwd.dump();
  for (const char* p : {"192.0.2.0/25", "240.1.0.0/16"}) {
    const auto punted = frr->ZebraRoute(p);
    EXPECT_TRUE(Flag(punted, "offloaded") && Flag(punted, "trapped")) << p << ": " << punted.dump();
  }
  HwDecision d = OnDevice("203.0.113.7");
  EXPECT_TRUE(d.forward && d.port == 1) << d.ToString();
  EXPECT_FALSE(OnDevice("192.0.2.7").forward);

  // Hold the pipeline: a new route reaches zebra (and the kernel) but not
  // the device — zebra must not call it offloaded, the observer must not
  // hear of it. Released, it is on the device before the observer has it.
  auto gate = std::make_shared<std::promise<void>>();
  std::shared_future<void> open = gate->get_future().share();
  pipeline.Post([open](const Fib&) { open.wait(); });
  frr->PeerNetwork("198.51.100.0/24", true);
  ASSERT_TRUE(WaitFor([&] { return Flag(frr->ZebraRoute("198.51.100.0/24"), "installed"); }, 30s))
      << "zebra did not install the new route";
  std::this_thread::sleep_for(3s);
  const auto held = frr->ZebraRoute("198.51.100.0/24");
  EXPECT_FALSE(Flag(held, "offloaded")) << held.dump();
  EXPECT_FALSE(frr->ObserverRoutes().count("198.51.100.0/24")) << "advertised before it was on the device";
  gate->set_value();
  ASSERT_TRUE(WaitFor([&] { return frr->ObserverRoutes().count("198.51.100.0/24") != 0; }, 30s))
      << "not advertised once on the device";
  d = OnDevice("198.51.100.7");
  EXPECT_TRUE(d.forward && d.port == 1) << d.ToString();
  EXPECT_TRUE(Flag(frr->ZebraRoute("198.51.100.0/24"), "offloaded"));

  const auto st = Stats();
  std::cout << "replies " << st.offload.replies << " (offloaded " << st.offload.offloaded << ", trapped "
            << st.offload.trapped << "), questions " << st.offload.questions << ", walks " << st.offload.walks
            << std::endl;
  EXPECT_EQ(st.offload.overruns, 0u);
  EXPECT_EQ(st.errors, 0u) << st.last_error;
  EXPECT_EQ(st.connections, 1u) << "zebra dropped the FPM connection";
}

// zebra's own FPM counters: it read our bytes, and neither closed nor lost the connection.
void ExpectFpmConnectionUnharmed(FrrHarness& frr) {
  const auto counters = nlohmann::json::parse(frr.Vtysh("-d zebra -c 'show fpm counters json'"), nullptr, false);
  std::cout << "zebra fpm counters: " << counters.dump() << std::endl;
  ASSERT_TRUE(counters.is_object());
  EXPECT_GT(counters.value("bytes-read", 0), 0);
  EXPECT_EQ(counters.value("connection-closes", -1), 0);
  EXPECT_EQ(counters.value("connection-errors", -1), 0);
  EXPECT_TRUE(frr.ZebraAlive());
}

TEST_F(FpmOffloadFrrTest, Frr103ReadsTheRepliesButCannotApplyThem) {
  const std::string root = RootOf("FIBNIC_FRR103_ROOT");
  ASSERT_FALSE(root.empty());
  FrrOptions o;
  o.root = root;
  o.zebra_args = {"--asic-offload=notify_on_offload"};
  o.zebra_conf = "debug zebra dplane\n";
  o.mgmtd = true;
  Start(o, {"203.0.113.0/24"});
  if (HasFatalFailure()) return;
  frr->StartZebra();
  frr->StartRouterBgpd();
  frr->StartPeer();
  std::cout << frr->Vtysh("-c 'show version'").substr(0, 40) << std::endl;
  ASSERT_TRUE(WaitFor([&] { return frr->BgpEstablished(); }, 60s)) << "BGP session";
  ASSERT_TRUE(WaitFor([&] { return OnDevice("203.0.113.7").forward && Stats().offload.offloaded >= 1; }, 60s));
  // zebra parsed the reply and found no route for "VRF 254" (the table).
  ASSERT_TRUE(WaitFor([&] { return frr->ZebraLog().find("Failed to process dplane notification") != std::string::npos; }, 10s))
      << "FRR 10.3 no longer drops the replies: update configs/frr/README.md and this test";
  const auto route = frr->ZebraRoute("203.0.113.0/24");
  EXPECT_TRUE(Flag(route, "installed")) << route.dump();
  EXPECT_FALSE(Flag(route, "offloaded")) << route.dump();
  frr->PeerNetwork("198.51.100.0/24", true);
  ASSERT_TRUE(WaitFor([&] { return OnDevice("198.51.100.7").forward; }, 60s)) << "zebra stopped feeding us";
  ExpectFpmConnectionUnharmed(*frr);
  const auto st = Stats();
  EXPECT_EQ(st.connections, 1u);
  EXPECT_EQ(st.errors, 0u) << st.last_error;
}

TEST_F(FpmOffloadFrrTest, Frr84ReadsAndDropsTheReplies) {
  Start(FrrOptions{}, {"203.0.113.0/24", "192.0.2.0/25"});
  if (HasFatalFailure()) return;
  frr->StartZebra();
  frr->StartRouterBgpd();
  frr->StartPeer();
  ASSERT_TRUE(WaitFor([&] { return frr->BgpEstablished(); }, 60s)) << "BGP session";
  ASSERT_TRUE(WaitFor([&] { return Stats().offload.replies >= 2; }, 60s)) << "no replies sent";
  frr->PeerNetwork("198.51.100.0/24", true);
  ASSERT_TRUE(WaitFor([&] { return OnDevice("198.51.100.7").forward; }, 60s)) << "zebra stopped feeding us";
  std::this_thread::sleep_for(1s);
  ExpectFpmConnectionUnharmed(*frr);
  const auto st = Stats();
  EXPECT_EQ(st.connections, 1u);
  EXPECT_EQ(st.errors, 0u) << st.last_error;
}

}  // namespace
}  // namespace fibnic
