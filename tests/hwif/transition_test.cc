// Warm-restart transition: from any device state to any compiled state, every
// single bus write leaves a BAR that forwards each address as the old state
// or the new state does, or punts (decoded with HwLookup, the spec's model).
#include "hwif/fibnic_transition.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/hwif/fibnic_test_util.h"

namespace fibnic {
namespace {

using namespace testing_util;

// A small universe the random states draw from, so that states overlap and
// differ in every way that matters: slot owners, MACs, ports, connected
// slots, neighbours, nested TCAM prefixes in any order, CONTROL.
struct Universe {
  std::vector<regs::NexthopEntry> nexthops = {
      Nh("02:00:00:00:00:01", 0), Nh("02:00:00:00:00:02", 1), Nh("02:00:00:00:00:03", 2),
      Nh("02:00:00:00:00:01", 3), Nh("00:00:00:00:00:00", 1, true), Nh("00:00:00:00:00:00", 2, true)};
  std::vector<const char*> tcam = {"2001:db8::/32", "2001:db8:ab00::/40", "2001:db8:ab01::/48",
                                   "2001:db8:cd00::/48", "2001:db8:ab01:7::/64", "::/0"};
  std::vector<IpAddr> neigh_addrs = {A("10.0.1.5"), A("10.0.2.5"), A("10.0.3.5"), A("2001:db8:ab01::5"),
                                     A("2001:db8:cd00::5")};
  std::vector<const char*> macs = {"0a:00:00:00:00:01", "0a:00:00:00:00:02"};
};

constexpr uint32_t kWindow = 0x0A0000;  // 10.0.0.0/16 as /24 index base

DeviceImage RandomImage(std::mt19937& rng, const Universe& u) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  DeviceImage img;
  img.control = (rng() % 5 == 0) ? static_cast<uint32_t>(rng() % 4) : 3u;
  for (size_t s = 1; s < img.nexthop.size(); ++s) {
    if (rng() % 5 != 0) img.nexthop[s] = u.nexthops[pick(u.nexthops.size())];
  }
  for (uint32_t i = 0; i < 256; ++i) SetCode(img, kWindow + i, static_cast<uint8_t>(rng() % 4));
  for (size_t i = 0; i < u.neigh_addrs.size(); ++i) {
    if (rng() % 3 == 0) continue;
    const uint32_t at = static_cast<uint32_t>(pick(8));
    if (img.neigh[at].valid()) continue;  // the CAM holds an address once
    img.neigh[at] = Neigh(u.neigh_addrs[i], u.macs[pick(u.macs.size())], static_cast<uint8_t>(1 + pick(2)));
  }
  for (const char* p : u.tcam) {
    if (rng() % 2 == 0) continue;
    img.tcam[pick(8)] = Tcam(p, static_cast<uint8_t>(rng() % 4));
  }
  return img;
}

// A few changes to `from`: what a restart after a short outage sees.
DeviceImage Mutate(std::mt19937& rng, const DeviceImage& from, const Universe& u) {
  DeviceImage img = from;
  const DeviceImage other = RandomImage(rng, u);
  const int n = 1 + static_cast<int>(rng() % 4);
  for (int k = 0; k < n; ++k) {
    switch (rng() % 5) {
      case 0: { const size_t s = 1 + rng() % 3; img.nexthop[s] = other.nexthop[s]; break; }
      case 1: { const uint32_t i = static_cast<uint32_t>(rng() % 256); SetCode(img, kWindow + i, other.CodeOf24(kWindow + i)); break; }
      case 2: { const size_t i = rng() % 8; img.tcam[i] = other.tcam[i]; break; }
      case 3: img.neigh = other.neigh; break;
      default: img.control = other.control; break;
    }
  }
  return img;
}

std::vector<IpAddr> Probes(const Universe& u) {
  std::vector<IpAddr> out;
  for (uint32_t i = 0; i < 256; ++i) {
    out.push_back(IpAddr::V4(((kWindow + i) << 8) | 5));
    out.push_back(IpAddr::V4(((kWindow + i) << 8) | 77));
  }
  for (const char* p : u.tcam) {
    const auto pre = *Prefix::Parse(p);
    out.push_back(IpAddr::V6(pre.addr().v6() | 5));
    out.push_back(IpAddr::V6(pre.addr().v6() | (U128{0x42} << 64)));
  }
  for (const auto& a : u.neigh_addrs) out.push_back(a);
  out.push_back(A("2001:db9::1"));
  return out;
}

void CheckTransition(const DeviceImage& from, const DeviceImage& to, const std::vector<IpAddr>& probes,
                     const std::string& label) {
  auto plan = PlanTransition(from, to);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::vector<uint8_t> bar = EncodeBar(from);
  const std::vector<uint8_t> end = EncodeBar(to);
  std::vector<std::vector<Answer>> allowed;
  for (const auto& p : probes) {
    allowed.push_back({Look(bar.data(), bar.size(), p), Look(end.data(), end.size(), p)});
  }
  const auto& ws = plan->writes();
  for (size_t i = 0; i < ws.size(); ++i) {
    std::memcpy(bar.data() + ws[i].offset, &ws[i].value, 4);
    auto bad = CheckProbes(bar.data(), bar.size(), probes, allowed);
    ASSERT_FALSE(bad.has_value()) << label << ": after write " << i + 1 << "/" << ws.size() << " (offset "
                                  << ws[i].offset << "): " << *bad;
  }
  auto decoded = DecodeBar(bar.data(), bar.size());
  ASSERT_TRUE(decoded.ok());
  EXPECT_TRUE(*decoded == to) << label << ": final state differs from the target";
}

TEST(Transition, EqualImagesNeedNoWrites) {
  std::mt19937 rng(7);
  Universe u;
  const DeviceImage img = RandomImage(rng, u);
  auto plan = PlanTransition(img, img);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->empty());
  EXPECT_EQ(plan->changed_bytes(), 0u);
}

TEST(Transition, RandomStatesEveryWriteIsOldNewOrPunt) {
  const uint32_t seed = std::random_device{}();
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  Universe u;
  const auto probes = Probes(u);
  for (int iter = 0; iter < 60; ++iter) {
    const DeviceImage from = RandomImage(rng, u);
    const DeviceImage to = (iter % 3 == 0) ? RandomImage(rng, u) : Mutate(rng, from, u);
    CheckTransition(from, to, probes, "seed " + std::to_string(seed) + " iteration " + std::to_string(iter));
    if (HasFatalFailure()) return;
  }
}

TEST(Transition, TcamRematchSwitchesIpv6OffAroundTheRewrite) {
  DeviceImage from, to;
  from.nexthop[1] = to.nexthop[1] = Nh("02:00:00:00:00:01", 0);
  from.tcam[0] = Tcam("2001:db8:ab01::/48", 0);  // hole
  from.tcam[1] = Tcam("2001:db8::/32", 1);
  to.tcam[0] = Tcam("2001:db8:cd00::/48", 0);  // the hole moves: entry 0 matches something else
  to.tcam[1] = from.tcam[1];
  auto plan = PlanTransition(from, to);
  ASSERT_TRUE(plan.ok());
  const auto& ws = plan->writes();
  ASSERT_GE(ws.size(), 3u);
  EXPECT_EQ(ws.front(), (BusWrite{regs::kOffControl, regs::kControlV4Enable}));
  EXPECT_EQ(ws.back(), (BusWrite{regs::kOffControl, regs::kControlV4Enable | regs::kControlV6Enable}));
  Universe u;
  CheckTransition(from, to, Probes(u), "rematch");
}

TEST(Transition, TcamAdditionsAndRemovalsKeepIpv6On) {
  DeviceImage from, to;
  from.nexthop[1] = to.nexthop[1] = Nh("02:00:00:00:00:01", 0);
  from.nexthop[2] = to.nexthop[2] = Nh("02:00:00:00:00:02", 1);
  // The hole moves from index 1 to index 0 in front of the same cover.
  from.tcam[1] = Tcam("2001:db8:ab01::/48", 0);
  from.tcam[2] = to.tcam[2] = Tcam("2001:db8::/32", 1);
  to.tcam[0] = Tcam("2001:db8:ab01::/48", 0);
  to.tcam[3] = Tcam("2001:db8:cd00::/48", 2);
  auto plan = PlanTransition(from, to);
  ASSERT_TRUE(plan.ok());
  for (const auto& w : plan->writes()) EXPECT_NE(w.offset, regs::kOffControl);
  Universe u;
  CheckTransition(from, to, Probes(u), "tcam move");
}

TEST(Transition, RefusesOtherModel) {
  DeviceImage a(regs::Caps::Model2Bit()), b(regs::Caps::Model4Bit());
  auto plan = PlanTransition(a, b);
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("4-bit"), std::string::npos);
}

}  // namespace
}  // namespace fibnic
