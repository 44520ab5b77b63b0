// gtest checks shared by the tcam6 tests: one Commit() judged against the
// reference LPM before and after the change.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/tcam6/tcam6_oracle.h"

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
// entries() and answers punt or the new code.
inline void CheckWriteStates(const CommitCheck& c, const Tcam6Compiler& comp, const std::vector<IpAddr>& dests) {
  const Reference ref_old(*c.before), ref_new(*c.after);
  std::vector<uint8_t> old_code(dests.size()), new_code(dests.size());
  for (size_t i = 0; i < dests.size(); ++i) {
    old_code[i] = ref_old.Code(dests[i]);
    new_code[i] = ref_new.Code(dests[i]);
  }
  int failures = 0;
  std::vector<regs::Tcam6Entry> last;
  ForEachState(c.old_slots, c.writes, [&](const std::vector<regs::Tcam6Entry>& s, int after_write) {
    last = s;
    for (size_t i = 0; i < dests.size() && failures < 5; ++i) {
      const uint8_t hw = TcamAnswer(s, dests[i]);
      if (hw == 0 || hw == new_code[i] || hw == old_code[i]) continue;
      ++failures;
      ADD_FAILURE() << c.label << ": after write " << after_write << " of " << c.writes.size() << ", "
                    << dests[i].ToString() << " -> code " << int(hw) << " (old " << int(old_code[i]) << ", new "
                    << int(new_code[i]) << ")\nstate:\n"
                    << Dump(s) << "old:\n"
                    << Dump(c.old_slots);
    }
  });
  EXPECT_EQ(last, comp.entries()) << c.label << ": writes do not lead to entries()";
  for (size_t i = 0; i < dests.size() && failures < 5; ++i) {
    const uint8_t hw = TcamAnswer(last, dests[i]);
    if (hw == 0 || hw == new_code[i]) continue;
    ++failures;
    ADD_FAILURE() << c.label << ": final " << dests[i].ToString() << " -> " << int(hw) << " want " << int(new_code[i]);
  }
}

// StateOf tells the truth: an offloaded route's addresses (those it is the
// longest match for) all forward with its code, a punted one's all punt, a
// partial one forwards some.
inline void CheckStates(const Routes& routes, const Tcam6Compiler& comp, const std::vector<IpAddr>& dests,
                        const std::string& label) {
  const Reference ref(routes);
  std::map<Prefix, std::pair<int, int>> seen;  // answered, not answered
  for (const auto& d : dests) {
    auto m = ref.Matched(d);
    if (!m) continue;
    const uint8_t hw = TcamAnswer(comp.entries(), d);
    const uint8_t want = ref.Code(d);
    auto& s = seen[*m];
    (hw != 0 && hw == want ? s.first : s.second)++;
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

}  // namespace fibnic::tcam6test
