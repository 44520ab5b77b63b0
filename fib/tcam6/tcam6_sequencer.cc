#include "fib/tcam6/tcam6_sequencer.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <tuple>

#include "common/ip.h"

namespace fibnic::tcam6 {

int MaskLen(uint64_t mask) { return std::countl_one(mask); }

namespace {

struct Pfx {
  uint64_t value;
  int len;
  auto operator<=>(const Pfx&) const = default;
};

Pfx PfxOf(const regs::Tcam6Entry& e) { return {e.value, MaskLen(e.mask)}; }

// a contains b (or equals it).
bool Contains(const regs::Tcam6Entry& a, const Pfx& b) {
  return MaskLen(a.mask) <= b.len && (b.value & a.mask) == a.value;
}
bool Contains(const Pfx& a, const Pfx& b) {
  const uint64_t m = a.len == 0 ? 0 : ~uint64_t{0} << (64 - a.len);
  return a.len <= b.len && (b.value & m) == a.value;
}
bool StrictlyContains(const regs::Tcam6Entry& a, const regs::Tcam6Entry& b) {
  return MaskLen(a.mask) < MaskLen(b.mask) && Contains(a, PfxOf(b));
}
bool Overlap(const regs::Tcam6Entry& a, const regs::Tcam6Entry& b) {
  return Contains(a, PfxOf(b)) || Contains(b, PfxOf(a));
}

// Code answered for every address of p that lies in no smaller listed prefix.
uint8_t FirstMatch(const std::vector<regs::Tcam6Entry>& slots, const Pfx& p) {
  for (const auto& e : slots) {
    if (e.valid() && Contains(e, p)) return e.code;
  }
  return 0;
}

// VALID counts: a ::/0 punt entry has value, mask and code 0, as an empty slot.
bool SameEntry(const regs::Tcam6Entry& a, const regs::Tcam6Entry& b) {
  return a.valid() == b.valid() && a.value == b.value && a.mask == b.mask && a.code == b.code;
}

class Planner {
 public:
  Planner(const std::vector<regs::Tcam6Entry>& old_slots, const std::vector<regs::Tcam6Entry>& target,
          size_t max_writes)
      : old_(old_slots),
        target_(target),
        n_(static_cast<uint32_t>(old_slots.size())),
        limit_(max_writes ? max_writes : 4 * size_t{n_} + 8) {}

  WritePlan Run() {
    Layout();
    WritePlan plan;
    plan.slots = final_;
    if (!Greedy(plan.writes)) {
      plan.writes = AlwaysSafe();
      plan.fallback = true;
    }
    return plan;
  }

 private:
  // Final slot of every target entry: entries already present stay put when
  // the nesting order allows; new ones take a slot between their more-specific
  // and covering entries, preferring slots that are empty now.
  void Layout() {
    std::vector<bool> keep(n_, false);
    for (uint32_t i = 0; i < n_; ++i) {
      if (!old_[i].valid()) continue;
      for (const auto& t : target_) {
        if (SameEntry(t, old_[i])) keep[i] = true;
      }
    }
    for (uint32_t i = 0; i < n_; ++i) {  // a duplicate stays only once
      for (uint32_t j = 0; j < i && keep[i]; ++j) {
        if (keep[j] && SameEntry(old_[i], old_[j])) keep[i] = false;
      }
    }
    bool compact = false;
    while (!TryLayout(keep, compact)) {
    }
  }

  // compact: nothing kept, lowest free slot each time — then longest-first
  // filling is contiguous and always fits.
  bool TryLayout(std::vector<bool>& keep, bool& compact) {
    final_.assign(n_, regs::Tcam6Entry{});
    for (uint32_t i = 0; i < n_; ++i) {
      if (keep[i]) final_[i] = old_[i];
    }
    std::vector<regs::Tcam6Entry> adds;
    for (const auto& t : target_) {
      bool kept = false;
      for (uint32_t i = 0; i < n_; ++i) kept = kept || (keep[i] && SameEntry(old_[i], t));
      if (!kept) adds.push_back(t);
    }
    std::sort(adds.begin(), adds.end(), [](const auto& a, const auto& b) {
      return std::make_tuple(MaskLen(b.mask), a.value, a.code) < std::make_tuple(MaskLen(a.mask), b.value, b.code);
    });
    for (const auto& x : adds) {
      int lo = -1, hi = static_cast<int>(n_);
      for (uint32_t i = 0; i < n_; ++i) {
        if (!final_[i].valid()) continue;
        if (StrictlyContains(x, final_[i])) lo = std::max(lo, static_cast<int>(i));
        if (StrictlyContains(final_[i], x)) hi = std::min(hi, static_cast<int>(i));
      }
      // Slots spread by length (/64 low, /0 high) leave room for entries that
      // arrive later between them; slots that are empty now are preferred.
      const int band = (64 - MaskLen(x.mask)) * (static_cast<int>(n_) - 1) / 64;
      int pick = -1;
      for (int pass = 0; pass < 2 && pick < 0; ++pass) {
        for (int s = lo + 1; s < hi; ++s) {
          if (final_[s].valid() || (pass == 0 && !compact && old_[s].valid())) continue;
          if (compact) {
            pick = s;
            break;
          }
          if (pick < 0 || std::abs(s - band) < std::abs(pick - band)) pick = s;
        }
      }
      if (pick < 0) {
        // The kept entries around x pin it: move them too (only ever shrinks
        // keep); if none does, lay everything out afresh.
        bool moved = false;
        for (uint32_t i = 0; i < n_; ++i) {
          if (keep[i] && Overlap(old_[i], x)) keep[i] = false, moved = true;
        }
        if (!moved) {
          keep.assign(n_, false);
          compact = true;
        }
        return false;
      }
      final_[pick] = x;
    }
    return true;
  }

  // Fill in longest-first order and empty shortest-first, always taking the
  // first step whose result is verified safe; adds go first so covering old
  // entries keep answering while their replacements arrive. When no step is
  // safe, the shortest entry covering a blocked change is taken out (its
  // addresses punt meanwhile) and put back once everything inside it is done.
  bool Greedy(std::vector<TcamWrite>& writes) {
    struct Add {
      uint32_t slot;
      bool evicted;
    };
    std::vector<Add> adds;
    std::vector<uint32_t> dels;
    for (uint32_t i = 0; i < n_; ++i) {
      if (old_[i].valid() && !SameEntry(old_[i], final_[i])) dels.push_back(i);
      if (final_[i].valid() && !SameEntry(old_[i], final_[i])) adds.push_back({i, false});
    }
    auto longest_first = [this](const Add& a, const Add& b) {
      return MaskLen(final_[a.slot].mask) > MaskLen(final_[b.slot].mask);
    };
    std::stable_sort(adds.begin(), adds.end(), longest_first);
    std::stable_sort(dels.begin(), dels.end(),
                     [this](uint32_t a, uint32_t b) { return MaskLen(old_[a].mask) < MaskLen(old_[b].mask); });
    std::vector<regs::Tcam6Entry> cur = old_;
    auto apply_if_safe = [&](uint32_t slot, const regs::Tcam6Entry& e) {
      const regs::Tcam6Entry before = cur[slot];
      cur[slot] = e;
      if (SafeState(cur, old_, final_)) {
        writes.push_back({slot, e});
        return true;
      }
      cur[slot] = before;
      return false;
    };
    // Something pending lies strictly inside x.
    auto covers_pending = [&](const regs::Tcam6Entry& x) {
      for (uint32_t d : dels) {
        if (StrictlyContains(x, old_[d])) return true;
      }
      for (const Add& a : adds) {
        if (StrictlyContains(x, final_[a.slot])) return true;
      }
      return false;
    };
    auto try_add = [&] {
      for (size_t i = 0; i < adds.size(); ++i) {
        const Add a = adds[i];
        if (cur[a.slot].valid() || (a.evicted && covers_pending(final_[a.slot]))) continue;
        if (apply_if_safe(a.slot, final_[a.slot])) {
          adds.erase(adds.begin() + static_cast<long>(i));
          return true;
        }
      }
      return false;
    };
    auto try_del = [&] {
      for (size_t i = 0; i < dels.size(); ++i) {
        if (apply_if_safe(dels[i], regs::Tcam6Entry{})) {
          dels.erase(dels.begin() + static_cast<long>(i));
          return true;
        }
      }
      return false;
    };
    auto try_evict = [&] {
      std::vector<uint32_t> cands;
      for (uint32_t s = 0; s < n_; ++s) {
        if (cur[s].valid() && covers_pending(cur[s])) cands.push_back(s);
      }
      std::stable_sort(cands.begin(), cands.end(),
                       [&](uint32_t a, uint32_t b) { return MaskLen(cur[a].mask) < MaskLen(cur[b].mask); });
      for (uint32_t s : cands) {
        const bool wanted = SameEntry(cur[s], final_[s]);
        if (!apply_if_safe(s, regs::Tcam6Entry{})) continue;
        if (wanted) {
          adds.push_back({s, true});
          std::stable_sort(adds.begin(), adds.end(), longest_first);
        } else {
          dels.erase(std::find(dels.begin(), dels.end(), s));
        }
        return true;
      }
      return false;
    };
    while (!adds.empty() || !dels.empty()) {
      if (writes.size() >= limit_) return false;
      if (!try_add() && !try_del() && !try_evict()) return false;
    }
    return true;
  }

  // Emptying shortest first leaves, for every destination, its longest old
  // match in place (old answer or punt); filling longest first means the first
  // new match is always the longest new one (new answer).
  std::vector<TcamWrite> AlwaysSafe() const {
    std::vector<TcamWrite> out;
    std::vector<uint32_t> order;
    for (uint32_t i = 0; i < n_; ++i) {
      if (old_[i].valid()) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [this](uint32_t a, uint32_t b) { return MaskLen(old_[a].mask) < MaskLen(old_[b].mask); });
    for (uint32_t i : order) out.push_back({i, {}});
    order.clear();
    for (uint32_t i = 0; i < n_; ++i) {
      if (final_[i].valid()) order.push_back(i);
    }
    std::stable_sort(order.begin(), order.end(),
                     [this](uint32_t a, uint32_t b) { return MaskLen(final_[a].mask) > MaskLen(final_[b].mask); });
    for (uint32_t i : order) out.push_back({i, final_[i]});
    return out;
  }

  const std::vector<regs::Tcam6Entry>& old_;
  const std::vector<regs::Tcam6Entry>& target_;
  const uint32_t n_;
  const size_t limit_;
  std::vector<regs::Tcam6Entry> final_;
};

}  // namespace

bool SafeState(const std::vector<regs::Tcam6Entry>& cur, const std::vector<regs::Tcam6Entry>& old_slots,
               const std::vector<regs::Tcam6Entry>& new_slots) {
  std::vector<Pfx> u;
  for (const auto* list : {&cur, &old_slots, &new_slots}) {
    for (const auto& e : *list) {
      if (e.valid()) u.push_back(PfxOf(e));
    }
  }
  std::sort(u.begin(), u.end());  // (value, len): preorder of the nesting tree
  u.erase(std::unique(u.begin(), u.end()), u.end());
  auto size = [](const Pfx& p) { return U128{1} << (64 - p.len); };
  std::vector<U128> covered(u.size(), 0);
  std::vector<size_t> stack;
  for (size_t i = 0; i < u.size(); ++i) {
    while (!stack.empty() && !Contains(u[stack.back()], u[i])) stack.pop_back();
    if (!stack.empty()) covered[stack.back()] += size(u[i]);
    stack.push_back(i);
  }
  for (size_t i = 0; i < u.size(); ++i) {
    if (covered[i] == size(u[i])) continue;  // no address of its own
    const uint8_t a = FirstMatch(cur, u[i]);
    if (a != 0 && a != FirstMatch(old_slots, u[i]) && a != FirstMatch(new_slots, u[i])) return false;
  }
  return true;
}

WritePlan PlanWrites(const std::vector<regs::Tcam6Entry>& old_slots, const std::vector<regs::Tcam6Entry>& target,
                     size_t max_writes) {
  return Planner(old_slots, target, max_writes).Run();
}

}  // namespace fibnic::tcam6
