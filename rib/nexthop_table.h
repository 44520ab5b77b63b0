// Interned next-hops (NhId) and next-hop groups (NhgId, the sorted unique path
// set of one route). A full table names a handful of distinct next-hops and
// groups, so every per-prefix structure stores a 32-bit group id instead of a
// path vector; both tables are reference counted by the RIB's candidates.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <vector>

#include "rib/route.h"

namespace fibnic {

using NhId = uint32_t;
using NhgId = uint32_t;
inline constexpr NhgId kNoGroup = 0;  // group ids start at 1

class NexthopTable {
 public:
  NexthopTable();

  // Takes one reference on the group of these paths (sorted, unique).
  NhgId Acquire(const std::vector<NextHop>& paths);
  void AddRef(NhgId g) { ++groups_[g].refs; }
  void Release(NhgId g);

  const std::vector<NhId>& Paths(NhgId g) const { return groups_[g].paths; }
  const NextHop& Get(NhId id) const { return nhs_[id].nh; }
  std::vector<NextHop> PathsAsNextHops(NhgId g) const;
  // Ids are reused once free: holders that outlive a commit keep the NextHop.
  std::optional<NhId> Find(const NextHop& nh) const;
  bool GroupLive(NhgId g) const { return g != kNoGroup && g < groups_.size() && groups_[g].refs > 0; }
  bool NhLive(NhId id) const { return id < nhs_.size() && nhs_[id].refs > 0; }
  // Upper bounds of the id spaces, for arrays indexed by id.
  uint32_t group_bound() const { return static_cast<uint32_t>(groups_.size()); }
  uint32_t nh_bound() const { return static_cast<uint32_t>(nhs_.size()); }

 private:
  struct NhRec {
    NextHop nh;
    uint32_t refs = 0;  // groups that contain it
  };
  struct GroupRec {
    std::vector<NhId> paths;
    uint32_t refs = 0;  // RIB candidates that use it
  };
  struct PathsHash {
    size_t operator()(const std::vector<NhId>& v) const noexcept {
      size_t h = v.size();
      for (NhId x : v) h = h * 0x9E3779B97F4A7C15ull + x;
      return h;
    }
  };
  struct NextHopHash {
    size_t operator()(const NextHop& n) const noexcept {
      return (n.gateway ? std::hash<IpAddr>()(*n.gateway) : 0x51ed27u) * 31 + n.port;
    }
  };

  NhId InternNh(const NextHop& nh);

  std::vector<NhRec> nhs_;
  std::vector<NhId> free_nhs_;
  std::unordered_map<NextHop, NhId, NextHopHash> nh_index_;
  std::vector<GroupRec> groups_;  // [0] unused (kNoGroup)
  std::vector<NhgId> free_groups_;
  std::unordered_map<std::vector<NhId>, NhgId, PathsHash> group_index_;
  // Bulk loads repeat the same few path sets (a route per peer or gateway
  // in turn): remember the last few, forgotten when their group is freed.
  struct Recent {
    std::vector<NextHop> paths;
    NhgId group = kNoGroup;
  };
  std::array<Recent, 8> recent_;
  size_t recent_next_ = 0;
  std::vector<NhId> scratch_;
};

}  // namespace fibnic
