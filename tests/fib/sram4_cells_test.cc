// The SRAM compiler's per-/24 cells, kept per /16 (fib/sram4/cell_blocks.h),
// under random route changes in a few /16s (lengths /8 to /32, covering
// routes, more-specifics added and removed, groups changing): after every
// change each /24's cell is the one a naive painter gives (longest <= /24
// route, its depth, longer routes inside), Match() is the reference LPM's
// longest match for random addresses, the flushed SRAM words hold each /24's
// code, exactly the /16s whose cells differ keep cells of their own, and
// WholeSlash24s finds the /24s one group answers alone.
// Group ids past 1023 use the second group byte. Seeded (FIBNIC_SEED).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <map>
#include <random>
#include <vector>

#include "fib/sram4/sram4_compiler.h"
#include "tests/oracle/reference_lpm.h"
#include "tests/support/test_seed.h"

namespace fibnic {
namespace {

constexpr uint32_t kRegion = 0x0A000000;  // 10.0.0.0/12: 16 /16s, 4096 /24s
constexpr int kRegionLen = 12;
constexpr uint32_t kRegion24s = 1u << (24 - kRegionLen);

struct Want {
  NhgId group = kNoGroup;
  uint8_t len_plus1 = 0;
  bool has_longer = false;
};

class Model {
 public:
  std::map<std::pair<uint32_t, int>, NhgId> routes;  // (address, length) → group
  oracle::ReferenceLpm lpm;

  void Set(uint32_t a, int len, NhgId g) {
    routes[{a, len}] = g;
    lpm.SetRoute(Prefix::V4(a, len), {NextHop{IpAddr::V4(g), 0}});
  }
  void Erase(uint32_t a, int len) {
    routes.erase({a, len});
    lpm.EraseRoute(Prefix::V4(a, len));
  }
  // The longest route shorter than len covering a: (group, length), length -1 = none.
  std::pair<NhgId, int> Parent(uint32_t a, int len) const {
    for (int l = len - 1; l >= 0; --l) {
      auto it = routes.find({a & MaskV4(l), l});
      if (it != routes.end()) return {it->second, l};
    }
    return {kNoGroup, -1};
  }
  // The group of each address of the /24 at a, whose cell is c: its longer
  // routes painted over the cell's route, shortest first.
  std::array<NhgId, 256> Answers(uint32_t a, const Want& c) const {
    std::array<NhgId, 256> ans;
    ans.fill(c.len_plus1 ? c.group : kNoGroup);
    for (int len = 25; len <= 32; ++len) {
      for (auto it = routes.lower_bound({a, len}); it != routes.end() && it->first.first < a + 256; ++it) {
        if (it->first.second == len) std::fill_n(ans.begin() + (it->first.first & 0xFF), 1u << (32 - len), it->second);
      }
    }
    return ans;
  }
  // The cells of the region's /24s, painted shortest route first.
  std::vector<Want> Cells() const {
    std::vector<Want> out(kRegion24s);
    std::vector<std::pair<int, std::pair<uint32_t, NhgId>>> by_len;
    for (const auto& [k, g] : routes) by_len.push_back({k.second, {k.first, g}});
    std::stable_sort(by_len.begin(), by_len.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& [len, ag] : by_len) {
      const uint32_t a = ag.first;
      if (len > 24) {
        out[(a - kRegion) >> 8].has_longer = true;
        continue;
      }
      const uint32_t first = len <= kRegionLen ? 0 : (a - kRegion) >> 8;
      const uint32_t n = len <= kRegionLen ? kRegion24s : 1u << (24 - len);
      for (uint32_t i = first; i < first + n; ++i) out[i].group = ag.second, out[i].len_plus1 = uint8_t(len + 1);
    }
    return out;
  }
};

NhgId GroupOf(const std::optional<std::pair<Prefix, std::vector<NextHop>>>& m) {
  return m ? m->second[0].gateway->v4() : kNoGroup;
}

// WholeSlash24s: the /24 it gives a group has that group as the longest
// match of all 256 addresses; it gives none only when no /24 has.
void CheckWholeSlash24s(const Sram4Compiler& sram, const Model& model, const std::vector<NhgId>& groups) {
  std::vector<bool> wanted(*std::max_element(groups.begin(), groups.end()) + 1, false);
  for (NhgId g : groups) wanted[g] = true;
  const std::vector<uint32_t> found = sram.WholeSlash24s(wanted);
  const std::vector<Want> cells = model.Cells();
  for (NhgId g : groups) {
    // A route shorter than the region also covers /24s outside it, where no
    // longer route is: they are its alone.
    bool any = false;
    for (const auto& [k, rg] : model.routes) any = any || (k.second < kRegionLen && rg == g);
    const uint32_t at = found[g];
    if (at != Sram4Compiler::kSlash24s && ((at << 8) & MaskV4(kRegionLen)) != kRegion) {
      const auto [pg, plen] = model.Parent(at << 8, 25);
      ASSERT_TRUE(pg == g && plen < kRegionLen) << "group " << g << ", /24 " << IpAddr::V4(at << 8).ToString();
    }
    for (uint32_t i = 0; i < kRegion24s; ++i) {
      const uint32_t s24 = (kRegion >> 8) + i;
      const std::array<NhgId, 256> ans = model.Answers(s24 << 8, cells[i]);
      const bool whole = std::all_of(ans.begin(), ans.end(), [&](NhgId a) { return a == g; });
      ASSERT_TRUE(whole || found[g] != s24) << "group " << g << ", /24 " << IpAddr::V4(s24 << 8).ToString();
      any = any || whole;
    }
    ASSERT_EQ(found[g] != Sram4Compiler::kSlash24s, any) << "group " << g;
  }
}

void RunRandomCells(uint64_t seed, NhgId max_group) {
  std::mt19937_64 rng(seed);
  auto pick = [&](uint64_t lo, uint64_t hi) { return std::uniform_int_distribution<uint64_t>(lo, hi)(rng); };
  Sram4Compiler sram;
  Model model;
  GroupCodes codes;
  codes.group_answer.resize(max_group + 1);
  codes.nh_code.resize(max_group + 1);
  for (NhgId g = 1; g <= max_group; ++g) {
    codes.group_answer[g] = g;
    codes.nh_code[g] = static_cast<uint8_t>(g % 3 + 1);  // 2-bit codes 1..3
  }
  std::vector<uint8_t> bar(Sram4Compiler::kSlash24s / 4, 0);  // 2-bit: a byte per word
  // Few groups, so neighbouring routes often agree and /16s turn uniform again.
  std::vector<NhgId> groups;
  for (int k = 0; k < 4; ++k) groups.push_back(static_cast<NhgId>(pick(1, max_group)));
  std::vector<std::pair<uint32_t, int>> live;
  for (int step = 0; step < 1500; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const bool add = live.empty() || pick(0, 99) < 60;
    if (add) {
      const int len = static_cast<int>(pick(0, 9) < 2 ? pick(8, 16) : pick(17, 32));
      const uint32_t a = len <= kRegionLen ? kRegion & MaskV4(len)
                                           : (kRegion | static_cast<uint32_t>(pick(0, (1u << 20) - 1))) & MaskV4(len);
      const NhgId g = groups[pick(0, groups.size() - 1)];
      if (!model.routes.contains({a, len})) live.push_back({a, len});
      model.Set(a, len, g);
      if (len <= 24) {
        sram.SetShort(a, len, g);
      } else {
        sram.SetLonger(a, len, g);
      }
    } else {
      const size_t k = pick(0, live.size() - 1);
      const auto [a, len] = live[k];
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      model.Erase(a, len);
      if (len <= 24) {
        const auto [pg, plen] = model.Parent(a, len);
        sram.RemoveShort(a, len, pg, plen);
      } else {
        sram.RemoveLonger(a, len);
      }
    }
    DeviceDelta delta;
    sram.Flush(codes, bar.data(), 2, delta);

    const std::vector<Want> want = model.Cells();
    size_t mixed16 = 0;
    for (uint32_t i = 0; i < kRegion24s; ++i) {
      const uint32_t s24 = (kRegion >> 8) + i;
      const auto c = sram.cell(s24);
      const Want& w = want[i];
      ASSERT_EQ(c.len_plus1, w.len_plus1) << "/24 " << IpAddr::V4(s24 << 8).ToString();
      if (w.len_plus1) {
        ASSERT_EQ(c.group, w.group) << "/24 " << IpAddr::V4(s24 << 8).ToString();
      }
      ASSERT_EQ(c.has_longer, w.has_longer) << "/24 " << IpAddr::V4(s24 << 8).ToString();
      // The SRAM code: the common answer of the /24's 256 addresses, else 0.
      uint8_t code = w.len_plus1 ? codes.nh_code[w.group] : 0;
      if (w.has_longer) {
        const std::array<NhgId, 256> ans = model.Answers(s24 << 8, w);
        const bool same = ans[0] != kNoGroup && std::all_of(ans.begin(), ans.end(), [&](NhgId g) { return g == ans[0]; });
        code = same ? codes.nh_code[ans[0]] : 0;
      }
      const uint32_t word = s24 >> 2;
      ASSERT_EQ((bar[word] >> (2 * (s24 & 3))) & 3, code) << "/24 " << IpAddr::V4(s24 << 8).ToString();
      // Cells, not groups, decide whether a /16 is one value: the second group byte is apart.
      if ((i & 255) == 255) {
        bool uniform = true;
        const Want& f = want[i - 255];
        for (uint32_t j = i - 254; j <= i && uniform; ++j) {
          uniform = want[j].len_plus1 == f.len_plus1 && want[j].has_longer == f.has_longer &&
                    (!f.len_plus1 || (want[j].group & 1023) == (f.group & 1023));
        }
        mixed16 += !uniform;
      }
    }
    ASSERT_EQ(sram.cell_blocks(), mixed16) << "/16s keeping cells of their own";
    if (step % 100 == 0) {
      ASSERT_NO_FATAL_FAILURE(CheckWholeSlash24s(sram, model, groups));
    }
    for (int k = 0; k < 64; ++k) {
      const uint32_t dst = kRegion | static_cast<uint32_t>(pick(0, (1u << 20) - 1));
      const auto m = model.lpm.Match(IpAddr::V4(dst));
      const auto got = sram.Match(dst);
      ASSERT_EQ(got.has_value(), m.has_value()) << IpAddr::V4(dst).ToString();
      if (m) {
        ASSERT_EQ(got->first, GroupOf(m)) << IpAddr::V4(dst).ToString();
        ASSERT_EQ(got->second, m->first.len()) << IpAddr::V4(dst).ToString();
      }
    }
  }
  // Everything removed: no /16 keeps cells.
  for (const auto& [a, len] : live) {
    model.Erase(a, len);
    if (len <= 24) {
      const auto [pg, plen] = model.Parent(a, len);
      sram.RemoveShort(a, len, pg, plen);
    } else {
      sram.RemoveLonger(a, len);
    }
  }
  EXPECT_EQ(sram.cell_blocks(), 0u);
  EXPECT_FALSE(sram.cell(kRegion >> 8).len_plus1);
}

TEST(Sram4Cells, RandomChangesMatchTheReference) { RunRandomCells(testing::TestSeed("Sram4Cells"), 40); }

TEST(Sram4Cells, RandomChangesWithWideGroupIds) { RunRandomCells(testing::TestSeed("Sram4CellsWide"), 4000); }

// A /24 is one group's whole when every address's longest route is that
// group's, longer routes included; martian /24s never are (they hold code 0).
TEST(Sram4Cells, WholeSlash24sOfGroups) {
  Sram4Compiler sram;
  sram.SetShort(0x0A000000, 24, 1);
  sram.SetLonger(0x0A000000, 25, 1);  // 10.0.0.0/24: group 1's, with a longer route of its own
  sram.SetShort(0x0A000100, 24, 2);
  sram.SetLonger(0x0A000180, 25, 3);  // 10.0.1.0/24: shared by 2 and 3
  sram.SetLonger(0x0A000200, 25, 3);
  sram.SetLonger(0x0A000280, 25, 3);  // 10.0.2.0/24: group 3's, from two halves
  sram.SetShort(0x7F000000, 8, 4);    // 127/8: martian
  const std::vector<uint32_t> found = sram.WholeSlash24s({false, true, true, true, true, true});
  EXPECT_EQ(found[1], 0x0A0000u);
  EXPECT_EQ(found[2], Sram4Compiler::kSlash24s);
  EXPECT_EQ(found[3], 0x0A0002u);
  EXPECT_EQ(found[4], Sram4Compiler::kSlash24s);
  EXPECT_EQ(found[5], Sram4Compiler::kSlash24s);  // no route
}

}  // namespace
}  // namespace fibnic
