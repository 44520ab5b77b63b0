// Write plans between random TCAM contents, the step-by-step plan and the
// always-safe one: every state answers each destination as the old TCAM, as
// the new entry set (longest match), or punts.
#include "fib/tcam6/tcam6_sequencer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <random>
#include <set>

#include "tests/fib/tcam6/tcam6_oracle.h"

namespace fibnic::tcam6test {
namespace {

uint64_t M(int len) { return len == 0 ? 0 : ~uint64_t{0} << (64 - len); }

// Distinct prefixes in a small corner of the space, so they nest.
std::vector<regs::Tcam6Entry> RandomSet(std::mt19937_64& rng, size_t n) {
  std::set<std::pair<uint64_t, int>> seen;
  std::vector<regs::Tcam6Entry> out;
  while (out.size() < n) {
    const int len = 28 + int(rng() % 37);
    const uint64_t v = (uint64_t{0x20010db8} << 32 | (rng() & 0xff0000f0ull)) & M(len);
    if (!seen.insert({v, len}).second) continue;
    out.push_back({v, M(len), uint8_t(rng() % 4), regs::kTcamValid});
  }
  return out;
}

// Longest first into increasing slots with random gaps.
std::vector<regs::Tcam6Entry> LayOut(std::vector<regs::Tcam6Entry> set, size_t slots, std::mt19937_64& rng) {
  std::sort(set.begin(), set.end(), [](const auto& a, const auto& b) { return std::popcount(a.mask) > std::popcount(b.mask); });
  std::vector<regs::Tcam6Entry> out(slots);
  size_t free_gaps = slots - set.size(), at = 0;
  for (const auto& e : set) {
    const size_t gap = free_gaps ? rng() % (free_gaps + 1) / 2 : 0;
    free_gaps -= gap;
    at += gap;
    out[at++] = e;
  }
  return out;
}

uint8_t LongestMatch(const std::vector<regs::Tcam6Entry>& set, const IpAddr& d) {
  int best = -1;
  uint8_t code = 0;
  for (const auto& e : set) {
    if (e.Matches(d.v6_hi()) && std::popcount(e.mask) > best) best = std::popcount(e.mask), code = e.code;
  }
  return code;
}

TEST(Tcam6Sequencer, EveryStateSafeStepByStepAndAlwaysSafe) {
  const uint64_t seed = std::random_device{}();
  std::printf("EveryStateSafeStepByStepAndAlwaysSafe seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  int fallbacks = 0;
  for (int round = 0; round < 300; ++round) {
    const size_t slots = 2 + rng() % 31;
    const auto old_slots = LayOut(RandomSet(rng, rng() % (slots + 1)), slots, rng);
    const auto target = RandomSet(rng, rng() % (slots + 1));
    const size_t limit = round % 3 == 0 ? 1 : 0;  // 1: forces the always-safe plan
    const auto plan = tcam6::PlanWrites(old_slots, target, limit);
    fallbacks += plan.fallback;
    std::vector<IpAddr> dests;
    for (const auto* list : {&old_slots, &target}) {
      for (const auto& e : *list) {
        if (e.valid()) AddBoundaries(EntryFirst(e), EntryLast(e), dests);
      }
    }
    const std::string label = "seed " + std::to_string(seed) + " round " + std::to_string(round);
    std::vector<regs::Tcam6Entry> last;
    int failures = 0;
    ForEachState(old_slots, plan.writes, [&](const std::vector<regs::Tcam6Entry>& s, int w) {
      last = s;
      for (const auto& d : dests) {
        const uint8_t hw = TcamAnswer(s, d);
        if (hw == 0 || hw == TcamAnswer(old_slots, d) || hw == LongestMatch(target, d)) continue;
        if (failures++ < 3) ADD_FAILURE() << label << " after write " << w << ": " << d.ToString() << " -> " << int(hw);
      }
    });
    EXPECT_EQ(last, plan.slots) << label;
    for (const auto& d : dests) EXPECT_EQ(TcamAnswer(last, d), LongestMatch(target, d)) << label << " " << d.ToString();
    size_t valid = 0;
    for (const auto& e : last) valid += e.valid();
    EXPECT_EQ(valid, target.size()) << label;
    if (limit == 1 && plan.writes.size() > 1) {
      EXPECT_TRUE(plan.fallback) << label;
    }
    if (HasFailure()) return;
  }
  std::printf("%d of 300 plans used the always-safe order (100 forced)\n", fallbacks);
}

// The planned slots are what the writes leave, also for a ::/0 punt entry:
// value, mask and code all zero, so only VALID tells it from an empty slot.
TEST(Tcam6Sequencer, WritesLeaveThePlannedSlotsForADefaultPuntEntry) {
  std::vector<regs::Tcam6Entry> old(4);
  old[3] = {0, 0, 2, regs::kTcamValid};                        // ::/0 -> code 2
  old[0] = {uint64_t{0x20010db8} << 32, M(32), 1, regs::kTcamValid};  // 2001:db8::/32 -> code 1
  const std::vector<regs::Tcam6Entry> target = {old[0], {0, 0, 0, regs::kTcamValid}};  // ::/0 now punts
  const tcam6::WritePlan plan = tcam6::PlanWrites(old, target);
  std::vector<regs::Tcam6Entry> cur = old;
  for (const TcamWrite& w : plan.writes) cur[w.index] = w.entry;
  EXPECT_EQ(cur, plan.slots);
  EXPECT_EQ(std::count_if(cur.begin(), cur.end(), [](const auto& e) { return e.valid() && e.mask == 0 && e.code == 0; }), 1);
}

}  // namespace
}  // namespace fibnic::tcam6test
