// Long randomized test of the FPM path (frame reader → netlink parser →
// the routes zebra says it installed, each to be answered): random valid
// streams against an independent model, then the same streams mutated (bit
// flips, truncations, splices, random chunking) — no crash, no sanitizer
// report, and a rejected frame gives no route.
// Seed: FIBNIC_SEED env var, else random; always printed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "sources/fpm/fpm_frame.h"
#include "sources/fpm/fpm_route_frame.h"
#include "sources/netlink/netlink_build.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

uint64_t Seed() {
  if (const char* s = std::getenv("FIBNIC_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

struct Gen {
  explicit Gen(uint64_t seed) : rng(seed) {}
  std::mt19937_64 rng;
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); }

  Prefix RandPrefix() {
    const int i = Int(0, 23);
    if (i < 16) return Prefix::V4(0x0A000000u | (uint32_t(i) << 16), 16 + (i % 3) * 4);
    return Prefix::V6((U128(0x20010db8u) << 96) | (U128(i) << 64), 48 + (i % 2) * 16);
  }
  NlPath RandPath(Family f) {
    NlPath p;
    p.ifindex = static_cast<uint32_t>(Int(0, 9) == 0 ? 3 : Int(10, 12));  // 3 is not a FIBNIC port
    if (Int(0, 4) != 0) {
      p.gateway = f == Family::kV4 ? IpAddr::V4(0xC0000200u + Int(1, 6)) : IpAddr::V6((U128(0xfe80) << 112) + Int(1, 6));
    }
    return p;
  }
  NlRoute RandInline(bool del) {
    NlRoute r = testing::InlineRoute("0.0.0.0/0", {}, del);
    r.prefix = RandPrefix();
    if (!del) {
      const int n = Int(1, 3);
      for (int i = 0; i < n; ++i) r.paths.push_back(RandPath(r.prefix.family()));
    }
    return r;
  }
};

using Sent = std::vector<std::pair<Prefix, uint8_t>>;

// The routes a frame gives: (prefix, protocol), in order.
Status Apply(const uint8_t* payload, size_t len, FpmRouteCounts& counts, Sent& out) {
  return ForEachFpmRoute(payload, len, 254, {2}, counts,
                         [&](const Prefix& p, uint8_t protocol) { out.emplace_back(p, protocol); });
}

TEST(FpmRandomized, ValidStreamsMatchModel) {
  const uint64_t seed = Seed();
  std::cout << "seed " << seed << std::endl;
  Gen g(seed);
  for (int round = 0; round < 40; ++round) {
    FpmFrameReader reader;
    FpmRouteCounts counts;
    Sent model, got;
    uint64_t model_deleted = 0;
    std::vector<uint8_t> stream;
    for (int f = 0; f < 200; ++f) {
      std::vector<std::vector<uint8_t>> msgs;
      const int n = g.Int(1, 4);
      for (int i = 0; i < n; ++i) {
        NlRoute r = g.RandInline(g.Int(0, 3) == 0);
        r.protocol = static_cast<uint8_t>(g.Int(0, 3) == 0 ? 2 : 186 + g.Int(0, 2));  // 2: zebra's kernel routes
        if (r.del && r.protocol != 2) ++model_deleted;
        if (!r.del && r.protocol != 2) model.emplace_back(r.prefix, r.protocol);
        msgs.push_back(BuildRouteMessage(r));
      }
      auto payload = testing::Concat(msgs);
      auto frame = EncodeFpmFrame(payload.data(), payload.size());
      stream.insert(stream.end(), frame.begin(), frame.end());
    }
    for (size_t pos = 0; pos < stream.size();) {
      const size_t n = std::min<size_t>(g.Int(1, 700), stream.size() - pos);
      ASSERT_TRUE(reader.Feed(stream.data() + pos, n, [&](const uint8_t* p, size_t len, uint64_t) {
                          return Apply(p, len, counts, got);
                        }).ok());
      pos += n;
    }
    ASSERT_EQ(got, model) << "seed " << seed << " round " << round;
    ASSERT_EQ(counts.deleted, model_deleted) << "seed " << seed << " round " << round;
  }
}

TEST(FpmRandomized, MutatedStreamsNeverCrashNorPartiallyApply) {
  const uint64_t seed = Seed();
  std::cout << "seed " << seed << std::endl;
  Gen g(seed);
  uint64_t rejected = 0, frames = 0;
  for (int round = 0; round < 10000; ++round) {
    std::vector<uint8_t> stream;
    for (int f = 0; f < 8; ++f) {
      std::vector<std::vector<uint8_t>> msgs;
      for (int i = g.Int(1, 3); i > 0; --i) {
        switch (g.Int(0, 3)) {
          case 0: {
            NlNexthop n;
            n.id = static_cast<uint32_t>(g.Int(1, 6));
            if (g.Int(0, 1)) {
              n.group = {{static_cast<uint32_t>(g.Int(1, 6)), 1}, {static_cast<uint32_t>(g.Int(1, 6)), 2}};
            } else {
              n.path = g.RandPath(Family::kV4);
            }
            n.del = g.Int(0, 5) == 0;
            msgs.push_back(BuildNexthopMessage(n));
            break;
          }
          case 1: {
            NlRoute r = g.RandInline(false);
            r.paths.clear();
            r.nh_id = static_cast<uint32_t>(g.Int(1, 7));
            msgs.push_back(BuildRouteMessage(r));
            break;
          }
          default:
            msgs.push_back(BuildRouteMessage(g.RandInline(g.Int(0, 3) == 0)));
        }
      }
      auto payload = testing::Concat(msgs);
      auto frame = EncodeFpmFrame(payload.data(), payload.size());
      stream.insert(stream.end(), frame.begin(), frame.end());
    }
    // Mutate.
    for (int m = g.Int(1, 6); m > 0; --m) {
      const size_t at = static_cast<size_t>(g.Int(0, static_cast<int>(stream.size()) - 1));
      switch (g.Int(0, 4)) {
        case 0: stream[at] ^= static_cast<uint8_t>(1u << g.Int(0, 7)); break;
        case 1: stream[at] = static_cast<uint8_t>(g.Int(0, 255)); break;
        case 2: stream.resize(at + 1); break;
        case 3: stream.insert(stream.begin() + at, static_cast<uint8_t>(g.Int(0, 255))); break;
        default: stream.erase(stream.begin() + at); break;
      }
      if (stream.empty()) stream.push_back(0);
    }
    FpmFrameReader reader;
    FpmRouteCounts counts;
    Sent sent;
    bool failed = false;
    for (size_t pos = 0; pos < stream.size() && !failed;) {
      const size_t n = std::min<size_t>(g.Int(1, 300), stream.size() - pos);
      Status st = reader.Feed(stream.data() + pos, n, [&](const uint8_t* p, size_t len, uint64_t) {
        ++frames;
        Sent frame;
        Status s = Apply(p, len, counts, frame);
        if (!s.ok()) {
          EXPECT_TRUE(frame.empty()) << "seed " << seed << " round " << round;
        }
        sent.insert(sent.end(), frame.begin(), frame.end());
        return s;
      });
      if (!st.ok()) {
        failed = true;
        ++rejected;
        EXPECT_NE(st.message().find("byte"), std::string::npos) << st.message();
      }
      pos += n;
    }
    // Whatever was given is a route zebra may be answered about.
    for (const auto& [p, protocol] : sent) ASSERT_NE(protocol, 2) << p.ToString();
  }
  std::cout << "frames " << frames << ", streams rejected " << rejected << std::endl;
  EXPECT_GT(rejected, 0u);
}

}  // namespace
}  // namespace fibnic
