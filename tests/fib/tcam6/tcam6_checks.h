// gtest checks shared by the tcam6 tests: one Commit() judged against the
// reference LPM before and after the change.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/fib/tcam6/tcam6_oracle.h"

namespace fibnic::tcam6test {

struct CommitCheck {
  const Routes* before = nullptr;
  const Routes* after = nullptr;
  std::vector<regs::Tcam6Entry> old_slots;
  std::vector<TcamWrite> writes;
  std::string label;  // printed with every failure (seed, round)
};

// Every state the device passes through answers each destination with punt,
// the old reference code or the new one; the last state is the compiler's
// entries() and answers punt or the new code. A destination under no entry
// that a write touches has the same answer in every state, so intermediate
// states are checked on the destinations under touched entries only.
inline void CheckWriteStates(const CommitCheck& c, const Tcam6Compiler& comp, const std::vector<IpAddr>& dests,
                             const std::vector<Reference::Truth>& old_truth,
                             const std::vector<Reference::Truth>& new_truth) {
  std::vector<regs::Tcam6Entry> touched;
  for (const auto& w : c.writes) {
    touched.push_back(w.entry);
    touched.push_back(c.old_slots.at(w.index));
  }
  std::vector<size_t> moving;
  for (size_t i = 0; i < dests.size(); ++i) {
    for (const auto& e : touched) {
      if (e.Matches(dests[i].v6_hi())) {
        moving.push_back(i);
        break;
      }
    }
  }
  int failures = 0;
  auto judge = [&](const std::vector<regs::Tcam6Entry>& s, size_t i, const std::string& when, bool final) {
    const uint8_t hw = TcamAnswer(s, dests[i]);
    if (hw == 0 || hw == new_truth[i].code || (!final && hw == old_truth[i].code)) return;
    if (failures++ >= 5) return;
    ADD_FAILURE() << c.label << ": " << when << " of " << c.writes.size() << " writes, " << dests[i].ToString()
                  << " -> code " << int(hw) << " (old " << int(old_truth[i].code) << ", new "
                  << int(new_truth[i].code) << ")\nstate:\n"
                  << Dump(s) << "old:\n"
                  << Dump(c.old_slots);
  };
  std::vector<regs::Tcam6Entry> last;
  ForEachState(c.old_slots, c.writes, [&](const std::vector<regs::Tcam6Entry>& s, int after_write) {
    last = s;
    for (size_t i : moving) judge(s, i, "after write " + std::to_string(after_write), false);
  });
  EXPECT_EQ(last, comp.entries()) << c.label << ": writes do not lead to entries()";
  for (size_t i = 0; i < dests.size(); ++i) judge(last, i, "final state", true);
}

// StateOf tells the truth: an offloaded route's addresses (those it is the
// longest match for) all forward with its code, a punted one's all punt, a
// partial one forwards some.
inline void CheckStates(const Tcam6Compiler& comp, const std::vector<IpAddr>& dests,
                        const std::vector<Reference::Truth>& truth, const std::string& label) {
  std::map<Prefix, std::pair<int, int>> seen;  // answered, not answered
  for (size_t i = 0; i < dests.size(); ++i) {
    if (!truth[i].matched) continue;
    const uint8_t hw = TcamAnswer(comp.entries(), dests[i]);
    auto& s = seen[*truth[i].matched];
    (hw != 0 && hw == truth[i].code ? s.first : s.second)++;
  }
  int failures = 0;
  for (const auto& [p, counts] : seen) {
    const auto st = comp.StateOf(p);
    bool ok = true;
    switch (st.state) {
      case OffloadState::kOffloaded: ok = counts.second == 0; break;
      case OffloadState::kPunted: ok = counts.first == 0; break;
      case OffloadState::kPartial: ok = counts.first > 0; break;
    }
    if (!ok && failures++ < 5) {
      ADD_FAILURE() << label << ": " << p.ToString() << " reported " << OffloadStateName(st.state) << " ("
                    << PuntReasonName(st.reason) << ") but " << counts.first << " sampled addresses forward and "
                    << counts.second << " punt";
    }
  }
}

// One Commit() checked completely: every state on destinations drawn from
// both tables and both TCAMs, and StateOf.
inline void CheckCommit(const CommitCheck& c, const Tcam6Compiler& comp, std::mt19937_64& rng, int per_entry) {
  Routes both = *c.before;
  both.insert(c.after->begin(), c.after->end());
  const auto dests = Destinations(both, {&c.old_slots, &comp.entries()}, rng, per_entry);
  const auto old_truth = Reference(*c.before).JudgeAll(dests);
  const auto new_truth = Reference(*c.after).JudgeAll(dests);
  CheckWriteStates(c, comp, dests, old_truth, new_truth);
  CheckStates(comp, dests, new_truth, c.label);
}

}  // namespace fibnic::tcam6test
