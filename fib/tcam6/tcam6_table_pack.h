// A DP table of the IPv6 TCAM optimizer at rest. Stored tables sit unread
// between changes and are most of the DP's memory, so they are kept packed and
// unpacked into the optimizer's arena when read (a few hundred cells: cheap
// beside computing a table).
//
// A table is `rows` rows of len + 1 int32 cells. Rows never decrease and start
// with infeasible cells (`neg`), so a row is its first feasible k, its value
// there and 16-bit steps after; rows equal to an earlier row of the table
// (common: colours that end the same) are stored once. A table with a step
// that does not fit, or with 64-bit cells, is kept as it is.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace fibnic::tcam6 {

struct PackedTable {
  std::unique_ptr<uint16_t[]> data;
  uint32_t words = 0;  // uint16 words in data
  uint32_t len = 0;    // cells per row: len + 1
  uint8_t vars = 0;    // the optimizer's need variants (rows = vars x colours)
  bool raw = false;    // data is the cells as they are
  size_t bytes() const { return size_t{words} * sizeof(uint16_t); }
};

// cells: rows x (len + 1) int32 cells when narrow, else rows x (len + 1)
// int64 cells as two int32 words each. neg: the narrow infeasible value
// (every cell <= neg is infeasible and unpacks as neg).
PackedTable Pack(const int32_t* cells, size_t rows, uint32_t len, uint8_t vars, bool narrow, int32_t neg);
// Writes the cells Pack() was given (infeasible ones as neg) to out.
void Unpack(const PackedTable& t, size_t rows, int32_t neg, int32_t* out);

}  // namespace fibnic::tcam6
