#include "sources/fpm/fpm_table.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <utility>

namespace fibnic {

FpmTable::FpmTable(RibSink& sink, PortLookup port_of, FpmTableOptions options)
    : sink_(sink), port_of_(std::move(port_of)), options_(options) {}

Status FpmTable::ApplyFrame(const uint8_t* payload, size_t len) {
  std::vector<NlMessage> msgs;
  RETURN_IF_ERROR(ForEachNetlinkMessage(payload, len, [&](const nlmsghdr* h, size_t off) -> Status {
    auto m = ParseNetlinkMessage(reinterpret_cast<const uint8_t*>(h), h->nlmsg_len);
    if (!m.ok()) return m.status().WithContext("netlink message at payload byte " + std::to_string(off));
    msgs.push_back(std::move(m).value());
    return OkStatus();
  }));
  std::set<Prefix> touched;
  for (NlMessage& m : msgs) {
    if (m.kind == NlMessage::Kind::kRoute && m.route.table == options_.table) {
      if (options_.ignore_protocols.count(m.route.protocol)) {
        ++counts_.ignored;
        m.route.del = true;
      }
      ApplyRoute(std::move(m.route), touched);
    } else if (m.kind == NlMessage::Kind::kNexthop) {
      ApplyNexthop(std::move(m.nexthop), touched);
    } else {
      ++counts_.ignored;
      continue;
    }
    ++counts_.messages;
  }
  for (const Prefix& p : touched) Emit(p);
  return OkStatus();
}

void FpmTable::Link(const Prefix& p, uint32_t nh_id) {
  if (nh_id != 0) users_[nh_id].insert(p);
}

void FpmTable::Unlink(const Prefix& p, uint32_t nh_id) {
  if (nh_id == 0) return;
  auto it = users_.find(nh_id);
  if (it == users_.end()) return;
  it->second.erase(p);
  if (it->second.empty()) users_.erase(it);
}

void FpmTable::ApplyRoute(NlRoute r, std::set<Prefix>& touched) {
  const Prefix p = r.prefix;
  auto it = routes_.find(p);
  if (it != routes_.end()) {
    Unlink(p, it->second.route.nh_id);
    if (r.del) routes_.erase(it);
  }
  touched.insert(p);
  if (r.del) return;
  Link(p, r.nh_id);
  routes_[p] = StoredRoute{std::move(r), false};
}

void FpmTable::TouchUsers(uint32_t id, std::set<Prefix>& touched) {
  // Groups may (in malformed input) contain themselves: walk with a visited set.
  std::vector<uint32_t> pending{id};
  std::unordered_set<uint32_t> seen{id};
  while (!pending.empty()) {
    const uint32_t cur = pending.back();
    pending.pop_back();
    if (auto u = users_.find(cur); u != users_.end()) touched.insert(u->second.begin(), u->second.end());
    if (auto g = parents_.find(cur); g != parents_.end()) {
      for (uint32_t parent : g->second) {
        if (seen.insert(parent).second) pending.push_back(parent);
      }
    }
  }
}

void FpmTable::ApplyNexthop(NlNexthop n, std::set<Prefix>& touched) {
  const uint32_t id = n.id;
  auto it = nhgs_.find(id);
  if (it != nhgs_.end()) {
    for (const auto& m : it->second.nh.group) {
      auto p = parents_.find(m.id);
      if (p == parents_.end()) continue;
      p->second.erase(id);
      if (p->second.empty()) parents_.erase(p);
    }
    if (n.del) nhgs_.erase(it);
  }
  if (!n.del) {
    for (const auto& m : n.group) parents_[m.id].insert(id);
    nhgs_[id] = StoredNhg{std::move(n), false};
  }
  TouchUsers(id, touched);
}

FibPathsResult FpmTable::PathsOf(const NlRoute& r) const {
  const Family fam = r.prefix.family();
  if (r.nh_id == 0 || r.type != RTN_UNICAST) return FibPaths(r.type, fam, r.paths, r.unsupported, port_of_);
  auto unknown = [](uint32_t id) {
    return FibPathsResult{{NextHop::ToHost()}, "unknown next-hop id " + std::to_string(id)};
  };
  auto it = nhgs_.find(r.nh_id);
  if (it == nhgs_.end()) return unknown(r.nh_id);
  const NlNexthop& top = it->second.nh;
  std::vector<const NlNexthop*> singles;
  if (top.group.empty()) {
    singles.push_back(&top);
  } else {
    for (const auto& m : top.group) {
      auto mi = nhgs_.find(m.id);
      if (mi == nhgs_.end()) return unknown(m.id);
      if (!mi->second.nh.group.empty()) {
        return FibPathsResult{{NextHop::ToHost()}, "next-hop group " + std::to_string(m.id) + " nested in a group"};
      }
      singles.push_back(&mi->second.nh);
    }
  }
  std::vector<NlPath> paths;
  std::string unsupported = r.unsupported;
  for (const NlNexthop* s : singles) {
    if (s->blackhole) return FibPaths(RTN_BLACKHOLE, fam, {}, "", port_of_);
    if (!s->unsupported.empty()) unsupported = s->unsupported;
    paths.push_back(s->path);
  }
  return FibPaths(RTN_UNICAST, fam, paths, unsupported, port_of_);
}

void FpmTable::Emit(const Prefix& p) {
  auto it = routes_.find(p);
  auto em = emitted_.find(p);
  if (it == routes_.end()) {
    if (em == emitted_.end()) return;
    emitted_.erase(em);
    sink_.DeleteRoute(p, RouteSource::kFpm);
    ++counts_.route_updates;
    return;
  }
  FibPathsResult res = PathsOf(it->second.route);
  if (em != emitted_.end() && em->second == res.paths) return;
  Route route{p, RouteSource::kFpm, options_.distance, res.paths};
  sink_.UpsertRoute(route);
  ++counts_.route_updates;
  if (!res.punt_why.empty()) ++counts_.punted_updates;
  emitted_[p] = std::move(res.paths);
}

void FpmTable::MarkAllStale() {
  for (auto& [p, r] : routes_) r.stale = true;
  for (auto& [id, n] : nhgs_) n.stale = true;
}

size_t FpmTable::stale_count() const {
  size_t n = 0;
  for (const auto& [p, r] : routes_) n += r.stale;
  for (const auto& [id, g] : nhgs_) n += g.stale;
  return n;
}

size_t FpmTable::SweepStale() {
  std::set<Prefix> touched;
  size_t removed = 0;
  for (auto it = routes_.begin(); it != routes_.end();) {
    if (!it->second.stale) {
      ++it;
      continue;
    }
    Unlink(it->first, it->second.route.nh_id);
    touched.insert(it->first);
    it = routes_.erase(it);
    ++removed;
  }
  std::vector<uint32_t> stale_ids;
  for (const auto& [id, g] : nhgs_) {
    if (g.stale) stale_ids.push_back(id);
  }
  for (uint32_t id : stale_ids) {
    NlNexthop del;
    del.del = true;
    del.id = id;
    ApplyNexthop(std::move(del), touched);
    ++removed;
  }
  for (const Prefix& p : touched) Emit(p);
  counts_.stale_swept += removed;
  return removed;
}

void FpmTable::ReevaluateAll() {
  for (const auto& [p, r] : routes_) Emit(p);
}

}  // namespace fibnic
