// Packed DP tables unpack to exactly the cells they were packed from: rows
// with infeasible prefixes, repeated rows, all-infeasible rows; and a table
// that cannot be packed (a step over 16 bits, 64-bit cells) is kept as is.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <vector>

#include "fib/tcam6/tcam6_table_pack.h"

namespace fibnic {
namespace {

constexpr int32_t kNeg = -(1 << 30);

// rows x (len + 1) never-decreasing rows; some repeat an earlier row.
std::vector<int32_t> RandomTable(std::mt19937_64& rng, size_t rows, uint32_t len, uint32_t max_step) {
  std::vector<int32_t> cells;
  for (size_t r = 0; r < rows; ++r) {
    if (r > 0 && rng() % 3 == 0) {
      const size_t from = rng() % r;
      cells.insert(cells.end(), cells.begin() + from * (len + 1), cells.begin() + (from + 1) * (len + 1));
      continue;
    }
    const uint32_t lo = uint32_t(rng() % (len + 2));  // len + 1: the whole row infeasible
    int32_t value = int32_t(rng() % 100000);
    for (uint32_t k = 0; k <= len; ++k) {
      if (k < lo) {
        cells.push_back(kNeg);
        continue;
      }
      if (k > lo) value += int32_t(rng() % (max_step + 1));
      cells.push_back(value);
    }
  }
  return cells;
}

std::vector<int32_t> RoundTrip(const tcam6::PackedTable& t, size_t rows, size_t words) {
  std::vector<int32_t> out(words, 7);
  tcam6::Unpack(t, rows, kNeg, out.data());
  return out;
}

TEST(Tcam6TablePack, RoundTripsAndShrinks) {
  const uint64_t seed = std::random_device{}();
  std::printf("RoundTripsAndShrinks seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 500; ++i) {
    const size_t rows = 1 + rng() % 12;
    const uint32_t len = uint32_t(rng() % 40);
    const auto cells = RandomTable(rng, rows, len, 5000);
    const tcam6::PackedTable t = tcam6::Pack(cells.data(), rows, len, 2, true, kNeg);
    ASSERT_FALSE(t.raw) << "seed " << seed << " table " << i;
    EXPECT_LE(t.bytes(), cells.size() * sizeof(int32_t) / 2 + rows * 8) << "seed " << seed << " table " << i;
    ASSERT_EQ(RoundTrip(t, rows, cells.size()), cells) << "seed " << seed << " table " << i;
  }
}

TEST(Tcam6TablePack, KeepsWhatDoesNotPackAsItIs) {
  // A step of 70,000 does not fit 16 bits.
  const std::vector<int32_t> big = {kNeg, 5, 70005, 70005, 1, 2, 3, 4};
  const tcam6::PackedTable a = tcam6::Pack(big.data(), 2, 3, 1, true, kNeg);
  EXPECT_TRUE(a.raw);
  EXPECT_EQ(RoundTrip(a, 2, big.size()), big);
  // 64-bit cells: two int32 words each, whatever their values.
  const std::vector<int32_t> wide = {0, 0, 3, 1, -5, -1, 9, 2};
  const tcam6::PackedTable b = tcam6::Pack(wide.data(), 2, 1, 1, false, kNeg);
  EXPECT_TRUE(b.raw);
  EXPECT_EQ(RoundTrip(b, 2, wide.size()), wide);
}

}  // namespace
}  // namespace fibnic
