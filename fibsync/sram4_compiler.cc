#include "fibsync/sram4_compiler.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

namespace fibnic {
namespace {

constexpr uint32_t kWords = Sram4Compiler::kSlash24s / 4;

uint32_t ReadWord(const uint8_t* sram, int code_bits, uint32_t w) {
  return code_bits == 4 ? uint32_t(sram[2 * w] | (sram[2 * w + 1] << 8)) : sram[w];
}

void WriteWord(uint8_t* sram, int code_bits, uint32_t w, uint32_t v) {
  if (code_bits == 4) {
    sram[2 * w] = static_cast<uint8_t>(v);
    sram[2 * w + 1] = static_cast<uint8_t>(v >> 8);
  } else {
    sram[w] = static_cast<uint8_t>(v);
  }
}

}  // namespace

Sram4Compiler::Sram4Compiler()
    : cells_(new uint8_t[3 * size_t{kSlash24s}]()), counts_(size_t{kOverflowGroup} + 1), dirty_(kWords / 64) {}

void Sram4Compiler::Put(uint32_t i, uint16_t group, uint8_t depth_byte) {
  uint8_t* c = &cells_[3 * size_t{i}];
  c[0] = static_cast<uint8_t>(group);
  c[1] = static_cast<uint8_t>(group >> 8);
  c[2] = depth_byte;
}

void Sram4Compiler::Paint(uint32_t i, uint16_t group, uint8_t len_plus1) {
  uint8_t* c = &cells_[3 * size_t{i}];
  const uint16_t old = static_cast<uint16_t>(c[0] | (c[1] << 8));
  const bool had = (c[2] & 0x7F) != 0;
  if (had) --counts_[old];
  if (len_plus1) ++counts_[group];
  if (old != group || had != (len_plus1 != 0)) MarkWordDirty(i >> 2);
  Put(i, group, static_cast<uint8_t>((c[2] & 0x80) | len_plus1));
}

void Sram4Compiler::SetShort(uint32_t addr, int len, NhgId g) {
  const uint32_t first = addr >> 8, n = 1u << (24 - len);
  const uint8_t lp1 = static_cast<uint8_t>(len + 1);
  const uint16_t cg = Clamp(g);
  for (uint32_t i = first; i < first + n; ++i) {
    if ((cells_[3 * size_t{i} + 2] & 0x7F) <= lp1) Paint(i, cg, lp1);
  }
}

void Sram4Compiler::RemoveShort(uint32_t addr, int len, NhgId parent, int parent_len) {
  const uint32_t first = addr >> 8, n = 1u << (24 - len);
  const uint8_t lp1 = static_cast<uint8_t>(len + 1);
  const uint16_t pg = parent_len < 0 ? 0 : Clamp(parent);
  const uint8_t plp1 = static_cast<uint8_t>(parent_len + 1);
  for (uint32_t i = first; i < first + n; ++i) {
    if ((cells_[3 * size_t{i} + 2] & 0x7F) == lp1) Paint(i, pg, plp1);
  }
}

void Sram4Compiler::SetLonger(uint32_t addr, int len, NhgId g) {
  const uint32_t i = addr >> 8;
  auto& v = longer_[i];
  const Longer item{static_cast<uint8_t>(addr & 0xFF), static_cast<uint8_t>(len), g};
  auto it = std::find_if(v.begin(), v.end(), [&](const Longer& x) { return x.offset == item.offset && x.len == item.len; });
  if (it != v.end()) {
    it->group = g;
  } else {
    v.insert(std::upper_bound(v.begin(), v.end(), item, [](const Longer& a, const Longer& b) { return a.len < b.len; }),
             item);
  }
  cells_[3 * size_t{i} + 2] |= 0x80;
  MarkWordDirty(i >> 2);
}

void Sram4Compiler::RemoveLonger(uint32_t addr, int len) {
  const uint32_t i = addr >> 8;
  auto it = longer_.find(i);
  if (it == longer_.end()) return;
  auto& v = it->second;
  std::erase_if(v, [&](const Longer& x) { return x.offset == (addr & 0xFF) && x.len == len; });
  if (v.empty()) {
    longer_.erase(it);
    cells_[3 * size_t{i} + 2] &= 0x7F;
  }
  MarkWordDirty(i >> 2);
}

const std::vector<Sram4Compiler::Longer>* Sram4Compiler::LongerIn(uint32_t slash24) const {
  auto it = longer_.find(slash24);
  return it == longer_.end() ? nullptr : &it->second;
}

std::optional<std::pair<NhgId, int>> Sram4Compiler::Match(uint32_t addr) const {
  const Cell c = cell(addr >> 8);
  if (c.has_longer) {
    const auto& v = *LongerIn(addr >> 8);
    for (auto it = v.rbegin(); it != v.rend(); ++it) {
      const uint32_t mask = 0xFFu << (32 - it->len) & 0xFF;
      if ((addr & mask) == it->offset) return std::make_pair(it->group, int{it->len});
    }
  }
  if (c.len_plus1 == 0) return std::nullopt;
  return std::make_pair(NhgId{c.group}, c.len_plus1 - 1);
}

uint8_t Sram4Compiler::CodeOf(uint32_t i, const Codes& codes) const {
  const Cell c = cell(i);
  auto answer_of = [&](NhgId g) -> int64_t {
    if (g == kNoGroup || g >= kOverflowGroup || g >= codes.group_answer.size()) return -1;
    return codes.group_answer[g];
  };
  if (!c.has_longer) return c.len_plus1 ? (c.group == kOverflowGroup ? 0 : codes.GroupCode(c.group)) : 0;
  // Mixed /24: paint the 256 addresses' answers, shortest route first.
  std::array<int64_t, 256> ans;
  ans.fill(c.len_plus1 ? answer_of(c.group) : -1);
  for (const auto& l : *LongerIn(i)) {
    const int64_t a = answer_of(l.group);
    std::fill_n(ans.begin() + l.offset, size_t{1} << (32 - l.len), a);
  }
  const int64_t first = ans[0];
  if (first < 0) return 0;
  for (int64_t a : ans) {
    if (a != first) return 0;
  }
  return codes.nh_code[static_cast<size_t>(first)];
}

void Sram4Compiler::Flush(const Codes& codes, uint8_t* sram, int code_bits, DeviceDelta& out) {
  const int shift = code_bits == 4 ? 4 : 2;
  std::sort(dirty_blocks_.begin(), dirty_blocks_.end());
  for (uint32_t b : dirty_blocks_) {
    uint64_t bits = dirty_[b];
    dirty_[b] = 0;
    while (bits) {
      const uint32_t w = b * 64 + static_cast<uint32_t>(std::countr_zero(bits));
      bits &= bits - 1;
      uint32_t v = 0;
      for (uint32_t s = 0; s < 4; ++s) v |= uint32_t{CodeOf(4 * w + s, codes)} << (shift * s);
      if (v != ReadWord(sram, code_bits, w)) {
        WriteWord(sram, code_bits, w, v);
        out.sram_words.push_back(w);
        out.sram_values.push_back(static_cast<uint16_t>(v));
      }
    }
  }
  dirty_blocks_.clear();
}

void Sram4Compiler::MarkGroupsDirty(const std::vector<uint8_t>& changed) {
  for (uint32_t w = 0; w < kWords; ++w) {
    const uint64_t block = dirty_[w >> 6];
    if (block == ~uint64_t{0}) {  // a whole block already dirty (typical after a table load)
      w |= 63;
      continue;
    }
    if (block >> (w & 63) & 1) continue;
    for (uint32_t s = 0; s < 4; ++s) {
      const uint8_t* c = &cells_[3 * size_t{4 * w + s}];
      if ((c[2] & 0x7F) && changed[c[0] | (c[1] << 8)]) {
        MarkWordDirty(w);
        break;
      }
    }
  }
  for (const auto& [i, v] : longer_) MarkWordDirty(i >> 2);
}

void Sram4Compiler::ZeroCodes(const std::vector<bool>& zero, uint8_t* sram, int code_bits, DeviceDelta& out) {
  const int shift = code_bits == 4 ? 4 : 2;
  const uint32_t mask = (1u << shift) - 1;
  for (uint32_t w = 0; w < kWords; ++w) {
    const uint32_t v = ReadWord(sram, code_bits, w);
    if (v == 0) continue;
    uint32_t nv = v;
    for (uint32_t s = 0; s < 4; ++s) {
      if (zero[(v >> (shift * s)) & mask]) nv &= ~(mask << (shift * s));
    }
    if (nv != v) {
      WriteWord(sram, code_bits, w, nv);
      out.sram_words.push_back(w);
      out.sram_values.push_back(static_cast<uint16_t>(nv));
      MarkWordDirty(w);
    }
  }
}

}  // namespace fibnic
