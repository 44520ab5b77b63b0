// Differences between two FIBNIC BAR images, table by table (`fibnicctl image
// diff A B`): CSR, PORT_MAC, NEXTHOP, TCAM6, NEIGH entries that differ, and the
// IPv4 SRAM as runs of consecutive /24s whose code changed the same way.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "device/fibnic_image.h"

namespace fibnic {

struct ImageDiffEntry {
  std::string table;   // "csr", "port_mac", "nexthop", "tcam6", "neigh", "sram4"
  std::string where;   // "generation", "port 1", "entry 3", "10.0.0.0/24 .. 10.0.3.255 (4 /24s)"
  std::string before;  // decoded value in A
  std::string after;   // decoded value in B
};

struct ImageDiff {
  std::vector<ImageDiffEntry> entries;
  uint64_t sram_slash24_changed = 0;  // /24s whose code differs
  bool empty() const { return entries.empty(); }
};

// a/b: decoded images (DecodeBar); gen_a/gen_b their GENERATION registers.
ImageDiff DiffImages(const DeviceImage& a, uint32_t gen_a, const DeviceImage& b, uint32_t gen_b);
// Reads and decodes two BAR image files and diffs them.
StatusOr<ImageDiff> DiffImageFiles(const std::string& path_a, const std::string& path_b);

// Human-readable: one line per difference, grouped by table, then a summary.
std::string FormatImageDiff(const ImageDiff& d);
nlohmann::json ImageDiffJson(const ImageDiff& d);

// Decoded entries as text (shared with fibnicctl's other views).
std::string DescribeNexthop(const regs::NexthopEntry& e);
std::string DescribeTcam(const regs::Tcam6Entry& e);
std::string DescribeNeigh(const regs::NeighEntry& e);

}  // namespace fibnic
