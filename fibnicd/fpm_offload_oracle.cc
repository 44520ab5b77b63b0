#include "fibnicd/fpm_offload_oracle.h"

namespace fibnic {

std::vector<FpmOffload> FpmOffloadOf(const Fib& fib, const std::vector<Prefix>& prefixes, bool on_device) {
  std::vector<FpmOffload> out;
  out.reserve(prefixes.size());
  for (const auto& s : fib.StatesOf(prefixes, RouteSource::kKernel)) {
    FpmOffload state = FpmOffload::kNone;
    if (s) {
      if (!on_device) {
        state = FpmOffload::kFailed;
      } else {
        state = s->best && s->state == OffloadState::kOffloaded ? FpmOffload::kOffloaded : FpmOffload::kTrapped;
      }
    }
    out.push_back(state);
  }
  return out;
}

void FibOffloadOracle::Ask(std::vector<Prefix> prefixes, std::function<void(std::vector<FpmOffload>)> answer) {
  pipeline_.AfterCommit([prefixes = std::move(prefixes), answer = std::move(answer)](bool on_device, const Fib& fib) {
    answer(FpmOffloadOf(fib, prefixes, on_device));
  });
}

}  // namespace fibnic
