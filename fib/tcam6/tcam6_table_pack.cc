#include "fib/tcam6/tcam6_table_pack.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace fibnic::tcam6 {

namespace {

PackedTable Stored(const std::vector<uint16_t>& words, uint32_t len, uint8_t vars, bool raw) {
  PackedTable t;
  t.data = std::make_unique<uint16_t[]>(words.size());
  std::copy(words.begin(), words.end(), t.data.get());
  t.words = static_cast<uint32_t>(words.size());
  t.len = len;
  t.vars = vars;
  t.raw = raw;
  return t;
}

PackedTable Raw(const int32_t* cells, size_t int32_words, uint32_t len, uint8_t vars) {
  std::vector<uint16_t> words(int32_words * 2);
  std::memcpy(words.data(), cells, int32_words * sizeof(int32_t));
  return Stored(words, len, vars, true);
}

// Appends a row as first feasible k, value there, steps; false when a step
// does not fit 16 bits.
bool PackRow(const int32_t* row, uint32_t len, int32_t neg, std::vector<uint16_t>& out) {
  uint32_t lo = 0;
  while (lo <= len && row[lo] <= neg) ++lo;
  out.push_back(static_cast<uint16_t>(lo));
  if (lo > len) return true;
  const auto base = static_cast<uint32_t>(row[lo]);
  out.push_back(static_cast<uint16_t>(base));
  out.push_back(static_cast<uint16_t>(base >> 16));
  for (uint32_t k = lo + 1; k <= len; ++k) {
    const int64_t step = int64_t{row[k]} - row[k - 1];
    if (step < 0 || step > 0xffff) return false;
    out.push_back(static_cast<uint16_t>(step));
  }
  return true;
}

uint64_t RowHash(const int32_t* row, size_t width) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (size_t k = 0; k < width; ++k) h = (h ^ static_cast<uint32_t>(row[k])) * 1099511628211ull;
  return h;
}

}  // namespace

PackedTable Pack(const int32_t* cells, size_t rows, uint32_t len, uint8_t vars, bool narrow, int32_t neg) {
  const size_t width = size_t{len} + 1;
  if (!narrow) return Raw(cells, rows * width * 2, len, vars);
  if (width > 0xffff || rows > 0xffff) return Raw(cells, rows * width, len, vars);
  std::vector<uint16_t> out(rows);  // per row: its distinct row's number
  std::vector<std::pair<uint64_t, size_t>> distinct;  // (hash, first row)
  for (size_t r = 0; r < rows; ++r) {
    const int32_t* row = cells + r * width;
    const uint64_t h = RowHash(row, width);
    size_t d = 0;
    while (d < distinct.size() &&
           (distinct[d].first != h || !std::equal(row, row + width, cells + distinct[d].second * width))) {
      ++d;
    }
    out[r] = static_cast<uint16_t>(d);
    if (d < distinct.size()) continue;
    distinct.emplace_back(h, r);
    if (!PackRow(row, len, neg, out)) return Raw(cells, rows * width, len, vars);
  }
  return Stored(out, len, vars, false);
}

void Unpack(const PackedTable& t, size_t rows, int32_t neg, int32_t* out) {
  if (t.raw) {
    std::memcpy(out, t.data.get(), t.bytes());
    return;
  }
  const size_t width = size_t{t.len} + 1;
  const uint16_t* index = t.data.get();
  const uint16_t* in = index + rows;
  uint16_t next = 0;  // distinct rows are numbered in order of first use
  for (size_t r = 0; r < rows; ++r) {
    int32_t* row = out + r * width;
    if (index[r] < next) {
      const size_t first = static_cast<size_t>(std::find(index, index + r, index[r]) - index);
      std::copy_n(out + first * width, width, row);
      continue;
    }
    ++next;
    const uint32_t lo = *in++;
    std::fill(row, row + std::min<size_t>(lo, width), neg);
    if (lo > t.len) continue;
    uint32_t value = in[0] | (uint32_t{in[1]} << 16);
    in += 2;
    row[lo] = static_cast<int32_t>(value);
    for (uint32_t k = lo + 1; k <= t.len; ++k) {
      value += *in++;
      row[k] = static_cast<int32_t>(value);
    }
  }
}

}  // namespace fibnic::tcam6
