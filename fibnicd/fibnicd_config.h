// fibnicd's configuration: what configs/fibnicd.yaml holds, validated.
//
// With no --config the daemon runs the embedded default (kDefaultConfigYaml,
// identical in meaning to the shipped configs/fibnicd.yaml): the `file`
// backend under the state directory and the kernel source — no hardware and
// no FRR needed.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/ip.h"
#include "common/status.h"
#include "common/config_yaml.h"
#include "common/log.h"
#include "fib/fib.h"
#include "rib/route.h"

namespace fibnic {

enum class DeviceBackend : uint8_t { kFile, kPci };
const char* DeviceBackendName(DeviceBackend b);

struct FibnicdConfig {
  struct Device {
    DeviceBackend backend = DeviceBackend::kFile;
    // file: the BAR image; empty = <state dir>/bar0.img (see ResolveBarPath).
    std::string path;
    // file: create the image with the CAPS of code_bits' model when absent.
    bool create = true;
    // pci: the device by address ("0000:03:00.0") or by "vendor:device" ID (hex).
    std::string bdf;
    std::optional<uint16_t> vendor_id;
    std::optional<uint16_t> device_id;
    int code_bits = 2;  // 2 (4 MiB SRAM, 3 next-hops) or 4 (8 MiB, 15); must match the device's CAPS
    bool verify_writes = false;  // read every pushed word back
    bool operator==(const Device&) const = default;
  };

  struct Port {
    std::string interface;        // kernel interface name
    PortId port = 0;              // FIBNIC port index (< CAPS ports)
    std::optional<MacAddr> mac;   // source MAC of rewritten frames; default: the interface's
    bool operator==(const Port&) const = default;
  };

  struct Kernel {
    bool enabled = true;
    // Routing tables to follow: 255 = local (the host's own addresses, always
    // punted — without it a covering route would forward them), 254 = main.
    std::vector<uint32_t> tables = {255, 254};
    uint8_t distance = 20;
    bool operator==(const Kernel&) const = default;
  };

  struct Fpm {
    bool enabled = false;
    Endpoint listen{IpAddr::V4(0x7F000001), 2620};
    // zebra runs on this host: FPM (unauthenticated, it programs the
    // hardware) listens beyond loopback only when the operator says so.
    bool allow_non_loopback = false;
    bool operator==(const Fpm&) const = default;
  };

  // Static routes from files in the route-file format (see docs/daemon.md).
  struct File {
    std::string routes;     // empty = none
    std::string neighbors;  // empty = none
    uint8_t distance = 1;
    bool operator==(const File&) const = default;
  };

  struct Policies {
    EcmpPolicy ecmp = EcmpPolicy::kFirst;
    double slot_hysteresis = 1.25;
    std::chrono::milliseconds slot_hold{60'000};
    std::vector<IpAddr> slot_pins;
    // Batching of updates into one commit + push.
    std::chrono::nanoseconds batch_delay = std::chrono::milliseconds(1);
    uint32_t batch_max = 100000;
    bool operator==(const Policies&) const = default;
  };

  struct Web {
    bool enabled = true;
    Endpoint listen{IpAddr::V4(0x7F000001), 8080};
    std::string token;  // bearer token for anything that changes state; empty = read-only API
    std::string tls_cert;
    std::string tls_key;
    // Request limits and timeouts (slow or oversized clients are dropped).
    uint32_t header_limit = 8 * 1024;
    uint32_t body_limit = 64 * 1024;
    uint32_t max_connections = 256;
    // Per client (IPv4 address / IPv6 /64), event streams, wrong-token throttle
    // and the Host allowlist: see web/http/server.h WebConfig.
    uint32_t max_connections_per_client = 32;
    uint32_t max_streams = 16;
    uint32_t max_streams_per_client = 4;
    uint32_t auth_failure_limit = 5;
    uint32_t auth_failure_window_ms = 60000;
    std::vector<std::string> allowed_hosts;
    uint32_t read_timeout_ms = 10000;
    uint32_t idle_timeout_ms = 30000;
    uint32_t write_timeout_ms = 10000;
    bool operator==(const Web&) const = default;
  };

  // The periodic readback audit (fibnicd/device_audit.h).
  struct Audit {
    std::chrono::nanoseconds interval = std::chrono::seconds(300);  // 0 = off
    bool repair = false;       // rewrite drifted entries (a Sync through the writer)
    uint32_t max_events = 20;  // drifted entries logged per pass (the rest summed up)
    bool operator==(const Audit&) const = default;
  };

  std::string source_name;  // file the config came from, or "<embedded default>"
  Device device;
  std::vector<Port> ports;
  Kernel kernel;
  Fpm fpm;
  File file;
  Policies policies;
  Web web;
  Audit audit;
  LogLevel log_level = LogLevel::kInfo;

  FibConfig MakeFibConfig() const;
  // Everything but source_name.
  bool SameSettings(const FibnicdConfig& o) const;
  // Names of sections that differ ("device", "ports", ...).
  std::vector<std::string> ChangedSections(const FibnicdConfig& o) const;
};

// The embedded default, as YAML text (parses to FibnicdConfig{} defaults).
extern const char* const kDefaultConfigYaml;

StatusOr<FibnicdConfig> ParseFibnicdConfig(const YamlDocument& doc);
StatusOr<FibnicdConfig> LoadFibnicdConfig(const std::string& path);
StatusOr<FibnicdConfig> DefaultFibnicdConfig();

// Where the file backend keeps its image: device.path, else
// $STATE_DIRECTORY/bar0.img (systemd StateDirectory=), else /var/lib/fibnic/bar0.img.
std::string ResolveBarPath(const FibnicdConfig::Device& device);

}  // namespace fibnic
