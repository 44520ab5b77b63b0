#include "sources/fpm/fpm_frame.h"

#include <gtest/gtest.h>

#include "tests/sources/test_util.h"

namespace fibnic {
namespace {

std::vector<uint8_t> Payload(int n, uint8_t seed) {
  std::vector<uint8_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(seed + i);
  return p;
}

TEST(FpmFrame, EncodesHeader) {
  auto f = EncodeFpmFrame(Payload(8, 1).data(), 8);
  ASSERT_EQ(f.size(), 12u);
  EXPECT_EQ(f[0], 1);
  EXPECT_EQ(f[1], 1);
  EXPECT_EQ(f[2], 0);
  EXPECT_EQ(f[3], 12);
}

// Every way of slicing a stream of frames gives the same frames.
TEST(FpmFrame, ReassemblesAnySlicing) {
  std::vector<std::vector<uint8_t>> payloads = {Payload(8, 1), Payload(0, 0), Payload(300, 7), Payload(5, 9)};
  std::vector<uint8_t> stream;
  for (const auto& p : payloads) {
    auto f = EncodeFpmFrame(p.data(), p.size());
    stream.insert(stream.end(), f.begin(), f.end());
  }
  for (size_t chunk = 1; chunk <= stream.size(); ++chunk) {
    FpmFrameReader r;
    std::vector<std::vector<uint8_t>> got;
    std::vector<uint64_t> offsets;
    for (size_t pos = 0; pos < stream.size(); pos += chunk) {
      const size_t n = std::min(chunk, stream.size() - pos);
      ASSERT_TRUE(r.Feed(stream.data() + pos, n, [&](const uint8_t* p, size_t len, uint64_t off) {
                     EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4, 0u);
                     got.emplace_back(p, p + len);
                     offsets.push_back(off);
                     return OkStatus();
                   }).ok());
    }
    ASSERT_EQ(got, payloads) << "chunk " << chunk;
    EXPECT_EQ(offsets, (std::vector<uint64_t>{0, 12, 16, 320}));
    EXPECT_EQ(r.pending_bytes(), 0u);
  }
}

TEST(FpmFrame, BadHeaderNamesStreamOffset) {
  auto good = EncodeFpmFrame(Payload(8, 1).data(), 8);
  auto noop = [](const uint8_t*, size_t, uint64_t) { return OkStatus(); };
  for (auto [idx, val, what] : {std::tuple{0, 2, "version 2"}, std::tuple{1, 2, "protobuf"},
                                std::tuple{3, 2, "shorter than the header"}}) {
    auto stream = good;
    auto bad = good;
    bad[idx] = static_cast<uint8_t>(val);
    if (idx == 3) bad[2] = 0;
    stream.insert(stream.end(), bad.begin(), bad.end());
    FpmFrameReader r;
    Status st = r.Feed(stream.data(), stream.size(), noop);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("stream byte 12"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(what), std::string::npos) << st.message();
  }
}

TEST(FpmFrame, PayloadErrorIsPrefixedWithFrameOffset) {
  auto f = EncodeFpmFrame(Payload(4, 1).data(), 4);
  std::vector<uint8_t> stream = f;
  stream.insert(stream.end(), f.begin(), f.end());
  FpmFrameReader r;
  int n = 0;
  Status st = r.Feed(stream.data(), stream.size(), [&](const uint8_t*, size_t, uint64_t) {
    return ++n == 2 ? InvalidArgument("boom") : OkStatus();
  });
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("FPM frame at stream byte 8"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace fibnic
