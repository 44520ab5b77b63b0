// The IPv4 half of the compiler: which best route covers each /24, and the
// SRAM4 words that follow from it.
//
// Per /24 (2^24 cells of 3 bytes, 48 MiB) it keeps the group of the longest
// best route of length <= 24 covering that /24 and its depth (length + 1,
// 0 = none; high bit = "routes longer than /24 lie inside"). Adding a <= /24
// prefix of length L paints only the /24s of its range whose depth <= L + 1;
// deleting it repaints those at depth L + 1 with the parent route. Routes
// longer than /24 are kept per /24 in a side map: such a /24 gets a code only
// if all 256 addresses have the same true answer.
//
// Changed /24s are tracked as dirty SRAM words; Flush() turns them into code
// words given each group's current hardware code and answer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "fibsync/nexthop_table.h"
#include "hwif/fibnic_image.h"

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
    const uint8_t* c = &cells_[3 * size_t{slash24}];
    return Cell{static_cast<uint16_t>(c[0] | (c[1] << 8)), static_cast<uint8_t>(c[2] & 0x7F), (c[2] & 0x80) != 0};
  }
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
  bool Overflowed(NhgId g) const { return g >= kOverflowGroup; }

  // Marks every /24 whose group's code changed (changed[clamped id]) and every
  // /24 holding longer routes; used when slots or resolution move.
  void MarkGroupsDirty(const std::vector<uint8_t>& changed);
  void MarkWordDirty(uint32_t word) {
    uint64_t& block = dirty_[word >> 6];
    if (block == 0) dirty_blocks_.push_back(word >> 6);
    block |= uint64_t{1} << (word & 63);
  }

  // How a group maps to hardware at this commit: answer = the NhId the
  // hardware should use (-1 = punt); code = that NhId's slot code or 0.
  struct Codes {
    std::vector<int64_t> group_answer;  // by NhgId (full id)
    std::vector<uint8_t> nh_code;       // by NhId
    uint8_t GroupCode(NhgId g) const {
      if (g >= group_answer.size() || group_answer[g] < 0) return 0;
      return nh_code[static_cast<size_t>(group_answer[g])];
    }
  };
  // Code of one /24 under these codes.
  uint8_t CodeOf(uint32_t slash24, const Codes& codes) const;
  // Rewrites every dirty SRAM word, appends the words whose content changed
  // (ascending, with their values) to out, and clears the dirty set.
  void Flush(const Codes& codes, uint8_t* sram, int code_bits, DeviceDelta& out);
  // Sets every code c with zero[c] to 0; appends the changed words to out and
  // marks them dirty (their final codes are computed by the next Flush).
  void ZeroCodes(const std::vector<bool>& zero, uint8_t* sram, int code_bits, DeviceDelta& out);

 private:
  static uint16_t Clamp(NhgId g) { return g >= kOverflowGroup ? kOverflowGroup : static_cast<uint16_t>(g); }
  void Put(uint32_t slash24, uint16_t group, uint8_t depth_byte);
  void Paint(uint32_t slash24, uint16_t group, uint8_t len_plus1);

  std::unique_ptr<uint8_t[]> cells_;  // 3 bytes per /24: group (LE u16), depth
  std::vector<uint32_t> counts_;      // by clamped group id
  std::unordered_map<uint32_t, std::vector<Longer>> longer_;
  std::vector<uint64_t> dirty_;       // one bit per SRAM word (4 /24s)
  std::vector<uint32_t> dirty_blocks_;  // indexes of non-zero dirty_ blocks (small commits stay O(change))
};

}  // namespace fibnic
