#include "fib/sram4/sram4_compiler.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "fib/martians.h"

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
    : counts_(size_t{kOverflowGroup} + 1), dirty_(kWords / 64) {}

void Sram4Compiler::Widen() {
  group_hi_ = MapZeroPages<uint8_t>(kSlash24s);  // every cell painted so far has a group < 1024
}

template <typename Keep>
void Sram4Compiler::PaintRange(uint32_t first, uint32_t n, uint16_t group, uint8_t len_plus1, Keep keep) {
  if (group > kLowGroupMask && !group_hi_) Widen();
  const uint16_t fresh = static_cast<uint16_t>(len_plus1 << kDepthShift | (group & kLowGroupMask));
  const uint8_t hi = static_cast<uint8_t>(group >> kDepthShift);
  const bool has = len_plus1 != 0;
  uint32_t painted = 0;
  // k identical cells from i (k >= 4: whole words).
  auto paint = [&](uint32_t i, uint16_t c, uint32_t k) {
    const uint8_t depth = Depth(c);
    if (keep(depth)) return;
    const uint16_t old = GroupOf(i, c);
    if (depth) counts_[old] -= k;
    if (old != group || (depth != 0) != has) {
      if (k < 4) {
        MarkWordDirty(i >> 2);
      } else {
        MarkWordsDirty(i >> 2, (i + k) >> 2);
      }
    }
    cells_.Fill(i, k, static_cast<uint16_t>((c & kLongerBit) | fresh));
    if (group_hi_) std::fill_n(&group_hi_[i], k, hi);
    painted += k;
  };
  if (n < 4) {  // a /23 or /24
    for (uint32_t i = first; i < first + n; ++i) paint(i, cells_.Get(i), 1);
  } else {
    // Whole words (the range is aligned): runs of identical words are painted
    // at once — a table load is mostly such runs.
    constexpr uint32_t kBlockWords = CellBlocks::kPerBlock / 4;
    const uint32_t end_word = (first + n) >> 2;
    for (uint32_t w = first >> 2; w < end_word;) {
      // Whole /16s of one value (their high group bytes may differ: not then).
      if (!group_hi_ && w % kBlockWords == 0 && w + kBlockWords <= end_word && cells_.IsUniform(w / kBlockWords)) {
        const uint16_t c = cells_.uniform(w / kBlockWords);
        uint32_t next = w + kBlockWords;
        while (next + kBlockWords <= end_word && cells_.IsUniform(next / kBlockWords) &&
               cells_.uniform(next / kBlockWords) == c) {
          next += kBlockWords;
        }
        paint(4 * w, c, 4 * (next - w));
        w = next;
        continue;
      }
      if (!Uniform(4 * w)) {
        for (uint32_t i = 4 * w; i < 4 * w + 4; ++i) paint(i, cells_.Get(i), 1);
        ++w;
        continue;
      }
      uint32_t next = w + 1;
      while (next < end_word && SameWord(4 * next, 4 * w)) ++next;
      paint(4 * w, cells_.Get(4 * w), 4 * (next - w));
      w = next;
    }
  }
  if (has) counts_[group] += painted;
}

bool Sram4Compiler::Uniform(uint32_t i) const {
  const uint64_t q = cells_.Word(i);
  if (q != (q & 0xFFFF) * 0x0001000100010001ull) return false;
  if (!group_hi_) return true;
  uint32_t h;
  std::memcpy(&h, &group_hi_[i], sizeof h);
  return h == (h & 0xFF) * 0x01010101u;
}

bool Sram4Compiler::SameWord(uint32_t i, uint32_t j) const {
  if (cells_.Word(i) != cells_.Word(j)) return false;
  return !group_hi_ || std::memcmp(&group_hi_[i], &group_hi_[j], 4) == 0;
}

void Sram4Compiler::MarkWordsDirty(uint32_t begin, uint32_t end) {
  while (begin < end) {
    const uint32_t b = begin >> 6, lo = begin & 63;
    const uint32_t hi = std::min<uint32_t>(64, lo + (end - begin));
    const uint64_t bits = (hi - lo == 64 ? ~uint64_t{0} : ((uint64_t{1} << (hi - lo)) - 1)) << lo;
    if (dirty_[b] == 0) dirty_blocks_.push_back(b);
    dirty_[b] |= bits;
    begin += hi - lo;
  }
}

void Sram4Compiler::SetShort(uint32_t addr, int len, NhgId g) {
  const uint8_t lp1 = static_cast<uint8_t>(len + 1);
  PaintRange(addr >> 8, 1u << (24 - len), Clamp(g), lp1, [lp1](uint8_t depth) { return depth > lp1; });
}

void Sram4Compiler::RemoveShort(uint32_t addr, int len, NhgId parent, int parent_len) {
  const uint8_t lp1 = static_cast<uint8_t>(len + 1);
  const uint16_t pg = parent_len < 0 ? 0 : Clamp(parent);
  PaintRange(addr >> 8, 1u << (24 - len), pg, static_cast<uint8_t>(parent_len + 1),
             [lp1](uint8_t depth) { return depth != lp1; });
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
  cells_.Set(i, cells_.Get(i) | kLongerBit);
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
    cells_.Set(i, cells_.Get(i) & static_cast<uint16_t>(~kLongerBit));
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

std::array<NhgId, 256> Sram4Compiler::LongestGroups(uint32_t i) const {
  const Cell c = cell(i);
  std::array<NhgId, 256> groups;
  groups.fill(c.len_plus1 ? NhgId{c.group} : kNoGroup);
  if (const auto* longer = LongerIn(i)) {
    // Shortest first: a longer route paints over the ones it lies in.
    for (const auto& l : *longer) std::fill_n(groups.begin() + l.offset, size_t{1} << (32 - l.len), l.group);
  }
  return groups;
}

uint8_t Sram4Compiler::MixedCode(uint32_t i, const GroupCodes& codes) const {
  auto answer_of = [&](NhgId g) -> int64_t {
    if (g == kNoGroup || g >= kOverflowGroup || g >= codes.group_answer.size()) return -1;
    return codes.group_answer[g];
  };
  const std::array<NhgId, 256> groups = LongestGroups(i);
  const int64_t first = answer_of(groups[0]);
  if (first < 0) return 0;
  for (NhgId g : groups) {
    if (answer_of(g) != first) return 0;
  }
  return codes.nh_code[static_cast<size_t>(first)];
}

std::vector<uint32_t> Sram4Compiler::WholeSlash24s(const std::vector<bool>& wanted) const {
  std::vector<uint32_t> found(wanted.size(), kSlash24s);
  size_t missing = 0;  // wanted groups with /24s of their own not found yet
  for (NhgId g = 1; g < wanted.size() && g < kOverflowGroup; ++g) missing += wanted[g] && counts_[g] > 0;
  auto take = [&](NhgId g, uint32_t slash24) {
    // An overflow group's space always punts: its /24s show no code of its own.
    if (g >= wanted.size() || g >= kOverflowGroup || !wanted[g] || found[g] != kSlash24s) return;
    found[g] = slash24;
    if (counts_[g] > 0) --missing;
  };
  auto take_plain = [&](uint32_t i) {  // a /24 without longer routes: its cell's group is whole
    const Cell c = cell(i);
    if (c.len_plus1 && !c.has_longer) take(c.group, i);
  };
  // A /24 holding longer routes is whole when its 256 addresses' longest
  // routes are all one group's (a few thousand such /24s on the real table).
  for (const auto& [i, longer] : longer_) {
    const auto groups = LongestGroups(i);
    if (!MartianSlash24(i) && std::count(groups.begin(), groups.end(), groups[0]) == 256) take(groups[0], i);
  }
  for (uint32_t blk = 0; blk < CellBlocks::kBlocks && missing > 0; ++blk) {
    const uint32_t first = blk * CellBlocks::kPerBlock;
    if (MartianSlash24(first)) continue;  // martian ranges are /8s and /4s: a /16 is all in or all out
    if (cells_.IsUniform(blk) && !group_hi_) {  // 256 equal cells
      take_plain(first);
      continue;
    }
    for (uint32_t i = first; i < first + CellBlocks::kPerBlock; ++i) take_plain(i);
  }
  return found;
}

void Sram4Compiler::Flush(const GroupCodes& codes, uint8_t* sram, int code_bits, DeviceDelta& out) {
  // Each group's code once, so a plain /24 costs one table read.
  std::vector<uint8_t> code_of(std::min<size_t>(codes.group_answer.size(), kOverflowGroup));
  for (NhgId g = 1; g < code_of.size(); ++g) code_of[g] = codes.GroupCode(g);
  std::sort(dirty_blocks_.begin(), dirty_blocks_.end());
  // Room for every dirty word up front: a table load's delta is millions of
  // words, and growing it by doubling would copy and fault it in twice.
  size_t dirty_words = 0;
  for (uint32_t b : dirty_blocks_) dirty_words += record_ ? static_cast<size_t>(std::popcount(dirty_[b])) : 0;
  out.sram_words.reserve(out.sram_words.size() + dirty_words);
  out.sram_values.reserve(out.sram_values.size() + dirty_words);
  out.sram_before.reserve(out.sram_before.size() + dirty_words);
  if (code_bits == 4) {
    FlushWords<4>(codes, code_of, sram, out);
  } else {
    FlushWords<2>(codes, code_of, sram, out);
  }
  // A dirty block of 64 words is one /16: give back the cells of those that
  // became one value (a deleted more-specific, a fill that did not end there).
  for (uint32_t b : dirty_blocks_) cells_.Collapse(b);
  dirty_blocks_.clear();
}

template <int kBits>
void Sram4Compiler::FlushWords(const GroupCodes& codes, const std::vector<uint8_t>& code_of, uint8_t* sram,
                               DeviceDelta& out) {
  auto code_at = [&](uint32_t i) -> uint32_t {
    const uint16_t c = cells_.Get(i);
    if (c & kLongerBit) return MixedCode(i, codes);
    if (Depth(c) == 0) return 0;
    const uint16_t g = GroupOf(i, c);
    return g < code_of.size() ? code_of[g] : 0;
  };
  constexpr uint32_t kRepeat = 1u | 1u << kBits | 1u << (2 * kBits) | 1u << (3 * kBits);
  for (uint32_t b : dirty_blocks_) {
    uint64_t bits = dirty_[b];
    dirty_[b] = 0;
    while (bits) {
      const uint32_t w = b * 64 + static_cast<uint32_t>(std::countr_zero(bits));
      bits &= bits - 1;
      const uint32_t i = 4 * w;
      // Martian ranges are /8 and /4 aligned: a word's four /24s are all in or all out.
      const uint32_t v = MartianSlash24(i) ? 0
                         : Uniform(i) && !(cells_.Get(i) & kLongerBit)
                             ? code_at(i) * kRepeat
                             : code_at(i) | code_at(i + 1) << kBits | code_at(i + 2) << (2 * kBits) |
                                   code_at(i + 3) << (3 * kBits);
      const uint32_t was = ReadWord(sram, kBits, w);
      if (v == was) continue;
      WriteWord(sram, kBits, w, v);
      if (!record_) continue;
      out.sram_words.push_back(w);
      out.sram_values.push_back(static_cast<uint16_t>(v));
      out.sram_before.push_back(static_cast<uint16_t>(was));
    }
  }
}

void Sram4Compiler::MarkGroupsDirty(const std::vector<uint8_t>& changed) {
  for (const auto& [i, v] : longer_) MarkWordDirty(i >> 2);
  // Groups without /24s of their own (IPv6-only next-hops, say) move no
  // plain /24: then the pass over every cell is not needed.
  bool any_space = false;
  for (size_t g = 0; g < changed.size() && !any_space; ++g) any_space = changed[g] && counts_[g] > 0;
  if (!any_space) return;
  // A dirty_ block (64 words) is one /16 of cells.
  for (uint32_t blk = 0; blk < CellBlocks::kBlocks; ++blk) {
    const uint64_t block = dirty_[blk];
    if (block == ~uint64_t{0}) continue;  // already dirty (typical after a table load)
    if (cells_.IsUniform(blk) && !group_hi_) {
      const uint16_t c = cells_.uniform(blk);
      if (Depth(c) && changed[c & kLowGroupMask]) MarkWordsDirty(blk * 64, blk * 64 + 64);
      continue;
    }
    for (uint32_t w = blk * 64; w < blk * 64 + 64; ++w) {
      if (block >> (w & 63) & 1) continue;
      if (EmptyWord(w)) continue;  // no route here (unrouted space after a load)
      for (uint32_t s = 0; s < 4; ++s) {
        const uint32_t i = 4 * w + s;
        const uint16_t c = cells_.Get(i);
        if (Depth(c) && changed[GroupOf(i, c)]) {
          MarkWordDirty(w);
          break;
        }
      }
    }
  }
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
      MarkWordDirty(w);
      if (!record_) continue;
      out.sram_words.push_back(w);
      out.sram_values.push_back(static_cast<uint16_t>(nv));
      out.sram_before.push_back(static_cast<uint16_t>(v));
    }
  }
}

}  // namespace fibnic
