// Long randomized test of the FPM path (frame reader → netlink parser → FPM
// table): random valid streams against an independent model, then the same
// streams mutated (bit flips, truncations, splices, random chunking) — no
// crash, no sanitizer report, and a rejected frame never changes the RIB.
// Seed: FIBNIC_SEED env var, else random; always printed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <random>

#include "sources/fpm/fpm_table.h"
#include "tests/sources/recording_sink.h"
#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

using testing::RecordingSink;

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

// The model: what the RIB must hold for inline routes, written out longhand.
std::vector<NextHop> Expected(const NlRoute& r) {
  std::vector<NextHop> out;
  for (const auto& p : r.paths) {
    if (p.ifindex < 10 || p.ifindex > 12) return {NextHop::ToHost()};
    NextHop nh{p.gateway, static_cast<PortId>(p.ifindex - 10)};
    if (std::find(out.begin(), out.end(), nh) == out.end()) out.push_back(nh);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(FpmRandomized, ValidStreamsMatchModel) {
  const uint64_t seed = Seed();
  std::cout << "seed " << seed << std::endl;
  Gen g(seed);
  for (int round = 0; round < 40; ++round) {
    RecordingSink sink;
    FpmTable table(sink, testing::TestPorts(), {});
    FpmFrameReader reader;
    std::map<Prefix, std::vector<NextHop>> model;
    std::vector<uint8_t> stream;
    for (int f = 0; f < 200; ++f) {
      std::vector<std::vector<uint8_t>> msgs;
      const int n = g.Int(1, 4);
      for (int i = 0; i < n; ++i) {
        NlRoute r = g.RandInline(g.Int(0, 3) == 0);
        if (r.del) {
          model.erase(r.prefix);
        } else {
          model[r.prefix] = Expected(r);
        }
        msgs.push_back(BuildRouteMessage(r));
      }
      auto payload = testing::Concat(msgs);
      auto frame = EncodeFpmFrame(payload.data(), payload.size());
      stream.insert(stream.end(), frame.begin(), frame.end());
    }
    for (size_t pos = 0; pos < stream.size();) {
      const size_t n = std::min<size_t>(g.Int(1, 700), stream.size() - pos);
      ASSERT_TRUE(reader.Feed(stream.data() + pos, n, [&](const uint8_t* p, size_t len, uint64_t) {
                          return table.ApplyFrame(p, len);
                        }).ok());
      pos += n;
    }
    std::map<Prefix, std::vector<NextHop>> got;
    for (const auto& [p, r] : sink.routes()) got[p] = r.paths;
    ASSERT_EQ(got, model) << "seed " << seed << " round " << round;
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
    RecordingSink sink;
    FpmTable table(sink, testing::TestPorts(), {});
    FpmFrameReader reader;
    bool failed = false;
    for (size_t pos = 0; pos < stream.size() && !failed;) {
      const size_t n = std::min<size_t>(g.Int(1, 300), stream.size() - pos);
      Status st = reader.Feed(stream.data() + pos, n, [&](const uint8_t* p, size_t len, uint64_t) {
        ++frames;
        sink.TakeLog();
        Status s = table.ApplyFrame(p, len);
        if (!s.ok()) {
          EXPECT_TRUE(sink.TakeLog().empty()) << "seed " << seed << " round " << round;
        }
        return s;
      });
      if (!st.ok()) {
        failed = true;
        ++rejected;
        EXPECT_NE(st.message().find("byte"), std::string::npos) << st.message();
      }
      pos += n;
    }
    // Whatever survived is well formed: every route has sorted, unique paths,
    // and a ToHost path never shares a route with a forwarding one.
    for (const auto& [p, r] : sink.routes()) {
      ASSERT_FALSE(r.paths.empty());
      ASSERT_TRUE(std::is_sorted(r.paths.begin(), r.paths.end()));
      if (r.paths.size() > 1) {
        for (const auto& nh : r.paths) ASSERT_FALSE(nh.to_host()) << p.ToString();
      }
    }
  }
  std::cout << "frames " << frames << ", streams rejected " << rejected << std::endl;
  EXPECT_GT(rejected, 0u);
}

}  // namespace
}  // namespace fibnic
