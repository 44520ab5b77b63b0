#include "fpga/model/punt_reason.h"

namespace fibnic::fpga {

const char* ReasonName(Reason r) {
  static constexpr const char* kNames[kReasonCount] = {
      "forward",   "runt",          "broadcast",     "multicast", "own-mac-miss", "arp",
      "non-ip",    "ip-header",     "ip-options",    "bad-checksum", "ttl",     "ndp",
      "disabled",  "no-tcam-match", "code-0",        "nexthop-invalid", "neigh-miss", "port-invalid",
      "drop"};
  const auto i = static_cast<unsigned>(r);
  return i < kReasonCount ? kNames[i] : "unknown";
}

}  // namespace fibnic::fpga
