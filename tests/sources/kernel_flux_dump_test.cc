// zebra's kernel deletions lost in an overrun (issue #16): the kernel
// source's socket (4 KiB receive buffer) overflows while `ip -batch`
// deletes zebra's routes (proto bgp) that FPM still holds, the source
// re-dumps, and the FPM table — fed by the source as fibnicd feeds it —
// must then punt exactly the prefixes the kernel no longer has and forward
// the others as before. The oracle is the kernel's own table
// (`ip -j route show proto bgp`).
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>

#include "sources/netlink/netlink_build.h"
#include "tests/sources/kernel_fpm_fixture.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::MustSh;
using testing::P;
using testing::Sh;
using testing::WaitFor;

std::string PrefixNo(int i) { return "10." + std::to_string(100 + i / 250) + "." + std::to_string(i % 250) + ".0/24"; }

std::set<Prefix> KernelBgpRoutes() {
  std::set<Prefix> out;
  for (const auto& r : nlohmann::json::parse(Sh("ip -4 -j route show proto bgp"))) {
    out.insert(*Prefix::Parse(r.value("dst", "")));
  }
  return out;
}

class KernelFluxDumpTest : public testing::KernelFpmTest {
 protected:
  void Start() {
    KernelSourceConfig cfg;
    cfg.rcvbuf_bytes = 4096;  // tiny: a burst overflows it
    StartWithFpm(cfg);
  }
  // zebra's word over FPM on route i (via 10.0.0.gw on k0).
  void Fpm(int i, int gw, bool del = false) {
    NlRoute r;
    r.prefix = P(PrefixNo(i));
    r.table = 254;
    r.protocol = RTPROT_BGP;
    r.type = RTN_UNICAST;
    r.del = del;
    if (!del) {
      NlPath path;
      path.gateway = *IpAddr::Parse("10.0.0." + std::to_string(gw));
      path.ifindex = k0;
      r.paths = {path};
    }
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(OnIo([&] { return fpm->ApplyFrame(m.data(), m.size()); }).ok());
  }
  std::optional<std::vector<NextHop>> Device(const Prefix& p) {
    auto r = fpm_sink.routes();
    auto it = r.find(p);
    if (it == r.end()) return std::nullopt;
    return it->second.paths;
  }
};

TEST_F(KernelFluxDumpTest, DeletionsLostInAnOverrunLeaveWhatTheKernelNoLongerHasToTheCover) {
  const uint64_t seed = std::random_device{}();
  std::cout << "seed " << seed << std::endl;
  std::mt19937_64 rng(seed);
  constexpr int kRoutes = 3000;
  std::vector<int> gw(kRoutes);
  const std::string dir = "/tmp/fibnic-fd-" + std::to_string(getpid());
  MustSh("mkdir -p " + dir);
  {
    std::ofstream add(dir + "/add");
    for (int i = 0; i < kRoutes; ++i) {
      gw[i] = 2 + static_cast<int>(rng() % 5);
      add << "route add " << PrefixNo(i) << " via 10.0.0." << gw[i] << " proto bgp metric 20\n";
    }
  }
  MustSh("ip -batch " + dir + "/add");
  Start();
  ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 20s));
  // zebra's FPM stream brings the same routes: kernel and FPM agree.
  for (int i = 0; i < kRoutes; ++i) Fpm(i, gw[i]);
  ASSERT_EQ(OnIo([&] { return fpm->in_flux(); }), 0u);
  ASSERT_EQ(Device(P(PrefixNo(0))), (std::vector<NextHop>{{*IpAddr::Parse("10.0.0." + std::to_string(gw[0])), 0}}));
  // zebra deletes a random third from the kernel; FPM's deletes trail.
  std::vector<int> deleted;
  {
    std::ofstream del(dir + "/del");
    for (int i = 0; i < kRoutes; ++i) {
      if (rng() % 3 == 0) {
        del << "route del " << PrefixNo(i) << " proto bgp metric 20\n";
        deleted.push_back(i);
      }
    }
  }
  const uint64_t overruns = Stats().overruns;
  ASSERT_NO_FATAL_FAILURE(RunStalled(dir + "/del"));  // its events are lost
  Sh("rm -rf " + dir);
  ASSERT_TRUE(WaitFor([&] { return Stats().overruns > overruns && !Stats().dumping; }, 30s))
      << "no overrun: the test did not lose events";
  const std::set<Prefix> kernel = KernelBgpRoutes();
  ASSERT_EQ(kernel.size(), static_cast<size_t>(kRoutes) - deleted.size());
  // The device forwards where the kernel has the route and has none where
  // it does not, as the kernel (FPM still holds them all).
  std::string wrong;
  int wrong_count = 0;
  for (int i = 0; i < kRoutes; ++i) {
    const Prefix p = P(PrefixNo(i));
    const std::optional<std::vector<NextHop>> want =
        kernel.count(p) ? std::optional(std::vector<NextHop>{{*IpAddr::Parse("10.0.0." + std::to_string(gw[i])), 0}})
                        : std::nullopt;
    if (Device(p) != want && ++wrong_count <= 10) {
      wrong += "  " + p.ToString() + (kernel.count(p) ? ": in the kernel, not forwarded\n" : ": not in the kernel, forwarded\n");
    }
  }
  EXPECT_EQ(wrong_count, 0) << wrong;
  const auto [gone, punting] = OnIo([&] { return std::pair{fpm->counts().kernel_dump_gone, fpm->flux_punting()}; });
  std::cout << "overruns " << Stats().overruns << ", deleted " << deleted.size() << ", taken as gone at the dump's end "
            << gone << ", punting " << punting << std::endl;
  EXPECT_EQ(punting, deleted.size());
  // FPM's deletes catch up: the device agrees with the kernel, nothing punts.
  for (int i : deleted) Fpm(i, 0, true);
  EXPECT_EQ(OnIo([&] { return fpm->flux_punting(); }), 0u);
  for (int i : deleted) EXPECT_EQ(Device(P(PrefixNo(i))), std::nullopt) << PrefixNo(i);
}

}  // namespace
}  // namespace fibnic
