#include "fibsync/tcam6_compiler.h"

#include "fibsync/tcam6_optimizer.h"
#include "fibsync/tcam6_sequencer.h"

namespace fibnic {

Tcam6Compiler::Tcam6Compiler(uint32_t capacity) : capacity_(capacity), slots_(capacity) {}

void Tcam6Compiler::Upsert(const Prefix& p, const Tcam6Route& r) {
  if (p.family() != Family::kV6) return;
  auto [it, inserted] = routes_.try_emplace(p, r);
  if (!inserted) {
    if (it->second == r) return;
    it->second = r;
  }
  dirty_ = true;
}

void Tcam6Compiler::Erase(const Prefix& p) {
  if (routes_.erase(p) > 0) dirty_ = true;
}

std::vector<TcamWrite> Tcam6Compiler::Commit() {
  if (!dirty_) return {};
  dirty_ = false;
  std::vector<tcam6::OptRoute> in;
  std::vector<const Tcam6Route*> meta;
  in.reserve(routes_.size());
  meta.reserve(routes_.size());
  for (const auto& [p, r] : routes_) {
    in.push_back({p, r.code, r.weight});
    meta.push_back(&r);
  }
  std::vector<tcam6::OptEntry> now;
  for (const auto& e : slots_) {
    if (e.valid()) now.push_back({e.value, static_cast<uint8_t>(tcam6::MaskLen(e.mask)), e.code});
  }
  const tcam6::OptResult opt = tcam6::Optimize(in, capacity_, now);

  states_.clear();
  states_.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const auto& s = opt.states[i];
    states_[in[i].prefix] = in[i].code == 0 ? State{OffloadState::kPunted, meta[i]->reason} : State{s.state, s.reason};
  }
  covered_routes_ = opt.covered_routes;
  covered_weight_ = opt.covered_weight;

  std::vector<regs::Tcam6Entry> target;
  for (const auto& e : opt.entries) {
    target.push_back({e.value, tcam6::Mask64(e.len), e.code, regs::kTcamValid});
  }
  tcam6::WritePlan plan = tcam6::PlanWrites(slots_, target);
  fell_back_ = plan.fallback;
  slots_ = std::move(plan.slots);
  return std::move(plan.writes);
}

Tcam6Compiler::State Tcam6Compiler::StateOf(const Prefix& p) const {
  auto it = states_.find(p);
  return it == states_.end() ? State{OffloadState::kPunted, PuntReason::kNone} : it->second;
}

}  // namespace fibnic
