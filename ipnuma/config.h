// ipnumad's configuration file (YAML), read strictly through daemon/config_yaml:
// every error names file:line:column, the key, the bad value and what is
// allowed; unknown keys are errors. The file is the desired state the service
// converges the NIC to (see docs/ipnuma.md for every key).
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/config_yaml.h"
#include "device/ipnuma_regs.h"
#include "ipnuma/model.h"
#include "ipnuma/peer_auth.h"
#include "ipnuma/service.h"

namespace fibnic::ipnuma {

struct DeviceConfig {
  enum class Kind { kFile, kPci } kind = Kind::kFile;
  std::string path;          // file: the BAR0 image; pci: the sysfs resource0 file
  ipnuma_regs::Caps model;   // file: tables of the NIC created when the file is absent
};

struct PoolConfig {
  enum class Kind { kUdmabuf, kReserved, kFile } kind = Kind::kReserved;
  std::string path;      // udmabuf: the sysfs directory; file: the backing file or BPF map pin
  uint64_t base = 0;     // reserved/file: physical base
  uint64_t size = 0;     // reserved; file (optional, 0 = absent): its size, that of a map created when none is pinned
};

struct ApiConfig {
  Endpoint listen;
  std::string token_file;  // bearer token for state-changing requests
};

struct PeerApiConfig {
  Endpoint listen;  // a management address (never 0.0.0.0); requests to peers are sent from it too
  std::chrono::milliseconds timeout{2000};  // for requests this ipnumad sends
};

struct NeighbourConfig {
  enum class Source { kKernel, kStatic } source = Source::kKernel;
  std::string interface;  // kernel: the host interface on the NIC's segment, whose neighbours count
  std::vector<std::pair<uint32_t, MacAddr>> entries;  // static
};

struct IpnumadConfig {
  DeviceConfig device;
  LocalNic local;
  PoolConfig pool;
  NeighbourConfig neighbours;
  ApiConfig api;
  PeerApiConfig peer_api;
  DesiredState desired;  // peers (secrets read from their files), exports, mappings
  std::chrono::milliseconds reconcile_interval{10000};
};

// Parses and checks the file; peer secret files are read (an unreadable one,
// one others may read, or one shorter than kMinPeerSecretBytes is an error).
StatusOr<IpnumadConfig> LoadIpnumadConfig(const std::string& path);
StatusOr<IpnumadConfig> ParseIpnumadConfig(const std::string& text, const std::string& name);
// The first line of a secret file, without trailing whitespace; empty is an
// error, and so is a file group or others may read or write (mode must be 0600/0400).
StatusOr<std::string> ReadSecretFile(const std::string& path);

}  // namespace fibnic::ipnuma
