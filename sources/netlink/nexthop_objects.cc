#include "sources/netlink/nexthop_objects.h"

#include <linux/rtnetlink.h>

#include <algorithm>

namespace fibnic {

std::vector<uint32_t> NexthopObjects::Put(NlNexthop n, uint64_t gen) {
  const uint32_t id = n.id;
  if (auto it = objects_.find(id); it != objects_.end()) Unlink(id, it->second.nh);
  for (const NlGroupMember& m : n.group) groups_of_[m.id].insert(id);
  objects_[id] = Object{std::move(n), gen};
  // It, and the groups holding it (the kernel nests no groups; walk with a
  // visited set all the same, malformed input may).
  std::vector<uint32_t> out, pending{id};
  std::set<uint32_t> seen;
  while (!pending.empty()) {
    const uint32_t cur = pending.back();
    pending.pop_back();
    if (!seen.insert(cur).second) continue;
    out.push_back(cur);
    if (const auto* g = GroupsHolding(cur)) pending.insert(pending.end(), g->begin(), g->end());
  }
  return out;
}

void NexthopObjects::Unlink(uint32_t id, const NlNexthop& nh) {
  for (const NlGroupMember& m : nh.group) {
    auto g = groups_of_.find(m.id);
    if (g == groups_of_.end()) continue;
    g->second.erase(id);
    if (g->second.empty()) groups_of_.erase(g);
  }
}

void NexthopObjects::RemoveOne(uint32_t id, Changes& out) {
  auto it = objects_.find(id);
  if (it == objects_.end()) return;
  out.removed.push_back(std::move(it->second.nh));
  objects_.erase(it);
  Unlink(id, out.removed.back());
  auto g = groups_of_.find(id);
  if (g == groups_of_.end()) return;
  const std::set<uint32_t> holders = std::move(g->second);
  groups_of_.erase(g);
  for (uint32_t gid : holders) {
    auto git = objects_.find(gid);
    if (git == objects_.end()) continue;
    auto& members = git->second.nh.group;
    std::erase_if(members, [&](const NlGroupMember& m) { return m.id == id; });
    // The kernel removes a group with its last member (remove_nh_grp_entry).
    if (members.empty()) {
      RemoveOne(gid, out);
    } else {
      out.changed.push_back(gid);
    }
  }
}

NexthopObjects::Changes NexthopObjects::Remove(uint32_t id) {
  Changes out;
  RemoveOne(id, out);
  std::sort(out.changed.begin(), out.changed.end());
  out.changed.erase(std::unique(out.changed.begin(), out.changed.end()), out.changed.end());
  std::erase_if(out.changed, [&](uint32_t c) { return !objects_.count(c); });
  return out;
}

// The kernel's nexthop_flush_dev: every next-hop through the device, except
// blackholes (their device is loopback) and FDB next-hops (no device).
NexthopObjects::Changes NexthopObjects::RemoveVia(uint32_t ifindex) {
  std::vector<uint32_t> via;
  for (const auto& [id, o] : objects_) {
    if (o.nh.group.empty() && !o.nh.blackhole && o.nh.path.ifindex == ifindex) via.push_back(id);
  }
  Changes out;
  for (uint32_t id : via) RemoveOne(id, out);
  std::sort(out.changed.begin(), out.changed.end());
  out.changed.erase(std::unique(out.changed.begin(), out.changed.end()), out.changed.end());
  std::erase_if(out.changed, [&](uint32_t c) { return !objects_.count(c); });
  return out;
}

std::vector<NlNexthop> NexthopObjects::Sweep(uint64_t gen) {
  std::vector<uint32_t> ids;
  for (const auto& [id, o] : objects_) {
    if (o.gen != gen) ids.push_back(id);
  }
  std::vector<NlNexthop> gone;
  for (uint32_t id : ids) {
    auto it = objects_.find(id);
    gone.push_back(std::move(it->second.nh));
    objects_.erase(it);
    Unlink(id, gone.back());
  }
  return gone;
}

const NlNexthop* NexthopObjects::Find(uint32_t id) const {
  auto it = objects_.find(id);
  return it == objects_.end() ? nullptr : &it->second.nh;
}

const std::set<uint32_t>* NexthopObjects::GroupsHolding(uint32_t id) const {
  auto it = groups_of_.find(id);
  return it == groups_of_.end() ? nullptr : &it->second;
}

NexthopObjects::Resolved NexthopObjects::Resolve(uint32_t id) const {
  Resolved r;
  r.type = RTN_UNICAST;
  const NlNexthop* top = Find(id);
  if (!top) {
    r.unsupported = "unknown next-hop object " + std::to_string(id);
    return r;
  }
  if (!top->unsupported.empty()) {
    r.unsupported = top->unsupported;
    return r;
  }
  std::vector<std::pair<const NlNexthop*, uint16_t>> singles;
  if (top->group.empty()) {
    singles.emplace_back(top, top->path.weight);
  } else {
    for (const NlGroupMember& m : top->group) {
      const NlNexthop* s = Find(m.id);
      if (!s) {
        r.unsupported = "unknown next-hop object " + std::to_string(m.id) + " in group " + std::to_string(id);
        return r;
      }
      if (!s->group.empty()) {
        r.unsupported = "next-hop group " + std::to_string(m.id) + " nested in group " + std::to_string(id);
        return r;
      }
      singles.emplace_back(s, m.weight);
    }
  }
  for (const auto& [s, weight] : singles) {
    if (s->blackhole) {
      r.type = RTN_BLACKHOLE;
      r.paths.clear();
      return r;
    }
    if (!s->unsupported.empty()) r.unsupported = s->unsupported;
    NlPath p = s->path;
    p.weight = weight;
    r.paths.push_back(p);
  }
  return r;
}

}  // namespace fibnic
