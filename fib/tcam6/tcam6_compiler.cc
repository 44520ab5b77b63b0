#include "fib/tcam6/tcam6_compiler.h"

#include "fib/tcam6/tcam6_sequencer.h"

namespace fibnic {

Tcam6Compiler::Tcam6Compiler(uint32_t capacity) : capacity_(capacity), opt_(capacity), slots_(capacity) {}

void Tcam6Compiler::Upsert(const Prefix& p, const Tcam6Route& r) {
  if (opt_.Upsert(p, r.code, r.reason, r.weight)) dirty_ = true;
}

void Tcam6Compiler::Erase(const Prefix& p) {
  if (opt_.Erase(p)) dirty_ = true;
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
  slots_ = device;
  dirty_ = true;
  return valid;
}

std::vector<TcamWrite> Tcam6Compiler::Commit() {
  if (!dirty_) return {};
  dirty_ = false;
  std::vector<tcam6::OptEntry> now;
  for (const auto& e : slots_) {
    if (e.valid()) now.push_back({e.value, static_cast<uint8_t>(tcam6::MaskLen(e.mask)), e.code});
  }
  std::vector<regs::Tcam6Entry> target;
  for (const auto& e : opt_.Solve(now)) {
    target.push_back({e.value, tcam6::Mask64(e.len), e.code, regs::kTcamValid});
  }
  tcam6::WritePlan plan = tcam6::PlanWrites(slots_, target);
  fell_back_ = plan.fallback;
  slots_ = std::move(plan.slots);
  return std::move(plan.writes);
}

Tcam6Compiler::State Tcam6Compiler::StateOf(const Prefix& p, std::vector<int>* walk) const {
  const tcam6::OptRouteState s = opt_.StateOf(p, walk);
  return {s.state, s.reason};
}

}  // namespace fibnic
