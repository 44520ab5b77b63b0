#include "fib/slot_policy.h"

#include <algorithm>
#include <map>

namespace fibnic {

std::vector<std::optional<NextHop>> AssignSlots(const std::vector<std::optional<NextHop>>& owners,
                                                const std::vector<SlotCandidate>& candidates, double hysteresis) {
  std::map<NextHop, const SlotCandidate*> by_nh;
  for (const auto& c : candidates) by_nh[c.nh] = &c;
  auto weight_of = [&](const NextHop& nh) -> uint64_t {
    auto it = by_nh.find(nh);
    return it == by_nh.end() ? 0 : it->second->weight;
  };

  std::vector<std::optional<NextHop>> out = owners;
  for (auto& o : out) {
    if (o && weight_of(*o) == 0) o.reset();
  }
  std::vector<const SlotCandidate*> waiting;
  for (const auto& c : candidates) {
    if (!c.resolved || c.weight == 0) continue;
    if (std::find(out.begin(), out.end(), std::optional<NextHop>(c.nh)) != out.end()) continue;
    waiting.push_back(&c);
  }
  std::sort(waiting.begin(), waiting.end(), [](const SlotCandidate* a, const SlotCandidate* b) {
    return a->weight != b->weight ? a->weight > b->weight : a->nh < b->nh;
  });
  for (const SlotCandidate* c : waiting) {
    auto free = std::find(out.begin(), out.end(), std::nullopt);
    if (free != out.end()) {
      *free = c->nh;
      continue;
    }
    // The lightest owner (ties: the higher NextHop) is the one at risk.
    size_t victim = 0;
    for (size_t i = 1; i < out.size(); ++i) {
      const uint64_t wi = weight_of(*out[i]), wv = weight_of(*out[victim]);
      if (wi < wv || (wi == wv && *out[i] > *out[victim])) victim = i;
    }
    const uint64_t wv = weight_of(*out[victim]);
    if (c->weight <= wv || static_cast<double>(c->weight) < hysteresis * static_cast<double>(wv)) break;
    out[victim] = c->nh;
  }
  return out;
}

}  // namespace fibnic
