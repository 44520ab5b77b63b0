// The routes of one FPM frame, as the offload replies need them: zebra sends
// a route over FPM once the kernel took it, and fibnicd follows the kernel
// (the kernel source) for every route the host forwards by — a frame only
// says which routes zebra installed (each waits for a reply, fpm_offload.h)
// and with which rtm_protocol. Nothing is kept per route here: what zebra
// was last told lives beside the kernel's route (sources/route_notes.h).
//
// A frame is one unit: all its netlink messages are parsed before any route
// is given, so a malformed frame gives nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <set>

#include "common/ip.h"
#include "common/status.h"

namespace fibnic {

struct FpmRouteCounts {
  uint64_t messages = 0;  // route messages of the table followed
  uint64_t ignored = 0;   // other tables, families, types, protocols
  uint64_t deleted = 0;   // deletions (nothing to answer)
};

// fn(prefix, protocol) for each route the frame says zebra installed in
// `table`, neither a deletion nor of a protocol in `ignore` (RTPROT_KERNEL:
// zebra's connected and kernel routes, which it never installs).
Status ForEachFpmRoute(const uint8_t* payload, size_t len, uint32_t table, const std::set<uint8_t>& ignore,
                       FpmRouteCounts& counts, const std::function<void(const Prefix&, uint8_t protocol)>& fn);

}  // namespace fibnic
