#include "rib/nexthop_table.h"

namespace fibnic {

NexthopTable::NexthopTable() : groups_(1) {}

NhId NexthopTable::InternNh(const NextHop& nh) {
  auto it = nh_index_.find(nh);
  NhId id;
  if (it != nh_index_.end()) {
    id = it->second;
  } else {
    if (!free_nhs_.empty()) {
      id = free_nhs_.back();
      free_nhs_.pop_back();
      nhs_[id] = NhRec{nh, 0};
    } else {
      id = static_cast<NhId>(nhs_.size());
      nhs_.push_back(NhRec{nh, 0});
    }
    nh_index_.emplace(nh, id);
  }
  return id;
}

NhgId NexthopTable::Acquire(const std::vector<NextHop>& paths) {
  for (const Recent& r : recent_) {
    if (r.group != kNoGroup && r.paths == paths) {
      ++groups_[r.group].refs;
      return r.group;
    }
  }
  scratch_.clear();
  for (const auto& p : paths) scratch_.push_back(InternNh(p));
  NhgId g;
  auto it = group_index_.find(scratch_);
  if (it != group_index_.end()) {
    g = it->second;
  } else {
    if (!free_groups_.empty()) {
      g = free_groups_.back();
      free_groups_.pop_back();
    } else {
      g = static_cast<NhgId>(groups_.size());
      groups_.emplace_back();
    }
    groups_[g].paths = scratch_;
    groups_[g].refs = 0;
    for (NhId id : scratch_) ++nhs_[id].refs;
    group_index_.emplace(scratch_, g);
  }
  ++groups_[g].refs;
  Recent& slot = recent_[recent_next_++ % recent_.size()];
  slot.paths = paths;
  slot.group = g;
  return g;
}

void NexthopTable::Release(NhgId g) {
  auto& rec = groups_[g];
  if (--rec.refs > 0) return;
  group_index_.erase(rec.paths);
  for (NhId id : rec.paths) {
    if (--nhs_[id].refs == 0) {
      nh_index_.erase(nhs_[id].nh);
      free_nhs_.push_back(id);
    }
  }
  rec.paths.clear();
  free_groups_.push_back(g);
  for (Recent& r : recent_) {
    if (r.group == g) r.group = kNoGroup;
  }
}

std::optional<NhId> NexthopTable::Find(const NextHop& nh) const {
  auto it = nh_index_.find(nh);
  if (it == nh_index_.end()) return std::nullopt;
  return it->second;
}

std::vector<NextHop> NexthopTable::PathsAsNextHops(NhgId g) const {
  std::vector<NextHop> out;
  for (NhId id : groups_[g].paths) out.push_back(nhs_[id].nh);
  return out;
}

}  // namespace fibnic
