// An operator's `ip route replace` over zebra's route, with the FPM source
// on (the kernel source keeps none of zebra's routes): the kernel announces
// only the new route, and zebra's must leave the FPM source's table, else
// the device forwards along it (FPM's distance beats the kernel source's)
// while the kernel forwards by the operator's. The oracle is the kernel's
// own answer (`ip route get`).
#include <gtest/gtest.h>
#include <linux/rtnetlink.h>

#include <nlohmann/json.hpp>

#include "sources/netlink/netlink_build.h"
#include "tests/sources/kernel_fpm_fixture.h"

namespace fibnic {
namespace {

using namespace std::chrono_literals;
using testing::A;
using testing::MustSh;
using testing::P;
using testing::Sh;
using testing::WaitFor;

// The gateway the kernel sends `addr` to (`ip route get`), "" when none.
std::string KernelGateway(const std::string& addr) {
  const auto j = nlohmann::json::parse(Sh("ip -j route get " + addr + " 2>/dev/null || echo '[]'"));
  return j.empty() ? "" : j[0].value("gateway", "");
}

class KernelOperatorReplaceTest : public testing::KernelFpmTest {
 protected:
  void Start() {
    StartWithFpm();
    ASSERT_TRUE(WaitFor([&] { return !Stats().dumping; }, 20s));
  }
  // zebra's word over FPM: prefix p via gateway gw on k0 (inline), on the
  // source's thread where the FPM table lives.
  void Fpm(const std::string& p, const std::string& gw) {
    NlRoute r;
    r.prefix = P(p);
    r.table = 254;
    r.protocol = RTPROT_BGP;
    r.type = RTN_UNICAST;
    NlPath path;
    path.gateway = A(gw);
    path.ifindex = k0;
    r.paths = {path};
    const auto m = BuildRouteMessage(r);
    ASSERT_TRUE(OnIo([&] { return fpm->ApplyFrame(m.data(), m.size()); }).ok());
  }
  // What the FPM source gives the RIB for p: "punt", "none" or the gateway.
  std::string Device(const std::string& p) {
    const auto r = fpm_sink.routes();
    auto it = r.find(P(p));
    if (it == r.end()) return "none";
    if (it->second.paths.size() != 1) return "several";
    const NextHop& h = it->second.paths[0];
    if (h.to_host()) return "punt";
    return h.gateway ? h.gateway->ToString() : "-";
  }
  bool DeviceBecomes(const std::string& p, const std::string& want) {
    return WaitFor([&] { return Device(p) == want; }, 10s);
  }
};

TEST_F(KernelOperatorReplaceTest, AnOperatorsReplaceOfZebrasRouteTakesItOffTheDevice) {
  MustSh("ip route add 198.51.100.0/24 via 10.0.0.9 proto bgp metric 20");
  Start();
  Fpm("198.51.100.0/24", "10.0.0.9");
  EXPECT_TRUE(DeviceBecomes("198.51.100.0/24", "10.0.0.9")) << Device("198.51.100.0/24");
  // `ip route replace` by hand over zebra's route: the kernel announces only
  // the new route (the kernel source's own), zebra's is gone.
  MustSh("ip route replace 198.51.100.0/24 via 10.0.0.8 metric 20");
  ASSERT_EQ(KernelGateway("198.51.100.1"), "10.0.0.8");
  EXPECT_TRUE(DeviceBecomes("198.51.100.0/24", "none")) << "FPM's route stays: " << Device("198.51.100.0/24");
  EXPECT_TRUE(RouteIs("198.51.100.0/24", std::vector<NextHop>{{A("10.0.0.8"), 0}}));  // the kernel source's
}

TEST_F(KernelOperatorReplaceTest, AnOperatorsIpv6ReplaceOfZebrasRouteTakesItOffTheDevice) {
  MustSh("ip -6 addr add 2001:db8::1/64 dev k0 nodad");
  MustSh("ip nexthop add id 1 via 2001:db8::9 dev k0 proto zebra");
  MustSh("ip -6 route add 2001:db8:300::/48 nhid 1 proto bgp metric 20");
  Start();
  Fpm("2001:db8:300::/48", "2001:db8::9");
  EXPECT_TRUE(DeviceBecomes("2001:db8:300::/48", "2001:db8::9")) << Device("2001:db8:300::/48");
  MustSh("ip -6 route replace 2001:db8:300::/48 via 2001:db8::8 dev k0 metric 20");
  ASSERT_EQ(KernelGateway("2001:db8:300::1"), "2001:db8::8");
  EXPECT_TRUE(DeviceBecomes("2001:db8:300::/48", "none")) << "FPM's route stays: " << Device("2001:db8:300::/48");
}

}  // namespace
}  // namespace fibnic
