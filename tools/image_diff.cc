#include "tools/image_diff.h"

#include <bit>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "device/fibnic_image_codec.h"

namespace fibnic {
namespace {

constexpr size_t kMaxSramRunsShown = 50;

std::string Hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%08x", v);
  return b;
}

StatusOr<std::vector<uint8_t>> ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return IoError("cannot open BAR image '" + path + "'");
  std::vector<uint8_t> bytes(static_cast<size_t>(in.tellg()));
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size())))
    return IoError("cannot read BAR image '" + path + "'");
  return bytes;
}

std::string Slash24Range(uint32_t first, uint32_t count) {
  std::string start = IpAddr::V4(first << 8).ToString();
  if (count == 1) return start + "/24";
  return start + " - " + IpAddr::V4(((first + count) << 8) - 1).ToString() + " (" + std::to_string(count) +
         " /24s)";
}

void Add(ImageDiff& d, const char* table, std::string where, std::string before, std::string after) {
  d.entries.push_back({table, std::move(where), std::move(before), std::move(after)});
}

}  // namespace

std::string DescribeNexthop(const regs::NexthopEntry& e) {
  if (!e.valid() && e.flags == 0 && e.dst_mac.IsZero() && e.port == 0) return "invalid";
  std::string s = e.valid() ? "" : "INVALID ";
  if (e.drop()) return s + "drop";  // port and MAC mean nothing on a drop entry
  s += e.connected() ? "connected" : "mac " + e.dst_mac.ToString();
  return s + " port " + std::to_string(e.port);
}

std::string DescribeTcam(const regs::Tcam6Entry& e) {
  if (!e.valid() && e.value == 0 && e.mask == 0 && e.code == 0) return "invalid";
  std::string s = e.valid() ? "" : "INVALID ";
  int len = std::popcount(e.mask);
  bool prefix_mask = len == 0 || e.mask == ~uint64_t{0} << (64 - len);
  IpAddr value = IpAddr::V6(static_cast<U128>(e.value) << 64);
  if (prefix_mask) {
    s += value.ToString() + "/" + std::to_string(len);
  } else {
    char m[24];
    std::snprintf(m, sizeof m, "%016llx", static_cast<unsigned long long>(e.mask));
    s += value.ToString() + " mask " + m;
  }
  return s + " -> code " + std::to_string(e.code);
}

std::string DescribeNeigh(const regs::NeighEntry& e) {
  if (!e.valid() && e.mac.IsZero() && e.port == 0 && e.addr == std::array<uint8_t, 16>{}) return "invalid";
  static const uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
  IpAddr a = std::memcmp(e.addr.data(), kMapped, 12) == 0 ? IpAddr::FromBytes(Family::kV4, e.addr.data() + 12)
                                                            : IpAddr::FromBytes(Family::kV6, e.addr.data());
  return std::string(e.valid() ? "" : "INVALID ") + a.ToString() + " mac " + e.mac.ToString() + " port " +
         std::to_string(e.port);
}

ImageDiff DiffImages(const DeviceImage& a, uint32_t gen_a, const DeviceImage& b, uint32_t gen_b) {
  ImageDiff d;
  if (!(a.caps == b.caps))
    Add(d, "csr", "caps", Hex32(a.caps.caps0()) + "/" + Hex32(a.caps.caps1()) + "/" + Hex32(a.caps.caps2()),
        Hex32(b.caps.caps0()) + "/" + Hex32(b.caps.caps1()) + "/" + Hex32(b.caps.caps2()));
  if (a.control != b.control) Add(d, "csr", "control", Hex32(a.control), Hex32(b.control));
  if (gen_a != gen_b) Add(d, "csr", "generation", std::to_string(gen_a), std::to_string(gen_b));
  for (size_t p = 0; p < std::min(a.port_macs.size(), b.port_macs.size()); ++p) {
    if (a.port_macs[p] != b.port_macs[p])
      Add(d, "port_mac", "port " + std::to_string(p), a.port_macs[p].ToString(), b.port_macs[p].ToString());
  }
  for (size_t i = 1; i < std::min(a.nexthop.size(), b.nexthop.size()); ++i) {
    if (!(a.nexthop[i] == b.nexthop[i]))
      Add(d, "nexthop", "code " + std::to_string(i), DescribeNexthop(a.nexthop[i]), DescribeNexthop(b.nexthop[i]));
  }
  for (size_t i = 0; i < std::min(a.tcam.size(), b.tcam.size()); ++i) {
    if (!(a.tcam[i] == b.tcam[i]))
      Add(d, "tcam6", "entry " + std::to_string(i), DescribeTcam(a.tcam[i]), DescribeTcam(b.tcam[i]));
  }
  for (size_t i = 0; i < std::min(a.neigh.size(), b.neigh.size()); ++i) {
    if (!(a.neigh[i] == b.neigh[i]))
      Add(d, "neigh", "entry " + std::to_string(i), DescribeNeigh(a.neigh[i]), DescribeNeigh(b.neigh[i]));
  }
  if (a.caps.sram_addr_bits == b.caps.sram_addr_bits) {
    uint32_t n = a.sram_words() * 4;  // /24s
    uint32_t run_start = 0, run_len = 0;
    uint8_t run_a = 0, run_b = 0;
    auto flush = [&] {
      if (run_len == 0) return;
      Add(d, "sram4", Slash24Range(run_start, run_len), "code " + std::to_string(run_a),
          "code " + std::to_string(run_b));
      run_len = 0;
    };
    for (uint32_t s = 0; s < n; ++s) {
      uint8_t ca = a.CodeOf24(s), cb = b.CodeOf24(s);
      if (ca == cb) {
        flush();
        continue;
      }
      ++d.sram_slash24_changed;
      if (run_len > 0 && ca == run_a && cb == run_b && s == run_start + run_len) {
        ++run_len;
        continue;
      }
      flush();
      run_start = s;
      run_len = 1;
      run_a = ca;
      run_b = cb;
    }
    flush();
  }
  return d;
}

StatusOr<ImageDiff> DiffImageFiles(const std::string& path_a, const std::string& path_b) {
  ASSIGN_OR_RETURN(std::vector<uint8_t> ba, ReadAll(path_a));
  ASSIGN_OR_RETURN(std::vector<uint8_t> bb, ReadAll(path_b));
  auto ha = DecodeBarHeader(ba.data(), ba.size());
  if (!ha.ok()) return ha.status().WithContext(path_a);
  auto hb = DecodeBarHeader(bb.data(), bb.size());
  if (!hb.ok()) return hb.status().WithContext(path_b);
  auto ia = DecodeBar(ba.data(), ba.size());
  if (!ia.ok()) return ia.status().WithContext(path_a);
  auto ib = DecodeBar(bb.data(), bb.size());
  if (!ib.ok()) return ib.status().WithContext(path_b);
  return DiffImages(*ia, ha->generation, *ib, hb->generation);
}

std::string FormatImageDiff(const ImageDiff& d) {
  if (d.empty()) return "images are identical\n";
  std::ostringstream out;
  std::map<std::string, size_t> per_table;
  size_t sram_shown = 0;
  std::string table;
  for (const auto& e : d.entries) {
    ++per_table[e.table];
    if (e.table == "sram4" && sram_shown++ >= kMaxSramRunsShown) continue;
    if (e.table != table) {
      table = e.table;
      out << "[" << table << "]\n";
    }
    out << "  " << e.where << ": " << e.before << " -> " << e.after << "\n";
  }
  if (sram_shown > kMaxSramRunsShown)
    out << "  ... " << (sram_shown - kMaxSramRunsShown) << " more sram4 runs (--json lists all)\n";
  out << "summary:";
  for (const auto& [t, n] : per_table) out << " " << t << " " << n;
  out << "; /24s with another code: " << d.sram_slash24_changed << "\n";
  return out.str();
}

nlohmann::json ImageDiffJson(const ImageDiff& d) {
  nlohmann::json j;
  j["identical"] = d.empty();
  j["sram_slash24_changed"] = d.sram_slash24_changed;
  j["differences"] = nlohmann::json::array();
  for (const auto& e : d.entries)
    j["differences"].push_back({{"table", e.table}, {"where", e.where}, {"a", e.before}, {"b", e.after}});
  return j;
}

}  // namespace fibnic
