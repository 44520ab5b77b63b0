#include "sources/kernel/kernel_vrf.h"

#include <algorithm>
#include <set>

namespace fibnic {

void VrfContext::SetLink(uint32_t ifindex, uint32_t master, std::optional<uint32_t> vrf_table) {
  if (master != 0) {
    master_[ifindex] = master;
  } else {
    master_.erase(ifindex);
  }
  if (vrf_table) {
    vrf_table_[ifindex] = *vrf_table;
  } else {
    vrf_table_.erase(ifindex);
  }
}

bool VrfContext::Update(const std::unordered_map<uint32_t, uint64_t>& links, InterfacePorts& ports,
                        const std::vector<uint32_t>& configured) {
  std::set<uint32_t> tables;  // of the FIBNIC ports that exist; 0 = main
  for (const auto& [ifindex, gen] : links) {
    if (!ports.Port(ifindex)) continue;
    auto m = master_.find(ifindex);
    if (m == master_.end()) {
      tables.insert(0);
    } else if (auto v = vrf_table_.find(m->second); v != vrf_table_.end()) {
      tables.insert(v->second);
    } else if (!links.count(m->second)) {
      tables.insert(UINT32_MAX);  // its master is not known yet: it may be a VRF
    } else {
      tables.insert(0);  // a bridge or bond: the port routes nothing itself
    }
  }
  std::string refusing;
  if (tables.count(UINT32_MAX)) {
    refusing = "a FIBNIC port is enslaved to an interface not seen yet: punting everything";
  } else if (tables.size() > 1) {
    refusing = "the FIBNIC ports are split over VRFs (tables";
    for (uint32_t t : tables) refusing += " " + (t == 0 ? std::string("main") : std::to_string(t));
    refusing += "): punting everything";
  } else if (!tables.empty() && *tables.begin() != 0 &&
             std::find(configured.begin(), configured.end(), *tables.begin()) == configured.end()) {
    refusing = "the FIBNIC ports are in the VRF of table " + std::to_string(*tables.begin()) +
               ", which is not in the kernel source's tables: punting everything";
  }
  const uint32_t context = tables.size() == 1 ? *tables.begin() : 0;
  const bool changed = refusing != refusing_ || context != context_table_;
  refusing_ = std::move(refusing);
  context_table_ = context;
  return changed;
}

bool VrfContext::TableActive(uint32_t table) const {
  if (context_table_ != 0) return table == context_table_;
  return std::none_of(vrf_table_.begin(), vrf_table_.end(), [&](const auto& v) { return v.second == table; });
}

}  // namespace fibnic
