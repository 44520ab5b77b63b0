// What ipnumad manages, in host terms: the local NIC settings, peers (IP → PC ID
// and the MAC frames go to), exports (local receive buffers offered to peers,
// one REGION entry each) and mappings (local pages → a peer's export).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/ip.h"

namespace fibnic::ipnuma {

struct LocalNic {
  uint32_t ip = 0;  // host-order IPv4 integers
  uint32_t netmask = 0;
  uint32_t gateway = 0;
  MacAddr mac;
  uint16_t udp_port = 0;
  uint32_t retx_timeout_ns = 0;
  // Wire-protocol registers (docs/contract/IPNUMA.md); 0 leaves the NIC's
  // default (64-byte packets, 8 rounds), as a NIC that predates them reads.
  uint32_t max_payload = 0;
  uint32_t retry_limit = 0;
  bool OnSegment(uint32_t addr) const { return (addr & netmask) == (ip & netmask); }
};

struct PeerSpec {
  std::string name;
  uint32_t ip = 0;        // the peer NIC's IPv4 address
  std::string api;        // the peer ipnumad's peer endpoint, host:port
  std::string secret;     // shared with that peer only; signs every request both ways
  IpAddr source;          // where its requests come from (its peer API address)
};

struct PeerState {
  PeerSpec spec;
  uint16_t pcid = 0;      // 0 until allocated
  bool resolved = false;  // the PCID entry is VALID (MAC known)
  MacAddr mac;            // the peer's MAC, or the gateway's when off-segment
  bool via_gateway = false;
  uint64_t stream_resets = 0;  // PEER_STATE resets ipnumad wrote in this run
};

struct ExportSpec {
  std::string name;
  uint64_t base = 0;    // physical address inside the pool, 64-byte aligned
  uint64_t length = 0;  // multiple of 64
  Prefix allow;         // IPv4 peers that may write into it
};

struct ExportState {
  ExportSpec spec;
  uint16_t slot = 0;  // REGION entry
};

struct MappingSpec {
  std::string name;
  std::string peer;         // PeerSpec::name
  std::string export_name;  // the export's name at the peer
  uint64_t offset = 0;      // into the export, 4 KiB multiple
  uint32_t first_page = 0;  // local BAR2 page
  uint32_t pages = 0;
};

struct MappingState {
  MappingSpec spec;
  uint64_t remote_base = 0;  // peer physical address of first_page
  bool confirmed = false;    // the peer granted it in this run
};

}  // namespace fibnic::ipnuma
