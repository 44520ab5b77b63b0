// A routing daemon's restart replayed on the real Fib: three neighbours that
// carry both families (an IPv4 gateway and an IPv6 link-local behind one MAC
// and port) and connected /24s on every port, 2-bit codes (three slots). The
// IPv4 daemon restarts: its routes go, in batches, and come back; the IPv6
// routes stay. Every IPv6 destination keeps forwarding at every commit in
// between, and the codes are the ones from before. Checked on the compiled
// image with the device's own lookup.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "tests/support/parse.h"

namespace fibnic {
namespace {

using testing::A;
using testing::P;

std::vector<std::string> Forwarding(const Fib& fib, const std::vector<IpAddr>& probes) {
  const std::vector<uint8_t> bar = EncodeBar(fib.image());
  std::vector<std::string> out;
  for (const IpAddr& a : probes) {
    const HwDecision d = HwLookup(bar.data(), bar.size(), a);
    out.push_back(d.forward ? d.dst_mac.ToString() : "punt " + std::string(d.why));
  }
  return out;
}

void ReplayIpv4Restart(int code_bits) {
  SCOPED_TRACE(std::to_string(code_bits) + "-bit codes");
  FibConfig cfg;
  cfg.caps = code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  Fib fib(cfg);
  for (int p = 0; p < 4; ++p) {
    fib.UpsertRoute(Route{P("10.0." + std::to_string(p) + ".0/24"), RouteSource::kKernel, 0,
                          {NextHop{std::nullopt, static_cast<PortId>(p)}}});
  }
  fib.UpsertNeighbor(Neighbor{A("10.0.0.200"), MacAddr{{0x02, 0, 0, 0, 2, 0}}, 0, NeighState::kReachable});
  // Neighbours on ports 1-3, and with 4-bit codes more on port 0's LAN than there are codes.
  const int n = code_bits == 4 ? 20 : 3;
  std::vector<Route> v4;
  std::vector<IpAddr> probes;
  for (int k = 0; k < n; ++k) {
    const PortId port = static_cast<PortId>(k < 3 ? k + 1 : 0);
    const std::string gw = k < 3 ? "10.0." + std::to_string(k + 1) + ".2" : "10.0.0." + std::to_string(k + 7);
    const MacAddr mac{{0x02, 0, 0, 0, 1, static_cast<uint8_t>(k)}};
    const std::string ll = "fe80::" + std::to_string(k + 1);
    fib.UpsertNeighbor(Neighbor{A(gw), mac, port, NeighState::kReachable});
    fib.UpsertNeighbor(Neighbor{A(ll), mac, port, NeighState::kReachable});
    for (int i = 0; i < 40 - k; ++i) {
      v4.push_back(Route{P(std::to_string(20 + k) + "." + std::to_string(i) + ".0.0/16"), RouteSource::kKernel, 0,
                         {NextHop{A(gw), port}}});
    }
    for (int i = 0; i < 30 - k; ++i) {
      const std::string net = "2001:db8:" + std::to_string(100 + k) + ":" + std::to_string(i) + "::";
      fib.UpsertRoute(Route{P(net + "/64"), RouteSource::kKernel, 0, {NextHop{A(ll), port}}});
      probes.push_back(A(net + "9"));
    }
  }
  for (const Route& r : v4) fib.UpsertRoute(r);
  fib.Commit();
  const auto slots_before = fib.Slots();
  const auto before = Forwarding(fib, probes);

  for (bool back : {false, true}) {
    for (int b = 0; b < 4; ++b) {
      for (size_t i = b; i < v4.size(); i += 4) {
        if (back) {
          fib.UpsertRoute(v4[i]);
        } else {
          fib.DeleteRoute(v4[i].prefix, v4[i].source);
        }
      }
      fib.Commit();
      const auto now = Forwarding(fib, probes);
      for (size_t i = 0; i < probes.size(); ++i) {
        ASSERT_EQ(now[i], before[i]) << probes[i].ToString() << (back ? " as IPv4 came back" : " as IPv4 went");
      }
    }
  }
  const auto slots_after = fib.Slots();
  ASSERT_EQ(slots_after.size(), slots_before.size());
  for (size_t i = 0; i < slots_before.size(); ++i) {
    EXPECT_EQ(slots_after[i].adjacency, slots_before[i].adjacency) << "code " << slots_before[i].code;
  }
}

TEST(FibSlotRestart, AnIpv4DaemonsRestartPuntsNoIpv6AndRenumbersNothing) {
  ReplayIpv4Restart(2);
  ReplayIpv4Restart(4);
}

}  // namespace
}  // namespace fibnic
