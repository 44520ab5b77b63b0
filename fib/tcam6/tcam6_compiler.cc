#include "fib/tcam6/tcam6_compiler.h"

#include <algorithm>

#include "fib/tcam6/tcam6_sequencer.h"

namespace fibnic {

Tcam6Compiler::Tcam6Compiler(uint32_t capacity) : capacity_(capacity), opt_(capacity), slots_(capacity) {}

void Tcam6Compiler::Upsert(const Prefix& p, const Tcam6Route& r) {
  if (!opt_.Upsert(p, r.code, r.reason, r.weight)) return;
  dirty_ = true;
  Changed(p, r.code);
}

void Tcam6Compiler::Erase(const Prefix& p) {
  if (!opt_.Erase(p)) return;
  dirty_ = true;
  Changed(p, kGone);
}

void Tcam6Compiler::Changed(const Prefix& p, int16_t code) {
  if (p.family() != Family::kV6 || changes_overflow_) return;
  // Only an entry naming a code can need a punt (a table load into an empty
  // TCAM remembers nothing).
  if (!coded_) return;
  if (changes_.size() == kMaxChanges) {
    changes_overflow_ = true;
    changes_ = {};
    return;
  }
  changes_.push_back({static_cast<uint64_t>(p.addr().v6() >> 64), static_cast<uint8_t>(std::min(p.len(), 64)), code});
}

std::vector<TcamWrite> Tcam6Compiler::Protect() {
  std::vector<regs::Tcam6Entry> target;
  bool punted = false;
  for (const auto& e : slots_) {
    if (!e.valid()) continue;
    regs::Tcam6Entry t = e;
    if (e.code != 0) {
      const int len = tcam6::MaskLen(e.mask);
      bool wrong = changes_overflow_;
      for (size_t i = 0; i < changes_.size() && !wrong; ++i) {
        const Change& c = changes_[i];
        // Overlapping prefixes agree on their shorter length's bits.
        const uint64_t m = tcam6::Mask64(std::min<int>(len, c.len));
        wrong = ((c.hi ^ e.value) & m) == 0 && c.code != e.code;
      }
      if (wrong) {
        t.code = 0;
        punted = true;
      }
    }
    target.push_back(t);
  }
  if (!punted) return {};
  if (!chosen_) chosen_ = Held();
  return Plan(target);
}

std::vector<TcamWrite> Tcam6Compiler::Plan(const std::vector<regs::Tcam6Entry>& target) {
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

std::vector<TcamWrite> Tcam6Compiler::Commit() { return *Commit(tcam6::Optimizer::Clock::time_point::max()); }

std::optional<std::vector<TcamWrite>> Tcam6Compiler::Commit(tcam6::Optimizer::Clock::time_point deadline) {
  // The entries held before the first punt since the last choice (or held
  // now) are the ones to prefer; an unfinished choice goes on with its own.
  if (!chosen_) {
    if (!dirty_) return std::vector<TcamWrite>{};
    chosen_ = Held();
  }
  if (!opt_.Solve(*chosen_, deadline)) return std::nullopt;
  chosen_.reset();
  changes_ = {};
  changes_overflow_ = false;
  dirty_ = false;
  std::vector<regs::Tcam6Entry> target;
  for (const auto& e : opt_.entries()) {
    target.push_back({e.value, tcam6::Mask64(e.len), e.code, regs::kTcamValid});
  }
  return Plan(target);
}

Tcam6Compiler::State Tcam6Compiler::StateOf(const Prefix& p, std::vector<int>* walk) const {
  const tcam6::OptRouteState s = opt_.StateOf(p, walk);
  return {s.state, s.reason};
}

}  // namespace fibnic
