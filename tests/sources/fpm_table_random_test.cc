// The FPM table against a plain model under random frames: routes (inline
// and by next-hop object, of both families, some of other types), objects
// and groups created, changed, deleted and re-created while routes name
// them, routes that name objects not sent yet, reconnects (mark stale,
// partial replay, sweep), port-map changes. After every step the RIB (a
// recording sink) must hold exactly what the model computes from scratch:
// every route zebra holds, with the paths FibPaths gives its next-hops.
#include <linux/rtnetlink.h>

#include <gtest/gtest.h>

#include <map>
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

// What zebra holds, and the answer computed from it without any caching.
struct Model {
  std::map<Prefix, NlRoute> routes;
  std::map<uint32_t, NlNexthop> objects;
  std::map<Prefix, bool> stale;
  std::map<uint32_t, bool> stale_objects;
  int port_shift = 0;  // port-map changes: interface i is port (i - 10 + shift) % 3

  PortLookup Ports() const {
    const int shift = port_shift;
    return [shift](uint32_t ifindex) -> std::optional<PortId> {
      if (ifindex >= 10 && ifindex <= 12) return static_cast<PortId>((ifindex - 10 + shift) % 3);
      return std::nullopt;
    };
  }

  std::vector<NextHop> Answer(const NlRoute& r) const {
    const Family fam = r.prefix.family();
    if (r.nh_id == 0 || r.type != RTN_UNICAST) return FibPaths(r.type, fam, r.paths, r.unsupported, Ports()).paths;
    auto top = objects.find(r.nh_id);
    if (top == objects.end()) return {NextHop::ToHost()};
    std::vector<const NlNexthop*> singles;
    if (top->second.group.empty()) singles.push_back(&top->second);
    for (const auto& m : top->second.group) {
      auto o = objects.find(m.id);
      if (o == objects.end() || !o->second.group.empty()) return {NextHop::ToHost()};
      singles.push_back(&o->second);
    }
    std::vector<NlPath> paths;
    std::string unsupported = r.unsupported;
    for (const NlNexthop* s : singles) {
      if (s->blackhole) return FibPaths(RTN_BLACKHOLE, fam, {}, "", Ports()).paths;
      if (!s->unsupported.empty()) unsupported = s->unsupported;
      paths.push_back(s->path);
    }
    return FibPaths(RTN_UNICAST, fam, paths, unsupported, Ports()).paths;
  }
};

class Random {
 public:
  explicit Random(uint64_t seed) : rng_(seed) {}
  int Int(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool Chance(int percent) { return Int(100) < percent; }

  Prefix AnyPrefix() {
    if (Chance(80)) return Prefix::V4(0x0A000000u | (static_cast<uint32_t>(Int(64)) << 8), 24 - Int(2));
    return Prefix::V6((static_cast<U128>(0x20010db8u) << 96) | (static_cast<U128>(Int(32)) << 64), 64 - Int(2) * 16);
  }
  NlPath AnyPath(Family fam) {
    NlPath p;
    const int n = Int(4);
    p.gateway = fam == Family::kV4 ? IpAddr::V4(0xC0000200u + n) : IpAddr::V6((static_cast<U128>(0xfe80) << 112) | n);
    p.ifindex = 9 + Int(4);  // 9 is not a FIBNIC port
    return p;
  }

 private:
  std::mt19937_64 rng_;
};

TEST(FpmTableRandom, RibFollowsAModelThatRecomputesEverything) {
  const uint64_t seed = testing::TestSeed("FpmTableRandom");
  Random rnd(seed);
  Model model;
  RecordingSink sink;
  FpmTable table(sink, [&model](uint32_t i) { return model.Ports()(i); }, FpmTableOptions{});
  constexpr int kObjects = 8;  // ids 1..4 singles, 5..8 groups of singles
  for (int step = 0; step < 4000; ++step) {
    std::vector<std::vector<uint8_t>> msgs;
    const int kind = rnd.Int(100);
    if (kind < 2) {
      model.port_shift = rnd.Int(3);
      table.ReevaluateAll();
    } else if (kind < 4) {
      table.MarkAllStale();
      for (auto& [p, r] : model.routes) model.stale[p] = true;
      for (auto& [id, o] : model.objects) model.stale_objects[id] = true;
    } else if (kind < 6) {
      table.SweepStale();
      for (auto& [p, s] : model.stale) model.routes.erase(p);
      for (auto& [id, s] : model.stale_objects) model.objects.erase(id);
      model.stale.clear();
      model.stale_objects.clear();
    } else {
      for (int n = 1 + rnd.Int(3); n > 0; --n) {
        if (rnd.Chance(25)) {
          NlNexthop o;
          o.id = 1 + rnd.Int(kObjects);
          o.del = rnd.Chance(20);
          if (o.id > 4) {
            for (uint32_t m = 1; m <= 4; ++m) {
              if (rnd.Chance(50)) o.group.push_back({m, 1});
            }
            if (o.group.empty()) o.group.push_back({1, 1});
          } else if (rnd.Chance(10)) {
            o.blackhole = true;
          } else {
            o.path = rnd.AnyPath(rnd.Chance(70) ? Family::kV4 : Family::kV6);
          }
          msgs.push_back(BuildNexthopMessage(o));
          model.stale_objects.erase(o.id);
          if (o.del) model.objects.erase(o.id);
          else model.objects[o.id] = o;
        } else {
          const Prefix p = rnd.AnyPrefix();
          NlRoute r = InlineRoute(p.ToString(), {}, rnd.Chance(20));
          if (rnd.Chance(50)) {
            r.nh_id = 1 + rnd.Int(kObjects);
          } else if (rnd.Chance(10)) {
            r.type = RTN_BLACKHOLE;
          } else {
            for (int k = 1 + rnd.Int(2); k > 0; --k) r.paths.push_back(rnd.AnyPath(p.family()));
          }
          msgs.push_back(BuildRouteMessage(r));
          model.stale.erase(p);
          if (r.del) model.routes.erase(p);
          else model.routes[p] = r;
        }
      }
      auto payload = testing::Concat(std::move(msgs));
      ASSERT_TRUE(table.ApplyFrame(payload.data(), payload.size()).ok());
    }
    // The RIB holds exactly zebra's routes, each with the model's answer.
    const auto rib = sink.routes();
    ASSERT_EQ(rib.size(), model.routes.size()) << "seed " << seed << " step " << step;
    for (const auto& [p, r] : model.routes) {
      auto it = rib.find(p);
      ASSERT_NE(it, rib.end()) << p.ToString() << " seed " << seed << " step " << step;
      ASSERT_EQ(it->second.paths, model.Answer(r)) << p.ToString() << " seed " << seed << " step " << step;
    }
    ASSERT_EQ(table.routes(), model.routes.size());
  }
}

}  // namespace
}  // namespace fibnic
