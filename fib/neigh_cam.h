// Which neighbours sit in the FIBNIC's NEIGH CAM (caps.neigh_entries).
//
// Connected next-hops resolve per destination through the CAM, so it holds
// usable neighbours that fall inside offloaded connected routes. When more
// are eligible than fit, the most recently updated win (LRU); a loaded entry
// stays at its index until it is removed or evicted. An index is never
// rewritten to another address while live: the old entry is retired in an
// earlier delta than the one that activates the new one.
#pragma once

#include <cstdint>
#include <vector>

#include "common/ip.h"
#include "device/fibnic_image.h"

namespace fibnic {

struct CamWant {
  IpAddr addr;
  MacAddr mac;
  uint8_t port = 0;
  uint64_t touch = 0;  // larger = more recently updated
};

struct CamPlan {
  std::vector<NeighWrite> retire_first;  // frees indexes reused below (an earlier delta)
  std::vector<NeighWrite> activate;      // new entries and in-place MAC/port changes
  std::vector<NeighWrite> retire;        // entries no longer wanted
};

// Plans the move from `current` (the image's CAM) to the best `eligible`
// set; does not modify current.
CamPlan PlanCam(const std::vector<regs::NeighEntry>& current, std::vector<CamWant> eligible);

}  // namespace fibnic
