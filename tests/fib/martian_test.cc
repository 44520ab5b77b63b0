// Destinations a router never forwards (RFC 1812 5.3.7) punt whatever the
// routes say — a default route, or a route of their own — and the rest of
// the default route's space still forwards. Checked on the encoded BAR with
// HwLookup.
#include <gtest/gtest.h>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "fib/fib.h"
#include "tests/support/parse.h"

namespace fibnic {
namespace {

using testing::A;
using testing::P;

TEST(Martians, PuntWhateverTheRoutesSay) {
  for (int bits : {2, 4}) {
    FibConfig cfg;
    cfg.caps = bits == 2 ? regs::Caps::Model2Bit() : regs::Caps::Model4Bit();
    Fib fib(cfg);
    const NextHop gw{A("10.0.0.1"), 0};
    fib.UpsertNeighbor(Neighbor{A("10.0.0.1"), *MacAddr::Parse("02:00:00:00:00:01"), 0, NeighState::kReachable});
    fib.UpsertRoute(Route{P("0.0.0.0/0"), RouteSource::kStatic, 1, {gw}});
    fib.UpsertRoute(Route{P("239.1.0.0/16"), RouteSource::kStatic, 1, {gw}});  // a route of its own
    fib.UpsertRoute(Route{P("127.0.0.0/8"), RouteSource::kStatic, 1, {gw}});
    fib.Commit();
    const auto bar = EncodeBar(fib.image());
    for (const char* dst : {"224.0.0.1", "239.1.2.3", "239.255.255.250", "255.255.255.255", "240.0.0.1",
                            "127.0.0.1", "127.255.255.254", "0.1.2.3", "0.0.0.0"}) {
      EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A(dst)).forward) << dst << " (" << bits << "-bit)";
    }
    for (const char* dst : {"1.0.0.1", "8.8.8.8", "126.255.255.255", "128.0.0.1", "223.255.255.254"}) {
      const HwDecision d = HwLookup(bar.data(), bar.size(), A(dst));
      EXPECT_TRUE(d.forward && d.port == 0) << dst << " -> " << d.ToString() << " (" << bits << "-bit)";
    }
  }
}

// The same for IPv6 (RFC 4291): multicast, link-local (the kernel's fe80::/64
// connected routes included) and ::1 punt; the rest of the default route forwards.
TEST(Martians, Ipv6PuntWhateverTheRoutesSay) {
  Fib fib(FibConfig{});
  const NextHop gw{A("2001:db8::1"), 0};
  fib.UpsertNeighbor(Neighbor{A("2001:db8::1"), *MacAddr::Parse("02:00:00:00:00:01"), 0, NeighState::kReachable});
  fib.UpsertRoute(Route{P("::/0"), RouteSource::kStatic, 1, {gw}});
  fib.UpsertRoute(Route{P("fe80::/64"), RouteSource::kStatic, 1, {NextHop{std::nullopt, 0}}});
  fib.UpsertRoute(Route{P("ff02::/16"), RouteSource::kStatic, 1, {gw}});
  fib.UpsertNeighbor(Neighbor{A("fe80::2"), *MacAddr::Parse("02:00:00:00:00:02"), 0, NeighState::kReachable});
  fib.Commit();
  auto bar = EncodeBar(fib.image());
  // fe00::/9 and fec0::/10 (unassigned, deprecated) punt with them: fe00::/7 is one TCAM entry.
  for (const char* dst : {"ff02::1", "ff05::1:3", "fe80::2", "fe80::1:2:3:4", "febf::1", "fec0::1", "fe00::1", "::1",
                          "::ffff:10.0.0.5"}) {
    EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A(dst)).forward) << dst;
  }
  for (const char* dst : {"2001:db8:1::1", "2a00::1", "fdff::1", "fc00::1", "64:ff9b::a00:1", "::2:0:0:0:1"}) {
    const HwDecision d = HwLookup(bar.data(), bar.size(), A(dst));
    EXPECT_TRUE(d.forward && d.port == 0) << dst << " -> " << d.ToString();
  }
  // The link-local route going away keeps fe80::/10 punted.
  fib.DeleteRoute(P("fe80::/64"), RouteSource::kStatic);
  fib.Commit();
  bar = EncodeBar(fib.image());
  EXPECT_FALSE(HwLookup(bar.data(), bar.size(), A("fe80::2")).forward);
}

// The NEIGH CAM keys IPv4 neighbours as ::ffff:a.b.c.d, so an IPv6
// neighbour ::ffff:10.0.0.5 on port 1 must not answer IPv4 10.0.0.5 through
// an IPv4 connected route on port 2, where the kernel has no neighbour.
TEST(NeighCam, Ipv4MappedIpv6NeighbourNeverAnswersIpv4) {
  Fib fib(FibConfig{});
  fib.UpsertRoute(Route{P("::/64"), RouteSource::kStatic, 1, {NextHop{std::nullopt, 1}}});
  fib.UpsertRoute(Route{P("10.0.0.0/24"), RouteSource::kStatic, 1, {NextHop{std::nullopt, 2}}});
  fib.UpsertNeighbor(Neighbor{A("::ffff:10.0.0.5"), *MacAddr::Parse("02:00:00:00:00:05"), 1, NeighState::kReachable});
  fib.UpsertNeighbor(Neighbor{A("10.0.0.6"), *MacAddr::Parse("02:00:00:00:00:06"), 2, NeighState::kReachable});
  fib.Commit();
  const auto bar = EncodeBar(fib.image());
  const HwDecision d = HwLookup(bar.data(), bar.size(), A("10.0.0.5"));
  EXPECT_FALSE(d.forward) << d.ToString();  // no IPv4 neighbour 10.0.0.5: punt
  const HwDecision six = HwLookup(bar.data(), bar.size(), A("10.0.0.6"));
  EXPECT_TRUE(six.forward && six.port == 2) << six.ToString();  // the real IPv4 neighbour still forwards
}

}  // namespace
}  // namespace fibnic
