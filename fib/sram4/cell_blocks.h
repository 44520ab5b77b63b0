// The per-/24 cells of the SRAM compiler, stored per /16: a /16 whose 256
// cells are all equal (no route inside it, or one route covering it with
// nothing more specific) is one value; only the others keep their 256 cells
// (512 bytes) in a pool of blocks. On the real table about half of the
// ~50,000 routed /16s hold routes longer than /16 — 13 MB of blocks instead of
// the 27 MB of zero pages a flat 2^24-cell array wrote.
//
// A fill that leaves a block uniform gives it back at once when its first and
// last cells already hold the filled value (one scan then; a table load in
// address order fills each /16 to its end); Collapse() catches the rest (the
// compiler calls it for the /16s a commit flushed).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace fibnic {

class CellBlocks {
 public:
  static constexpr uint32_t kCells = 1u << 24;
  static constexpr uint32_t kPerBlock = 256;
  static constexpr uint32_t kBlocks = kCells / kPerBlock;

  CellBlocks() : uniform_(kBlocks, 0), block_(kBlocks, kNone) {}

  uint16_t Get(uint32_t i) const {
    const uint32_t b = block_[i >> 8];
    return b == kNone ? uniform_[i >> 8] : Data(b)[i & 0xFF];
  }
  // The four cells from i (a multiple of 4) as one word, cell i lowest.
  uint64_t Word(uint32_t i) const {
    const uint32_t b = block_[i >> 8];
    if (b == kNone) return uniform_[i >> 8] * 0x0001000100010001ull;
    uint64_t q;
    std::memcpy(&q, &Data(b)[i & 0xFF], sizeof q);
    return q;
  }
  // Whether /16 `block` is one value (then every cell holds uniform(block)).
  bool IsUniform(uint32_t block) const { return block_[block] == kNone; }
  uint16_t uniform(uint32_t block) const { return uniform_[block]; }
  // The 256 cells of a block that is not uniform.
  const uint16_t* Cells(uint32_t block) const { return Data(block_[block]); }

  void Set(uint32_t i, uint16_t v) { Fill(i, 1, v); }
  // Cells [i, i + n) = v.
  void Fill(uint32_t i, uint32_t n, uint16_t v) {
    while (n != 0) {
      const uint32_t blk = i >> 8, off = i & 0xFF;
      const uint32_t k = std::min(n, kPerBlock - off);
      if (k == kPerBlock) {
        Release(blk);
        uniform_[blk] = v;
      } else if (block_[blk] != kNone || uniform_[blk] != v) {
        uint16_t* d = Materialize(blk);
        std::fill_n(d + off, k, v);
        if (d[0] == v && d[kPerBlock - 1] == v) Collapse(blk);
      }
      i += k;
      n -= k;
    }
  }
  // Gives a block back if its cells are all equal.
  void Collapse(uint32_t blk) {
    const uint32_t b = block_[blk];
    if (b == kNone) return;
    const uint16_t* d = Data(b);
    for (uint32_t k = 1; k < kPerBlock; ++k) {
      if (d[k] != d[0]) return;
    }
    uniform_[blk] = d[0];
    Release(blk);
  }

  size_t blocks() const { return used_; }  // /16s holding their own cells
  size_t memory() const {
    return chunks_.size() * kChunk * kPerBlock * sizeof(uint16_t) + kBlocks * (sizeof(uint16_t) + sizeof(uint32_t));
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint32_t kChunk = 64;  // blocks per allocation (32 KB)

  const uint16_t* Data(uint32_t b) const { return chunks_[b / kChunk].get() + size_t{b % kChunk} * kPerBlock; }
  uint16_t* Data(uint32_t b) { return chunks_[b / kChunk].get() + size_t{b % kChunk} * kPerBlock; }
  uint16_t* Materialize(uint32_t blk) {
    if (block_[blk] != kNone) return Data(block_[blk]);
    if (free_.empty()) {
      const uint32_t first = static_cast<uint32_t>(chunks_.size() * kChunk);
      chunks_.push_back(std::make_unique_for_overwrite<uint16_t[]>(size_t{kChunk} * kPerBlock));
      for (uint32_t k = kChunk; k-- > 0;) free_.push_back(first + k);
    }
    const uint32_t b = free_.back();
    free_.pop_back();
    block_[blk] = b;
    ++used_;
    uint16_t* d = Data(b);
    std::fill_n(d, kPerBlock, uniform_[blk]);
    return d;
  }
  void Release(uint32_t blk) {
    if (block_[blk] == kNone) return;
    free_.push_back(block_[blk]);
    block_[blk] = kNone;
    --used_;
  }

  std::vector<uint16_t> uniform_;  // per /16: the value of all its cells, when block_ is kNone
  std::vector<uint32_t> block_;    // per /16: its block in the pool, or kNone
  std::vector<std::unique_ptr<uint16_t[]>> chunks_;
  std::vector<uint32_t> free_;     // blocks of the pool not in use
  size_t used_ = 0;
};

}  // namespace fibnic
