// Why the FIBNIC pipeline hands a frame to the host instead of forwarding it
// (or, kDrop, discards it).
// The numeric values are the device's: they travel in byte 1 of the leading
// port tag (docs/fpga.md) and the RTL (fpga/rtl/fibnic_defs.vh) uses the same
// numbers. Lower values are checked first: a frame gets the first reason that
// applies, so the model and the RTL agree on exactly one reason per frame.
#pragma once

#include <cstdint>

namespace fibnic::fpga {

enum class Reason : uint8_t {
  kForward = 0,
  kRunt = 1,            // frame ended before the fields the decision reads
  kBroadcast = 2,       // dst MAC ff:ff:ff:ff:ff:ff
  kMulticast = 3,       // any other group dst MAC
  kOwnMacMiss = 4,      // dst MAC is not the ingress port's PORT_MAC
  kArp = 5,             // ethertype 0x0806
  kNonIp = 6,           // any other ethertype (VLAN tags included)
  kIpHeader = 7,        // IP version field wrong, IPv4 IHL < 5
  kIpOptions = 8,       // IPv4 IHL > 5, IPv6 hop-by-hop header (next header 0)
  kBadChecksum = 9,     // IPv4 header checksum does not verify (RFC 1812 5.2.2)
  kTtl = 10,            // TTL / hop limit <= 1: the host sends ICMP time exceeded
  kNdp = 11,            // ICMPv6 types 133..137
  kDisabled = 12,       // CONTROL forwarding enable bit for the family is off
  kNoTcamMatch = 13,    // IPv6: no VALID TCAM6 entry matches
  kCode0 = 14,          // code 0, or a code beyond the NEXTHOP table
  kNexthopInvalid = 15, // NEXTHOP[code] not VALID
  kNeighMiss = 16,      // CONNECTED next-hop, destination not in the NEIGH CAM
  kPortInvalid = 17,    // egress port >= the device's ports
  // NEXTHOP[code] VALID|DROP on a device with CAPS2 DROP: the frame is
  // discarded (a blackhole), neither forwarded nor punted. Decided with the
  // entry, like 15..17, which a DROP entry never reaches (its port, MAC and
  // CONNECTED are not read).
  kDrop = 18,
};

inline constexpr int kReasonCount = 19;

const char* ReasonName(Reason r);

}  // namespace fibnic::fpga
