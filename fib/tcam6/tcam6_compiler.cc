#include "fib/tcam6/tcam6_compiler.h"

#include <algorithm>

#include "fib/tcam6/tcam6_sequencer.h"

namespace fibnic {

Tcam6Compiler::Tcam6Compiler(uint32_t capacity) : capacity_(capacity), opt_(capacity), slots_(capacity) {}

void Tcam6Compiler::Upsert(const Prefix& p, const Tcam6Route& r) {
  if (choosing_) {
    Defer(p, r);
    return;
  }
  if (!opt_.Upsert(p, r.code, r.reason, r.weight)) return;
  dirty_ = true;
  Changed(p, r.code);
}

void Tcam6Compiler::Erase(const Prefix& p) {
  if (choosing_) {
    Defer(p, std::nullopt);
    return;
  }
  if (!opt_.Erase(p)) return;
  dirty_ = true;
  Changed(p, kGone);
}

// While a choice is under way its routes stay as they were when it began (so
// every step gets on): a change waits here for the next choice, and Protect()
// and the end of this choice punt the entries it makes wrong.
void Tcam6Compiler::Defer(const Prefix& p, const std::optional<Tcam6Route>& r) {
  if (p.family() != Family::kV6) return;
  const U128 a = p.addr().v6();
  Deferred d{.hi = static_cast<uint64_t>(a >> 64), .lo = static_cast<uint64_t>(a), .len = static_cast<uint8_t>(p.len())};
  if (r) {
    d.weight = r->weight;
    d.code = r->code;
    d.reason = r->reason;
  } else {
    d.erased = true;
  }
  deferred_.push_back(d);
  dirty_ = true;
  Changed(p, r ? int16_t{r->code} : kGone);
}

void Tcam6Compiler::Changed(const Prefix& p, int16_t code) {
  if (p.family() != Family::kV6 || changes_overflow_) return;
  // Only an entry naming a code can need a punt (a table load into an empty
  // TCAM remembers nothing) — but the choice under way may name codes.
  if (!coded_ && !choosing_) return;
  if (changes_.size() == kMaxChanges) {
    changes_overflow_ = true;
    changes_ = {};
    return;
  }
  changes_.push_back({static_cast<uint64_t>(p.addr().v6() >> 64), static_cast<uint8_t>(std::min(p.len(), 64)), code});
}

// Whether entry e names another code than a route in changes_ that it
// overlaps (any code, if the route went).
bool Tcam6Compiler::Wrong(const regs::Tcam6Entry& e) const {
  if (!e.valid() || e.code == 0) return false;
  if (changes_overflow_) return true;
  const int len = tcam6::MaskLen(e.mask);
  for (const Change& c : changes_) {
    // Overlapping prefixes agree on their shorter length's bits.
    const uint64_t m = tcam6::Mask64(std::min<int>(len, c.len));
    if (((c.hi ^ e.value) & m) == 0 && c.code != e.code) return true;
  }
  return false;
}

std::vector<TcamWrite> Tcam6Compiler::Protect() {
  std::vector<regs::Tcam6Entry> target;
  bool punted = false;
  for (const auto& e : slots_) {
    if (!e.valid()) continue;
    regs::Tcam6Entry t = e;
    if (Wrong(e)) {
      t.code = 0;
      punted = true;
    }
    target.push_back(t);
  }
  if (!punted) return {};
  if (!chosen_) chosen_ = Held();
  return Plan(target);
}

namespace {

// The code the longest of `entries` matching `a` answers with (0: none).
// The optimizer's entries are an LPM: the sequencer puts longer ones first.
uint8_t LongestMatch(const std::vector<regs::Tcam6Entry>& entries, uint64_t a, size_t skip) {
  int best_len = -1;
  uint8_t code = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const regs::Tcam6Entry& e = entries[i];
    if (i == skip || !e.Matches(a)) continue;
    const int len = tcam6::MaskLen(e.mask);
    if (len > best_len) {
      best_len = len;
      code = e.code;
    }
  }
  return code;
}

}  // namespace

void DropRedundantEntries(std::vector<regs::Tcam6Entry>& target) {
  for (size_t i = 0; i < target.size();) {
    const regs::Tcam6Entry e = target[i];
    const uint64_t last = e.value | ~e.mask;
    // The answer within e changes only at the edges of e and of the entries inside it.
    std::vector<uint64_t> edges = {e.value};
    for (const auto& o : target) {
      const uint64_t o_last = o.value | ~o.mask;
      if (o.value < e.value || o_last > last) continue;
      edges.push_back(o.value);
      if (o_last != last) edges.push_back(o_last + 1);
    }
    bool needed = false;
    for (uint64_t a : edges) needed = needed || LongestMatch(target, a, target.size()) != LongestMatch(target, a, i);
    if (needed) {
      ++i;
    } else {
      target.erase(target.begin() + static_cast<std::ptrdiff_t>(i));
      i = 0;  // a punt may have been needed only under the entry just dropped
    }
  }
}

std::vector<TcamWrite> Tcam6Compiler::Plan(std::vector<regs::Tcam6Entry> target) {
  DropRedundantEntries(target);
  tcam6::WritePlan plan = tcam6::PlanWrites(slots_, target);
  fell_back_ = plan.fallback;
  SetSlots(std::move(plan.slots));
  return std::move(plan.writes);
}

std::vector<tcam6::OptEntry> Tcam6Compiler::Held() const {
  std::vector<tcam6::OptEntry> out;
  for (const auto& e : slots_) {
    if (e.valid()) out.push_back({e.value, static_cast<uint8_t>(tcam6::MaskLen(e.mask)), e.code});
  }
  return out;
}

void Tcam6Compiler::SetSlots(std::vector<regs::Tcam6Entry> slots) {
  slots_ = std::move(slots);
  coded_ = std::any_of(slots_.begin(), slots_.end(), [](const regs::Tcam6Entry& e) { return e.valid() && e.code != 0; });
}

int Tcam6Compiler::Adopt(const std::vector<regs::Tcam6Entry>& device) {
  if (device.size() != capacity_) return 0;
  int valid = 0;
  for (const auto& e : device) {
    if (!e.valid()) continue;
    const int len = tcam6::MaskLen(e.mask);
    if (tcam6::Mask64(len) != e.mask || (e.value & ~e.mask) != 0) return 0;
    ++valid;
  }
  SetSlots(device);
  dirty_ = true;
  // Routes given before were not remembered: Protect() punts every coded entry.
  changes_ = {};
  changes_overflow_ = true;
  return valid;
}

std::vector<TcamWrite> Tcam6Compiler::Commit() {
  std::vector<TcamWrite> out;
  while (!settled()) {
    std::optional<std::vector<TcamWrite>> writes = Commit(tcam6::Optimizer::Clock::time_point::max());
    for (TcamWrite& w : *writes) out.push_back(std::move(w));
  }
  return out;
}

std::optional<std::vector<TcamWrite>> Tcam6Compiler::Commit(tcam6::Optimizer::Clock::time_point deadline) {
  if (!choosing_) {
    // The entries held before the first punt since the last choice (or held
    // now) are the ones to prefer.
    if (!chosen_) {
      if (!dirty_) return std::vector<TcamWrite>{};
      chosen_ = Held();
    }
    choice_changes_ = changes_.size();
  }
  if (!opt_.Solve(*chosen_, deadline)) {
    choosing_ = true;
    return std::nullopt;
  }
  choosing_ = false;
  chosen_.reset();
  std::vector<regs::Tcam6Entry> target;
  for (const auto& e : opt_.entries()) {
    target.push_back({e.value, tcam6::Mask64(e.len), e.code, regs::kTcamValid});
  }
  if (deferred_.empty()) {
    changes_ = {};
    changes_overflow_ = false;
    dirty_ = false;
    return Plan(target);
  }
  // Changes came while the choice ran: its entries that they make wrong go
  // out as punts, and the changes stay for the next choice (and Protect()).
  // After an overflow they are not known: every coded entry punts.
  if (changes_overflow_) {
    changes_ = {};
  } else {
    changes_.erase(changes_.begin(), changes_.begin() + static_cast<std::ptrdiff_t>(choice_changes_));
  }
  chosen_ = opt_.entries();
  for (auto& e : target) {
    if (Wrong(e)) e.code = 0;
  }
  for (const Deferred& d : deferred_) {
    const Prefix p = Prefix::V6(d.addr(), d.len);
    if (d.erased) {
      opt_.Erase(p);
    } else {
      opt_.Upsert(p, d.code, d.reason, d.weight);
    }
  }
  deferred_ = {};
  dirty_ = true;
  return Plan(target);
}

Tcam6Compiler::State Tcam6Compiler::StateOf(const Prefix& p, std::vector<int>* walk) const {
  const tcam6::OptRouteState s = opt_.StateOf(p, walk);
  return {s.state, s.reason};
}

}  // namespace fibnic
