// FpmTable::stale_count() is a running count (the status API's
// `stale_pending` asks it on every request; issue #16): after every step of
// a random mix of frames, reconnect marks, replays, sweeps (with routes the
// kernel still holds kept stale), the kernel's word on routes (deletions,
// flux, placeholders when the flux map is full), its deletions of routes and
// next-hop objects and link state changes, it must equal a walk over the
// table.
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <random>

#include "sources/fpm/fpm_table.h"
#include "sources/netlink/netlink_build.h"
#include "tests/fib/test_seed.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using testing::InlineRoute;
using testing::RecordingSink;

TEST(FpmStaleCount, RunningCountEqualsAWalkAfterRandomOperations) {
  const uint64_t seed = testing::TestSeed("FpmStaleCount");
  std::mt19937_64 rng(seed);
  auto pick = [&rng](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  auto prefix = [&] {
    if (pick(4) != 0) return Prefix::V4(0x0A000000u | (static_cast<uint32_t>(pick(48)) << 8), 24);
    return Prefix::V6((static_cast<U128>(0x20010db8u) << 96) | (static_cast<U128>(pick(16)) << 64), 64);
  };
  auto path = [&](Family fam) {
    NlPath p;
    p.gateway = fam == Family::kV4 ? IpAddr::V4(0xC0000200u + static_cast<uint32_t>(pick(4)))
                                   : IpAddr::V6((static_cast<U128>(0xfe80) << 112) | static_cast<U128>(pick(4)));
    p.ifindex = static_cast<uint32_t>(9 + pick(4));
    return p;
  };
  RecordingSink sink;
  FpmTableOptions options;
  options.flux_max = 8;  // the kernel's word overflows it: placeholders too
  FpmTable table(sink, testing::TestPorts(), options);
  for (int step = 0; step < 3000; ++step) {
    const int kind = pick(100);
    if (kind < 3) {
      table.MarkAllStale();
    } else if (kind < 6) {
      const bool some_held = pick(2) == 0;
      table.SweepStale(some_held ? FpmTable::KernelHolds([&](const Prefix&, uint8_t) { return pick(3) == 0; })
                                 : FpmTable::KernelHolds());
    } else if (kind < 10) {
      // The kernel's word on one of zebra's routes (flux; a stale copy goes).
      const Prefix p = prefix();
      const bool deleted = pick(2) == 0;
      table.KernelRoute(testing::KernelView(p.ToString(), deleted, {path(p.family())}));
    } else if (kind < 13) {
      table.DropStaleUsing({static_cast<uint32_t>(1 + pick(8)), static_cast<uint32_t>(1 + pick(8))});
    } else if (kind < 17) {
      table.LinkState(static_cast<uint32_t>(9 + pick(4)), pick(2) == 0);
    } else {
      std::vector<std::vector<uint8_t>> msgs;
      for (int n = 1 + pick(4); n > 0; --n) {
        if (pick(4) == 0) {
          NlNexthop o;
          o.id = static_cast<uint32_t>(1 + pick(8));  // 1..4 singles, 5..8 groups
          o.del = pick(5) == 0;
          if (o.id > 4) {
            for (uint32_t m = 1; m <= 4; ++m) {
              if (pick(2) == 0) o.group.push_back({m, 1});
            }
            if (o.group.empty()) o.group.push_back({1, 1});
          } else {
            o.path = path(pick(3) == 0 ? Family::kV6 : Family::kV4);
          }
          msgs.push_back(BuildNexthopMessage(o));
        } else {
          const Prefix p = prefix();
          NlRoute r = InlineRoute(p.ToString(), {}, pick(5) == 0);
          r.protocol = RTPROT_BGP;
          if (pick(2) == 0) {
            r.nh_id = static_cast<uint32_t>(1 + pick(8));
          } else {
            r.paths.push_back(path(p.family()));
          }
          msgs.push_back(BuildRouteMessage(r));
        }
      }
      auto payload = testing::Concat(std::move(msgs));
      ASSERT_TRUE(table.ApplyFrame(payload.data(), payload.size()).ok());
    }
    ASSERT_EQ(table.stale_count(), table.stale_walked()) << "seed " << seed << " step " << step << " kind " << kind;
  }
}

}  // namespace
}  // namespace fibnic
