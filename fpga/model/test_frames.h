// Builders for the Ethernet frames the model tests and the Verilator bench
// stream: well-formed IPv4/IPv6/ARP/NDP frames with a correct FCS, plus knobs
// to break exactly one thing (TTL, options, checksum, FCS, ethertype, MAC).
#pragma once

#include <cstdint>
#include <vector>

#include "common/ip.h"

namespace fibnic::fpga {

struct FrameSpec {
  MacAddr dst_mac;
  MacAddr src_mac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x99}};
  IpAddr src;               // family decides IPv4 vs IPv6
  IpAddr dst;
  size_t size = 64;         // whole frame incl. FCS, >= the headers' size
  uint8_t ttl = 64;         // TTL / hop limit
  uint8_t protocol = 17;    // IPv4 protocol / IPv6 next header
  uint8_t ipv4_option_words = 0;  // IHL = 5 + this
  uint8_t icmp6_type = 128;       // used when protocol == 58
  bool bad_ip_checksum = false;
  bool bad_fcs = false;
  uint32_t payload_seed = 1;
};

std::vector<uint8_t> BuildIpFrame(const FrameSpec& s);
// ARP request (broadcast) or a frame with any ethertype, padded to size.
std::vector<uint8_t> BuildEtherFrame(const MacAddr& dst_mac, uint16_t ethertype, size_t size, uint32_t seed);
// Appends/overwrites the last four bytes with the FCS of the rest.
void SealFcs(std::vector<uint8_t>& frame);

}  // namespace fibnic::fpga
