// Shorthands for the sources' unit tests.
#pragma once

#include <linux/rtnetlink.h>

#include <optional>
#include <string>
#include <vector>

#include "common/ip.h"
#include "sources/fpm/fpm_frame.h"
#include "sources/netlink/netlink_build.h"
#include "sources/netlink/netlink_paths.h"
#include "sources/netlink/netlink_route.h"
#include "tests/support/parse.h"

namespace fibnic::testing {

// Interfaces 10, 11, 12 are FIBNIC ports 0, 1, 2; anything else is not.
inline PortLookup TestPorts() {
  return [](uint32_t ifindex) -> std::optional<PortId> {
    if (ifindex >= 10 && ifindex <= 12) return static_cast<PortId>(ifindex - 10);
    return std::nullopt;
  };
}

inline NlRoute InlineRoute(const std::string& prefix, std::vector<NlPath> paths, bool del = false) {
  NlRoute r;
  r.del = del;
  r.prefix = P(prefix);
  r.table = RT_TABLE_MAIN;
  r.protocol = RTPROT_BGP;
  r.type = RTN_UNICAST;
  r.paths = std::move(paths);
  return r;
}

inline NlPath Via(const std::string& gw, uint32_t ifindex) {
  NlPath p;
  p.gateway = A(gw);
  p.ifindex = ifindex;
  return p;
}

inline std::vector<uint8_t> Concat(std::vector<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (auto& p : parts) {
    out.insert(out.end(), p.begin(), p.end());
    out.resize((out.size() + 3) & ~size_t{3}, 0);
  }
  return out;
}

}  // namespace fibnic::testing
