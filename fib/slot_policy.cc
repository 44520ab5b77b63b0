#include "fib/slot_policy.h"

#include <algorithm>
#include <map>

namespace fibnic {

std::vector<std::optional<Adjacency>> AssignSlots(const std::vector<std::optional<Adjacency>>& owners,
                                                  const std::vector<SlotCandidate>& candidates, double hysteresis) {
  std::map<Adjacency, const SlotCandidate*> by_adj;
  for (const auto& c : candidates) by_adj[c.adj] = &c;
  auto weight_of = [&](const Adjacency& a) -> uint64_t {
    auto it = by_adj.find(a);
    return it == by_adj.end() ? 0 : it->second->weight;
  };
  auto first_of = [&](const Adjacency& a) { return by_adj.at(a)->first; };  // owners left all have a candidate

  std::vector<std::optional<Adjacency>> out = owners;
  for (auto& o : out) {
    if (o && weight_of(*o) == 0) o.reset();
  }
  std::vector<const SlotCandidate*> waiting;
  for (const auto& c : candidates) {
    if (!c.resolved || c.weight == 0) continue;
    if (std::find(out.begin(), out.end(), std::optional<Adjacency>(c.adj)) != out.end()) continue;
    waiting.push_back(&c);
  }
  std::sort(waiting.begin(), waiting.end(), [](const SlotCandidate* a, const SlotCandidate* b) {
    return a->weight != b->weight ? a->weight > b->weight : a->first < b->first;
  });
  for (const SlotCandidate* c : waiting) {
    auto free = std::find(out.begin(), out.end(), std::nullopt);
    if (free != out.end()) {
      *free = c->adj;
      continue;
    }
    // The lightest owner (ties: the higher first next-hop) is the one at risk.
    size_t victim = 0;
    for (size_t i = 1; i < out.size(); ++i) {
      const uint64_t wi = weight_of(*out[i]), wv = weight_of(*out[victim]);
      if (wi < wv || (wi == wv && first_of(*out[i]) > first_of(*out[victim]))) victim = i;
    }
    const uint64_t wv = weight_of(*out[victim]);
    if (c->weight <= wv || static_cast<double>(c->weight) < hysteresis * static_cast<double>(wv)) break;
    out[victim] = c->adj;
  }
  return out;
}

}  // namespace fibnic
