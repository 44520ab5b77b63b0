// A table loaded in one batch (queued upserts, settled with prefetching) must give
// the same image and the same per-route state as the same upserts applied one
// at a time, and the bulk image must agree with the reference LPM. Seeds are
// printed; FIBNIC_SEED replays one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

#include "device/fibnic_image_codec.h"
#include "tests/fib/delta_applier.h"
#include "tests/fib/random_world.h"
#include "tests/support/test_seed.h"

namespace fibnic::testing {
namespace {

std::vector<RouteInfo> AllInfo(const Fib& fib) {
  std::vector<RouteInfo> out;
  for (Family f : {Family::kV4, Family::kV6}) {
    fib.ForEachRoute(f, [&](const RouteInfo& i) {
      out.push_back(i);
      return true;
    });
  }
  return out;
}

void ExpectSameInfo(const std::vector<RouteInfo>& a, const std::vector<RouteInfo>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    SCOPED_TRACE(a[i].route.prefix.ToString());
    EXPECT_EQ(a[i].route.prefix, b[i].route.prefix);
    EXPECT_EQ(a[i].route.source, b[i].route.source);
    EXPECT_EQ(a[i].route.distance, b[i].route.distance);
    EXPECT_EQ(a[i].route.paths, b[i].route.paths);
    EXPECT_EQ(a[i].best, b[i].best);
    EXPECT_EQ(a[i].state, b[i].state);
    EXPECT_EQ(a[i].reason, b[i].reason);
    EXPECT_EQ(a[i].slash24_total, b[i].slash24_total);
    EXPECT_EQ(a[i].slash24_punted, b[i].slash24_punted);
  }
}

class BulkLoad : public ::testing::TestWithParam<int> {};

TEST_P(BulkLoad, SameImageAndRouteStateAsOneByOne) {
  const int bits = GetParam();
  RandomWorlds gen(TestSeed("BulkLoad"));
  WorldShape shape;
  shape.gateways = bits == 4 ? 20 : 6;
  shape.routes = 12000;  // well above the batch threshold
  const World world = gen.Make(shape);

  // The upserts, shuffled (a load is not always sorted), with extra traffic
  // the batch must order like the one-by-one path: a prefix first announced
  // with other paths, and losing second-source candidates.
  std::vector<Route> ops;
  for (const auto& [p, paths] : world.routes) ops.push_back(Route{p, RouteSource::kStatic, 1, paths});
  std::shuffle(ops.begin(), ops.end(), gen.rng());
  std::vector<Route> extra;
  for (size_t i = 0; i < ops.size(); i += 7) {
    Route early = ops[i];
    early.paths = gen.RandomPaths(shape);
    extra.push_back(early);  // replaced by the real route later in the batch
    Route second = ops[i];
    second.source = RouteSource::kKernel;
    second.distance = 200;  // worse than static: never best
    second.paths = gen.RandomPaths(shape);
    extra.push_back(second);
  }
  // The whole sequence, with deletes the queue must keep in order: a route
  // deleted and announced again, a losing second source withdrawn, a prefix
  // that never existed.
  struct Op {
    Route route;
    bool erase = false;
  };
  std::vector<Op> all;
  for (const auto& r : extra) all.push_back({r});  // the early versions first, the real ones after
  for (size_t i = 0; i < ops.size(); ++i) {
    all.push_back({ops[i]});
    if (i % 5 == 0) all.push_back({ops[i], true});
    if (i % 5 == 0) all.push_back({ops[i]});
    if (i % 14 == 0) {
      Route second = ops[i];
      second.source = RouteSource::kKernel;
      all.push_back({second, true});
    }
    if (i % 9 == 0) {
      Route never = ops[i];
      never.prefix = Prefix::V4(0xC6336400u | static_cast<uint32_t>(i % 256), 32);  // 198.51.100.x: no route there
      if (!world.routes.count(never.prefix)) all.push_back({never, true});
    }
  }
  ASSERT_GT(all.size(), 4096u);

  FibConfig cfg;
  cfg.caps = bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  Fib bulk(cfg), single(cfg);
  for (const auto& [a, n] : world.neigh) {
    bulk.UpsertNeighbor(n);
    single.UpsertNeighbor(n);
  }
  auto apply = [](Fib& fib, const Op& op) {
    if (op.erase) {
      fib.DeleteRoute(op.route.prefix, op.route.source);
    } else {
      fib.UpsertRoute(op.route);
    }
  };
  for (const auto& op : all) apply(bulk, op);
  for (const auto& op : all) {
    apply(single, op);
    // Reading settles: one change at a time.
    ASSERT_EQ(single.FindRoute(op.route.prefix, op.route.source).has_value(), !op.erase);
  }
  bulk.CommitWhole();  // as at start-up, for a Sync: no delta built
  single.Commit();

  EXPECT_TRUE(bulk.image() == single.image());
  // After a whole-image commit the deltas go on from it: the next change's
  // delta takes the image as it was to the image as it is. The one-by-one
  // table commits the same changes: slots keep their owners by hysteresis,
  // so where they end depends on the commits a table went through (deleting
  // a third of the routes gives covering routes' adjacencies space, and one
  // may take a slot it then keeps).
  std::vector<uint8_t> bar = EncodeBar(bulk.image());
  for (size_t i = 0; i < ops.size(); i += 3) {
    bulk.DeleteRoute(ops[i].prefix, ops[i].source);
    single.DeleteRoute(ops[i].prefix, ops[i].source);
  }
  ApplyStepwise(bar, bulk.image(), bulk.Commit(), [](std::optional<uint32_t>) {});
  single.Commit();
  EXPECT_TRUE(bar == EncodeBar(bulk.image()));
  EXPECT_TRUE(bulk.image() == single.image());
  for (size_t i = 0; i < ops.size(); i += 3) {
    bulk.UpsertRoute(ops[i]);
    single.UpsertRoute(ops[i]);
  }
  ApplyStepwise(bar, bulk.image(), bulk.Commit(), [](std::optional<uint32_t>) {});
  single.Commit();
  EXPECT_TRUE(bar == EncodeBar(bulk.image()));
  EXPECT_TRUE(bulk.image() == single.image());
  ExpectSameInfo(AllInfo(bulk), AllInfo(single));
  for (size_t i = 0; i < ops.size(); i += 7) {
    const auto a = bulk.GetRoute(ops[i].prefix);
    ASSERT_EQ(a.size(), i % 14 == 0 ? 1u : 2u) << ops[i].prefix.ToString();  // the kernel candidate withdrawn or not
    ExpectSameInfo(a, single.GetRoute(ops[i].prefix));
  }
  const auto r = CheckAllSlash24(EncodeBar(bulk.image()), world, world.Oracle(), Owners(bulk), cfg.ecmp, 256);
  EXPECT_EQ(r.misforwarded, 0u) << r.first_error;
  EXPECT_EQ(r.owed_punted, 0u) << r.first_error;
}

INSTANTIATE_TEST_SUITE_P(CodeBits, BulkLoad, ::testing::Values(2, 4));

}  // namespace
}  // namespace fibnic::testing
