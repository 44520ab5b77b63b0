#include "fib/neigh_cam.h"

#include <algorithm>
#include <map>

namespace fibnic {

CamPlan PlanCam(const std::vector<regs::NeighEntry>& current, std::vector<CamWant> eligible) {
  const size_t cap = current.size();
  std::sort(eligible.begin(), eligible.end(), [](const CamWant& a, const CamWant& b) {
    return a.touch != b.touch ? a.touch > b.touch : a.addr < b.addr;
  });
  if (eligible.size() > cap) eligible.resize(cap);
  std::map<std::array<uint8_t, 16>, const CamWant*> wanted;
  for (const auto& w : eligible) wanted[w.addr.mapped16()] = &w;

  CamPlan plan;
  std::vector<uint32_t> free_now, freed;
  for (uint32_t i = 0; i < cap; ++i) {
    const auto& e = current[i];
    if (!e.valid()) {
      free_now.push_back(i);
      continue;
    }
    auto it = wanted.find(e.addr);
    if (it == wanted.end()) {
      freed.push_back(i);
      continue;
    }
    const regs::NeighEntry want{e.addr, it->second->mac, it->second->port, regs::kNeighValid};
    if (!(want == e)) plan.activate.push_back({i, want});
    wanted.erase(it);
  }
  // Still-wanted addresses not loaded: free indexes first, then evicted ones
  // (whose retire must land in an earlier delta).
  size_t next_free = 0, next_freed = 0;
  std::vector<bool> reused(freed.size(), false);
  for (const auto& w : eligible) {
    auto it = wanted.find(w.addr.mapped16());
    if (it == wanted.end()) continue;
    const regs::NeighEntry entry{w.addr.mapped16(), w.mac, w.port, regs::kNeighValid};
    if (next_free < free_now.size()) {
      plan.activate.push_back({free_now[next_free++], entry});
    } else {
      reused[next_freed] = true;
      plan.activate.push_back({freed[next_freed++], entry});
    }
    wanted.erase(it);
  }
  for (size_t k = 0; k < freed.size(); ++k) {
    (reused[k] ? plan.retire_first : plan.retire).push_back({freed[k], regs::NeighEntry{}});
  }
  std::sort(plan.activate.begin(), plan.activate.end(), [](const NeighWrite& a, const NeighWrite& b) { return a.index < b.index; });
  return plan;
}

}  // namespace fibnic
