#include "fib/slot_policy.h"

#include <algorithm>
#include <map>

namespace fibnic {

std::vector<std::optional<Adjacency>> AssignSlots(const std::vector<std::optional<Adjacency>>& owners,
                                                  const std::vector<SlotCandidate>& candidates, double hysteresis,
                                                  std::vector<bool> remembered) {
  std::map<Adjacency, const SlotCandidate*> by_adj;
  for (const auto& c : candidates) by_adj[c.adj] = &c;
  auto find = [&](const Adjacency& a) -> const SlotCandidate* {
    auto it = by_adj.find(a);
    return it == by_adj.end() ? nullptr : it->second;
  };

  std::vector<std::optional<Adjacency>> out = owners;
  for (auto& o : out) {
    const SlotCandidate* c = o ? find(*o) : nullptr;
    if (o && (!c || (c->weight == 0 && !c->pinned && !c->kept))) o.reset();
  }
  std::vector<const SlotCandidate*> waiting;
  for (const auto& c : candidates) {
    if (!c.resolved || !c.carries) continue;
    if (std::find(out.begin(), out.end(), std::optional<Adjacency>(c.adj)) != out.end()) continue;
    waiting.push_back(&c);
  }
  std::sort(waiting.begin(), waiting.end(), [](const SlotCandidate* a, const SlotCandidate* b) {
    if (a->pinned != b->pinned) return a->pinned;
    return a->weight != b->weight ? a->weight > b->weight : a->first < b->first;
  });
  // A free code someone waiting last owned goes back to it; the others take
  // the codes nobody waiting remembers first.
  remembered.resize(out.size() + 1, false);
  for (const SlotCandidate* c : waiting) {
    if (c->last_code >= 1 && static_cast<size_t>(c->last_code) <= out.size()) remembered[c->last_code] = true;
  }
  for (const SlotCandidate* c : waiting) {
    const int last = c->last_code;
    if (last >= 1 && static_cast<size_t>(last) <= out.size() && !out[last - 1]) {
      out[last - 1] = c->adj;
      continue;
    }
    std::optional<size_t> free;
    for (size_t i = 0; i < out.size(); ++i) {
      if (!out[i] && (!free || (remembered[*free + 1] && !remembered[i + 1]))) free = i;
    }
    if (free) {
      out[*free] = c->adj;
      continue;
    }
    // The lightest unpinned owner (ties: the higher first next-hop) is the one at risk.
    std::optional<size_t> victim;
    for (size_t i = 0; i < out.size(); ++i) {
      const SlotCandidate* o = find(*out[i]);
      if (o->pinned || o->kept) continue;
      const SlotCandidate* v = victim ? find(*out[*victim]) : nullptr;
      if (!v || o->weight < v->weight || (o->weight == v->weight && o->first > v->first)) victim = i;
    }
    if (!victim) break;  // every slot pinned or kept
    const double wv = find(*out[*victim])->weight;
    if (!c->pinned && (c->weight <= wv || c->weight < hysteresis * wv)) break;
    out[*victim] = c->adj;
  }
  return out;
}

}  // namespace fibnic
