// Warm restarts after random histories: at every fifth step of a random
// sequence of route and neighbour changes, a fresh Fib given the same routes
// and neighbours (as fibnicd's initial dump gives them) adopts the device
// and commits; it must compute the device's image exactly, so a restart with
// the host unchanged writes nothing (docs/daemon.md "Start-up and warm
// restart"). The history is what the fresh run cannot see: slots held for
// fallen weights, entries kept VALID=0 for failed or vanished neighbours, the
// TCAM entries an earlier choice preferred. Seeds are printed; FIBNIC_SEED
// replays one.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "device/fibnic_image_codec.h"
#include "fib/tcam6/tcam6_sequencer.h"
#include "tests/fib/random_ops.h"
#include "tests/fib/random_world.h"
#include "tests/support/test_seed.h"

namespace fibnic::testing {
namespace {

struct Shape {
  int code_bits;
  int v4_routes;
  int v4_gateways;  // few: IPv6 next-hops compete for the slots IPv4 leaves
};

std::string Nexthops(const DeviceImage& im) {
  std::string out;
  for (size_t c = 1; c < im.nexthop.size(); ++c) {
    const auto& e = im.nexthop[c];
    out += " " + std::to_string(c) + ":" + e.dst_mac.ToString() + "/p" + std::to_string(e.port) + "/f" +
           std::to_string(e.flags);
  }
  return out;
}

std::string Tcam(const DeviceImage& im) {
  std::string out;
  for (const auto& e : im.tcam) {
    if (!e.valid()) continue;
    out += " " + Prefix::V6(U128{e.value} << 64, tcam6::MaskLen(e.mask)).ToString() + "->" + std::to_string(e.code);
  }
  return out;
}

// The first /24s whose codes differ, with the world's route there.
std::string SramDifference(const DeviceImage& device, const DeviceImage& got, const World& world) {
  std::string out;
  const auto lpm = world.Oracle();
  for (uint32_t w = 0, n = 0; w < (1u << 24) && n < 4; ++w) {
    if (device.CodeOf24(w) == got.CodeOf24(w)) continue;
    ++n;
    const auto m = lpm.Match(IpAddr::V4(w << 8));
    out += "\n  " + Prefix::V4(w << 8, 24).ToString() + ": " + std::to_string(device.CodeOf24(w)) + " -> " +
           std::to_string(got.CodeOf24(w)) + ", route " + (m ? m->first.ToString() : std::string("none"));
    if (m) {
      for (const auto& nh : m->second) out += " [" + nh.ToString() + "]";
    }
  }
  return out;
}

// Neighbours as the kernel reports them: an unusable one has no MAC, a
// usable one on Ethernet has one.
void AsTheKernelReports(RandomWorlds& gen, World& world, Fib& fib) {
  for (auto& [addr, n] : world.neigh) {
    if (NeighUsable(n.state) == (n.mac != MacAddr{})) continue;
    n.mac = NeighUsable(n.state) ? gen.RandomMac() : MacAddr{};
    fib.UpsertNeighbor(n);
  }
}

class RandomRestart : public ::testing::TestWithParam<Shape> {};

TEST_P(RandomRestart, ARestartAfterAnyHistoryWritesNothing) {
  const auto [bits, v4_routes, v4_gateways] = GetParam();
  RandomWorlds gen(TestSeed("RandomRestart"));
  auto [shape, shape6, world] = MakeSequenceWorld(gen, v4_routes, v4_gateways);
  FibConfig cfg;
  cfg.caps = bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  cfg.ecmp = EcmpPolicy::kFirst;
  Fib fib(cfg);
  AsTheKernelReports(gen, world, fib);
  world.LoadInto(fib);
  fib.Commit();
  int restarts = 0;
  for (int round = 0; round < 300; ++round) {
    for (int n = 1 + static_cast<int>(gen.rng()() % 4); n > 0; --n) {
      if (gen.rng()() % 3 == 0) {
        RandomOp6(gen, shape6, world, fib);
      } else {
        RandomOp(gen, shape, world, fib);
      }
    }
    AsTheKernelReports(gen, world, fib);
    // As the pipeline pushes: the safe part, then the TCAM's best entries.
    fib.CommitSafe();
    fib.CommitBest();
    if (round % 5 != 4) continue;
    ++restarts;
    const DeviceImage device = fib.image();
    Fib fresh(cfg);
    world.LoadInto(fresh);
    fresh.AdoptDevice(device);
    fresh.Commit();
    const DeviceImage& got = fresh.image();
    ASSERT_TRUE(got.nexthop == device.nexthop)
        << "round " << round << ": NEXTHOP\n device:" << Nexthops(device) << "\n fresh: " << Nexthops(got);
    ASSERT_TRUE(got.neigh == device.neigh) << "round " << round << ": NEIGH";
    ASSERT_TRUE(got.tcam == device.tcam) << "round " << round << ": TCAM6\n device:" << Tcam(device)
                                         << "\n fresh: " << Tcam(got) << "\n NEXTHOP:" << Nexthops(device);
    ASSERT_TRUE(got.sram == device.sram) << "round " << round << ": SRAM" << SramDifference(device, got, world)
                                         << "\n NEXTHOP:" << Nexthops(device);
    ASSERT_TRUE(got == device) << "round " << round;
  }
  std::cout << restarts << " restarts, none wrote the device\n";
}

INSTANTIATE_TEST_SUITE_P(CodeBits, RandomRestart,
                         ::testing::Values(Shape{2, 40, 6}, Shape{4, 40, 6}, Shape{2, 3, 1}));

}  // namespace
}  // namespace fibnic::testing
