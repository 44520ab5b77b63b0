// Telemetry (event ring, Prometheus text) and the SRAM picture, each checked
// against values computed independently in the test.
#include <random>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "device/fibnic_regs.h"
#include "web/api/rate_history.h"
#include "web/api/sram_picture.h"
#include "web/http/telemetry.h"

namespace fibnic::web {
namespace {

TEST(TelemetryTest, EventRingKeepsTheNewestInOrder) {
  Telemetry t(4);
  for (int i = 1; i <= 6; ++i) t.Record(i % 2 ? EventLevel::kInfo : EventLevel::kError, "route", "e" + std::to_string(i));
  EXPECT_EQ(t.last_seq(), 6u);
  auto all = t.EventsSince(0, 100);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all.front().seq, 3u);
  EXPECT_EQ(all.back().message, "e6");
  auto after4 = t.EventsSince(4, 100);
  ASSERT_EQ(after4.size(), 2u);
  EXPECT_EQ(after4[0].seq, 5u);
  auto errors = t.EventsSince(0, 100, EventLevel::kError);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].message, "e4");
  EXPECT_EQ(t.EventsSince(0, 1).size(), 1u);
  EXPECT_TRUE(t.EventsSince(6, 10).empty());
}

TEST(TelemetryTest, CountersAreSharedPerNameAndLabelsAndThreadSafe) {
  Telemetry t;
  auto* a = t.Counter("x_total", "help", {{"k", "1"}});
  auto* b = t.Counter("x_total", "help", {{"k", "2"}});
  EXPECT_NE(a, b);
  EXPECT_EQ(a, t.Counter("x_total", "help", {{"k", "1"}}));
  std::vector<std::thread> th;
  for (int i = 0; i < 4; ++i) th.emplace_back([a] { for (int j = 0; j < 10000; ++j) a->Add(); });
  for (auto& x : th) x.join();
  EXPECT_EQ(t.CounterValue("x_total", {{"k", "1"}}), 40000u);
  EXPECT_EQ(t.CounterValue("x_total", {{"k", "3"}}), 0u);
  EXPECT_THROW(t.Gauge("x_total", "help"), std::logic_error);
}

TEST(TelemetryTest, PrometheusText) {
  Telemetry t;
  t.Counter("req_total", "Requests", {{"code", "2xx"}})->Add(7);
  t.Gauge("temp", "Temp \"C\"")->Set(21.5);
  auto* h = t.Histogram("lat_seconds", "Latency", {0.1, 1});
  h->Observe(0.05);
  h->Observe(0.5);
  h->Observe(5);
  t.Counter("esc_total", "x", {{"v", "a\"b\\c\nd"}})->Add();
  const std::string s = t.PrometheusText();
  EXPECT_NE(s.find("# TYPE req_total counter\nreq_total{code=\"2xx\"} 7\n"), std::string::npos) << s;
  EXPECT_NE(s.find("temp 21.5\n"), std::string::npos);
  EXPECT_NE(s.find("lat_seconds_bucket{le=\"0.1\"} 1\n"), std::string::npos) << s;
  EXPECT_NE(s.find("lat_seconds_bucket{le=\"1\"} 2\n"), std::string::npos);
  EXPECT_NE(s.find("lat_seconds_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(s.find("lat_seconds_count 3\n"), std::string::npos);
  EXPECT_NE(s.find("lat_seconds_sum 5.55\n"), std::string::npos) << s;
  EXPECT_NE(s.find("esc_total{v=\"a\\\"b\\\\c\\nd\"} 1"), std::string::npos) << s;
  EXPECT_DOUBLE_EQ(h->Quantile(0.5), 1);
}

TEST(RateHistoryTest, RatesFromCounterDeltas) {
  RateHistory h(3);
  h.Sample(1000, 0, 0, 0);
  EXPECT_TRUE(h.points().empty());
  h.Sample(2000, 100, 4000, 2);
  h.Sample(2500, 150, 4000, 2);
  ASSERT_EQ(h.points().size(), 2u);
  EXPECT_DOUBLE_EQ(h.points()[0].routes_per_s, 100);
  EXPECT_DOUBLE_EQ(h.points()[0].bar_bytes_per_s, 4000);
  EXPECT_DOUBLE_EQ(h.points()[1].routes_per_s, 100);  // 50 in 0.5 s
  h.Sample(3500, 10, 0, 0);                            // restart: counters went back
  EXPECT_DOUBLE_EQ(h.points().back().routes_per_s, 0);
  h.Sample(4500, 20, 0, 0);
  EXPECT_EQ(h.points().size(), 3u);  // capacity
  EXPECT_DOUBLE_EQ(h.Recent(2).routes_per_s, 5);
}

TEST(SramPictureTest, HilbertRoundTripAndLocality) {
  for (uint32_t n : {2u, 16u, 256u}) {
    std::set<std::pair<uint32_t, uint32_t>> seen;
    uint32_t px = 0, py = 0;
    for (uint64_t d = 0; d < uint64_t{n} * n; ++d) {
      uint32_t x, y;
      HilbertD2Xy(n, d, &x, &y);
      ASSERT_LT(x, n);
      ASSERT_LT(y, n);
      ASSERT_EQ(HilbertXy2D(n, x, y), d);
      ASSERT_TRUE(seen.insert({x, y}).second);
      if (d) {
        ASSERT_EQ((x > px ? x - px : px - x) + (y > py ? y - py : py - y), 1u);  // neighbours on the curve touch
      }
      px = x;
      py = y;
    }
  }
}

// An SRAM with code c for every /24 whose /8 index % 4 == c, and one /24 in
// 10.0.0.0/8 set to 3 (so the pixel holding it is mixed).
std::vector<uint8_t> PatternSram(int code_bits) {
  std::vector<uint8_t> sram(regs::Caps(code_bits == 2 ? regs::Caps::Model2Bit() : regs::Caps::Model4Bit()).sram_bytes(), 0);
  auto set = [&](uint32_t s24, uint8_t code) {
    const uint32_t w = s24 >> 2, sub = s24 & 3;
    if (code_bits == 2) {
      sram[w] = static_cast<uint8_t>((sram[w] & ~(3u << (2 * sub))) | (code << (2 * sub)));
    } else {
      uint16_t v = static_cast<uint16_t>(sram[2 * w] | sram[2 * w + 1] << 8);
      v = static_cast<uint16_t>((v & ~(15u << (4 * sub))) | (code << (4 * sub)));
      sram[2 * w] = v & 0xFF;
      sram[2 * w + 1] = v >> 8;
    }
  };
  for (uint32_t s24 = 0; s24 < (1u << 24); ++s24) set(s24, static_cast<uint8_t>((s24 >> 16) % 4));
  set((10u << 16) | 0x0102, 3);
  return sram;
}

TEST(SramPictureTest, EverySlash8IsASquareOfItsCode) {
  for (int bits : {2, 4}) {
    auto sram = PatternSram(bits);
    const uint32_t size = 256;  // 16x16 pixels per /8, each pixel 256 /24s (a /16)
    auto pic = SramPicture(sram.data(), bits, size, PictureOrder::kHilbert);
    ASSERT_EQ(pic.size(), size_t{size} * size);
    for (uint32_t y = 0; y < size; ++y) {
      for (uint32_t x = 0; x < size; ++x) {
        const PixelBlock b = PixelToBlock(size, PictureOrder::kHilbert, x, y);
        ASSERT_EQ(b.count, 256u);
        const uint32_t slash8 = b.first_slash24 >> 16;
        const uint8_t want = static_cast<uint8_t>(slash8 % 4);
        const bool holds_odd = b.first_slash24 <= ((10u << 16) | 0x0102) && ((10u << 16) | 0x0102) < b.first_slash24 + 256;
        ASSERT_EQ(pic[y * size + x], holds_odd ? (kMixedBit | want) : want) << "bits " << bits << " x " << x << " y " << y;
      }
    }
    // A /8 in Hilbert order is a 16x16 square: all pixels of 0.0.0.0/8 lie in one.
    std::set<std::pair<uint32_t, uint32_t>> corners;
    for (uint64_t d = 0; d < 256; ++d) {
      uint32_t x, y;
      HilbertD2Xy(size, d, &x, &y);
      corners.insert({x / 16, y / 16});
    }
    EXPECT_EQ(corners.size(), 1u);
  }
}

TEST(SramPictureTest, LinearOrderAndSummary) {
  auto sram = PatternSram(2);
  auto pic = SramPicture(sram.data(), 2, 16, PictureOrder::kLinear);  // 16x16: one pixel per /8
  for (uint32_t i = 0; i < 256; ++i) EXPECT_EQ(pic[i], i == 10 ? (kMixedBit | 2) : i % 4) << i;
  const SramSummary s = SummarizeSram(sram.data(), 2);
  EXPECT_EQ(s.by_code[0], 64u * 65536);
  EXPECT_EQ(s.by_code[1], 64u * 65536);
  EXPECT_EQ(s.by_code[2], 64u * 65536 - 1);
  EXPECT_EQ(s.by_code[3], 64u * 65536 + 1);
  EXPECT_EQ(s.per_slash8[10][3], 1u);
  EXPECT_EQ(s.per_slash8[10][2], 65535u);
  EXPECT_EQ(s.words_nonzero, (1u << 22) - 64u * 16384);
}

}  // namespace
}  // namespace fibnic::web
