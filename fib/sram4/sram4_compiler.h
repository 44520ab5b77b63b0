// The IPv4 half of the compiler: which best route covers each /24, and the
// SRAM4 words that follow from it.
//
// Per /24 (2^24 cells) it keeps the group of the longest best route of
// length <= 24 covering that /24, its depth (length + 1, 0 = none) and whether
// routes longer than /24 lie inside. A cell is 16 bits — group bits 0-9,
// depth, the "longer" flag — kept per /16 (fib/sram4/cell_blocks.h: a /16 of
// equal cells is one value), 13 MB for the full table; group ids of
// 1024 and up also use a second byte per /24 (bits 10-15), allocated the first
// time such a group is painted. Adding a <= /24 prefix of length L paints only
// the /24s of its range whose depth <= L + 1; deleting it repaints those at
// depth L + 1 with the parent route. Routes longer than /24 are kept per /24
// in a side map: such a /24 gets a code only if all 256 addresses have the
// same true answer.
//
// Changed /24s are tracked as dirty SRAM words; Flush() turns them into code
// words given each group's hardware code and answer at this commit
// (fib/codes.h).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fib/codes.h"
#include "fib/sram4/cell_blocks.h"
#include "fib/sram4/zero_pages.h"
#include "rib/nexthop_table.h"
#include "device/fibnic_image.h"

namespace fibnic {

class Sram4Compiler {
 public:
  static constexpr uint32_t kSlash24s = 1u << 24;
  static constexpr uint16_t kOverflowGroup = 0xFFFF;  // group ids >= this always punt in IPv4

  Sram4Compiler();

  // A prefix of length <= 24 now has best group g.
  void SetShort(uint32_t addr, int len, NhgId g);
  // A prefix of length <= 24 lost its last route; parent is the longest
  // shorter best route covering it (parent_len -1 = none).
  void RemoveShort(uint32_t addr, int len, NhgId parent, int parent_len);
  // A prefix longer than /24 now has best group g / lost its route.
  void SetLonger(uint32_t addr, int len, NhgId g);
  void RemoveLonger(uint32_t addr, int len);

  struct Cell {
    uint16_t group = 0;  // clamped to kOverflowGroup
    uint8_t len_plus1 = 0;
    bool has_longer = false;
  };
  Cell cell(uint32_t slash24) const {
    const uint16_t c = cells_.Get(slash24);
    return Cell{GroupOf(slash24, c), Depth(c), (c & kLongerBit) != 0};
  }
  // Whether SRAM word w's four /24s are all without routes (a fast skip for
  // passes over every cell of a sparse table).
  bool EmptyWord(uint32_t w) const { return cells_.Word(4 * w) == 0; }
  struct Longer {
    uint8_t offset = 0;  // address & 0xFF
    uint8_t len = 0;
    NhgId group = kNoGroup;
  };
  // Routes longer than /24 inside this /24, shortest first (nullptr if none).
  const std::vector<Longer>* LongerIn(uint32_t slash24) const;
  // Longest best route covering the address: (group, length); nullopt = none.
  std::optional<std::pair<NhgId, int>> Match(uint32_t addr) const;
  // /24s whose longest <= /24 route uses group g (the weight of the group).
  uint32_t Count24(NhgId g) const { return counts_[Clamp(g)]; }
  // For each wanted group (by id), a /24 outside the martian ranges whose
  // every address it is the longest match of — the /24 its code is written
  // to whole (kSlash24s: none). One pass over the cells, ended once each
  // wanted group with /24s of its own is found.
  std::vector<uint32_t> WholeSlash24s(const std::vector<bool>& wanted) const;

  // /16s holding cells of their own (the others are one value each).
  size_t cell_blocks() const { return cells_.blocks(); }

  // Marks every /24 whose group's code changed (changed[clamped id]) and every
  // /24 holding longer routes; used when slots or resolution move.
  void MarkGroupsDirty(const std::vector<uint8_t>& changed);
  void MarkWordDirty(uint32_t word) {
    uint64_t& block = dirty_[word >> 6];
    if (block == 0) dirty_blocks_.push_back(word >> 6);
    block |= uint64_t{1} << (word & 63);
  }

  // Rewrites every dirty SRAM word, appends the words whose content changed
  // (ascending, with their values) to out, and clears the dirty set.
  void Flush(const GroupCodes& codes, uint8_t* sram, int code_bits, DeviceDelta& out);
  // Whether Flush and ZeroCodes append the words they change to their delta
  // (off while the caller syncs the whole image instead of pushing deltas).
  void set_record(bool on) { record_ = on; }
  // Sets every code c with zero[c] to 0; appends the changed words to out and
  // marks them dirty (their final codes are computed by the next Flush).
  void ZeroCodes(const std::vector<bool>& zero, uint8_t* sram, int code_bits, DeviceDelta& out);

 private:
  static constexpr uint16_t kLongerBit = 0x8000;
  static constexpr int kDepthShift = 10;
  static constexpr uint16_t kLowGroupMask = (1u << kDepthShift) - 1;

  static uint16_t Clamp(NhgId g) { return g >= kOverflowGroup ? kOverflowGroup : static_cast<uint16_t>(g); }
  static uint8_t Depth(uint16_t c) { return static_cast<uint8_t>((c >> kDepthShift) & 0x1F); }
  uint16_t GroupOf(uint32_t slash24, uint16_t c) const {
    const uint16_t low = c & kLowGroupMask;
    return group_hi_ ? static_cast<uint16_t>(low | group_hi_[slash24] << kDepthShift) : low;
  }
  // Gives n /24s from first this group and depth where keep(depth) is false.
  template <typename Keep>
  void PaintRange(uint32_t first, uint32_t n, uint16_t group, uint8_t len_plus1, Keep keep);
  void Widen();
  // Whether the four /24s of the word starting at i are identical cells;
  // whether the words starting at i and j hold the same cells.
  bool Uniform(uint32_t i) const;
  bool SameWord(uint32_t i, uint32_t j) const;
  void MarkWordsDirty(uint32_t begin, uint32_t end);  // SRAM words [begin, end)
  // Flush for one code width: the dirty words from per-group codes.
  template <int kBits>
  void FlushWords(const GroupCodes& codes, const std::vector<uint8_t>& code_of, uint8_t* sram, DeviceDelta& out);
  // The group of the longest route covering each of a /24's 256 addresses
  // (kNoGroup: none; the cell's group clamped).
  std::array<NhgId, 256> LongestGroups(uint32_t slash24) const;
  // Code of a /24 holding longer routes: the common answer of its 256 addresses, or 0.
  uint8_t MixedCode(uint32_t slash24, const GroupCodes& codes) const;

  CellBlocks cells_;             // per /24: group bits 0-9, depth, longer flag
  ZeroPages<uint8_t> group_hi_;  // per /24: group bits 10-15 (once any group >= 1024 is painted)
  std::vector<uint32_t> counts_;        // by clamped group id
  std::unordered_map<uint32_t, std::vector<Longer>> longer_;
  std::vector<uint64_t> dirty_;         // one bit per SRAM word (4 /24s)
  std::vector<uint32_t> dirty_blocks_;  // indexes of non-zero dirty_ blocks (small commits stay O(change))
  bool record_ = true;
};

}  // namespace fibnic
