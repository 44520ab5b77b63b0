#include "ipnuma/config.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

namespace fibnic::ipnuma {
namespace {

namespace regs = ::fibnic::ipnuma_regs;

// A physical address or size: decimal or 0x-hex, below 2^48.
std::optional<uint64_t> ParseAddress(const std::string& s) {
  std::string_view d = s;
  int base = 10;
  if (d.starts_with("0x") || d.starts_with("0X")) {
    base = 16;
    d.remove_prefix(2);
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v, base);
  if (d.empty() || ec != std::errc() || end != d.data() + d.size() || v > regs::kPaMask + 1) return std::nullopt;
  return v;
}

uint64_t AddressKey(YamlMap& m, const std::string& key, bool required) {
  // Read even when absent, so an optional key is named among the allowed ones
  // when a neighbouring key is misspelt.
  const std::string s = m.String(key, "");
  if (!m.Has(key)) {
    if (required) m.Require(key);
    return 0;
  }
  auto v = ParseAddress(s);
  if (!v) {
    m.Error(key, "'" + s + "' is not an address/size (decimal or 0x-hex, below 2^48)");
    return 0;
  }
  return *v;
}

uint32_t V4Key(YamlMap& m, const std::string& key) {
  m.Require(key);
  auto a = m.Address(key);
  if (!a) return 0;
  if (!a->is_v4()) {
    m.Error(key, "'" + a->ToString() + "' is not an IPv4 address (the IP-NUMA NIC is IPv4 only)");
    return 0;
  }
  return a->v4();
}

// 1...10...0: the inverse is 0...01...1.
bool ContiguousMask(uint32_t m) {
  const uint32_t inv = ~m;
  return (inv & (inv + 1)) == 0;
}

// Interface names as the kernel accepts them (IFNAMSIZ, no '/', ':' or spaces).
bool ValidIfName(const std::string& s) {
  if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
  return std::none_of(s.begin(), s.end(),
                      [](char c) { return c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c)); });
}

StatusOr<IpnumadConfig> FromDocument(const YamlDocument& doc);

bool IsLoopback(const IpAddr& a) { return a.is_v4() ? (a.v4() >> 24) == 127 : a == IpAddr::V6(1); }
bool IsUnspecified(const IpAddr& a) { return a.is_v4() ? a.v4() == 0 : a == IpAddr::V6(0); }

}  // namespace

StatusOr<std::string> ReadSecretFile(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return IoError("secret file " + path + ": cannot read");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return PermissionDenied("secret file " + path + " has mode " + mode +
                            ": others may read it; refused (chmod 600 " + path + ")");
  }
  std::ifstream in(path);
  if (!in) {
    // The packaged service runs as user ipnuma: a secret left to root is the
    // usual cause, so say whose it is and whose it must be.
    if (errno == EACCES) {
      return PermissionDenied("secret file " + path + " belongs to uid " + std::to_string(st.st_uid) +
                              " and this process (uid " + std::to_string(::geteuid()) +
                              ") cannot read it; it must belong to the user the daemon runs as, mode 0600 "
                              "(the service: chown ipnuma:ipnuma " + path + ")");
    }
    return IoError("secret file " + path + ": cannot read");
  }
  std::string s;
  std::getline(in, s);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\t')) s.pop_back();
  if (s.empty()) return InvalidArgument("secret file " + path + " is empty");
  return s;
}

StatusOr<IpnumadConfig> LoadIpnumadConfig(const std::string& path) {
  ASSIGN_OR_RETURN(YamlDocument doc, YamlDocument::LoadFile(path));
  return FromDocument(doc);
}

StatusOr<IpnumadConfig> ParseIpnumadConfig(const std::string& text, const std::string& name) {
  ASSIGN_OR_RETURN(YamlDocument doc, YamlDocument::Parse(text, name));
  return FromDocument(doc);
}

namespace {

StatusOr<IpnumadConfig> FromDocument(const YamlDocument& doc) {
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  IpnumadConfig c;

  YamlMap dev = root.Map("device");
  c.device.kind = dev.Enum("kind", 0, {"file", "pci"}) == 0 ? DeviceConfig::Kind::kFile : DeviceConfig::Kind::kPci;
  dev.Require("path");
  c.device.path = dev.String("path", "");
  YamlMap model = dev.Map("model");
  c.device.model.pages = model.Int<uint32_t>("pages", 262144, {1, 1 << 28});
  c.device.model.pcid_entries = model.Int<uint16_t>("pcid_entries", 4096, {2, regs::kMaxPcidEntries});
  c.device.model.region_entries = model.Int<uint16_t>("region_entries", 64, {1, 65535});
  if (c.device.model.region_entries > regs::kMaxRegionEntries) {
    model.Error("region_entries", std::to_string(c.device.model.region_entries) + " does not fit the layout (max " +
                                      std::to_string(regs::kMaxRegionEntries) + ")");
  }
  model.Finish();
  dev.Finish();

  YamlMap local = root.Map("local");
  c.local.ip = V4Key(local, "address");
  c.local.netmask = V4Key(local, "netmask");
  if (c.local.netmask && !ContiguousMask(c.local.netmask)) {
    local.Error("netmask", "'" + regs::Ipv4String(c.local.netmask) + "' is not a contiguous mask");
  }
  c.local.gateway = V4Key(local, "gateway");
  if (c.local.ip && c.local.gateway && !c.local.OnSegment(c.local.gateway)) {
    local.Error("gateway", regs::Ipv4String(c.local.gateway) + " is not inside " + regs::Ipv4String(c.local.ip) +
                               "/" + regs::Ipv4String(c.local.netmask));
  }
  local.Require("mac");
  if (auto m = local.Mac("mac")) c.local.mac = *m;
  c.local.udp_port = local.Int<uint16_t>("udp_port", 4790, {1, 65535});
  c.local.retx_timeout_ns = static_cast<uint32_t>(
      local.Duration("retransmit_timeout", std::chrono::microseconds(10), std::chrono::microseconds(3),
                     std::chrono::microseconds(40))
          .count());
  // MAX_PAYLOAD must fit the path MTU less 68 bytes of headers (1024 for
  // MTU 1500); ipnumad cannot see the path, so the operator says it.
  if (local.Has("max_payload")) {
    c.local.max_payload = local.Int<uint32_t>("max_payload", 64, {64, 4096});
    if ((c.local.max_payload & (c.local.max_payload - 1)) != 0) {
      local.Error("max_payload", std::to_string(c.local.max_payload) + " is not a power of two (64..4096)");
    }
  }
  if (local.Has("retry_limit")) c.local.retry_limit = local.Int<uint32_t>("retry_limit", 8, {1, 255});
  local.Finish();

  YamlMap pool = root.Map("pool");
  const size_t pk = pool.Enum("kind", 1, {"udmabuf", "reserved", "file"});
  c.pool.kind = pk == 0 ? PoolConfig::Kind::kUdmabuf : pk == 1 ? PoolConfig::Kind::kReserved : PoolConfig::Kind::kFile;
  if (c.pool.kind != PoolConfig::Kind::kReserved) {
    pool.Require("path");
    c.pool.path = pool.String("path", "");
  }
  if (c.pool.kind != PoolConfig::Kind::kUdmabuf) c.pool.base = AddressKey(pool, "base", true);
  if (c.pool.kind != PoolConfig::Kind::kUdmabuf) {
    c.pool.size = AddressKey(pool, "size", c.pool.kind == PoolConfig::Kind::kReserved);
  }
  pool.Finish();

  YamlMap neigh = root.Map("neighbours");
  c.neighbours.source =
      neigh.Enum("source", 0, {"kernel", "static"}) == 0 ? NeighbourConfig::Source::kKernel : NeighbourConfig::Source::kStatic;
  if (c.neighbours.source == NeighbourConfig::Source::kKernel && neigh.Require("interface")) {
    c.neighbours.interface = neigh.String("interface", "");
    if (!ValidIfName(c.neighbours.interface)) {
      neigh.Error("interface", "bad value '" + c.neighbours.interface +
                                   "'; allowed: a Linux interface name (1-15 chars, no '/', ':' or spaces)");
    }
  }
  for (YamlMap& e : neigh.MapList("static")) {
    uint32_t ip = V4Key(e, "address");
    e.Require("mac");
    auto m = e.Mac("mac");
    if (m && (m->IsZero() || (m->b[0] & 1))) {
      e.Error("mac", "'" + m->ToString() + "' is not a unicast MAC (zero, broadcast or multicast)");
    } else if (ip && m) {
      c.neighbours.entries.emplace_back(ip, *m);
    }
    e.Finish();
  }
  neigh.Finish();

  YamlMap api = root.Map("api");
  c.api.listen = api.Listen("listen", Endpoint{IpAddr::V4(0x7F000001), 7471});
  c.api.token_file = api.String("token_file", "");
  if (!IsLoopback(c.api.listen.host) && c.api.token_file.empty()) {
    api.Error("listen", "'" + c.api.listen.ToString() +
                            "' is beyond loopback: set api.token_file too (without a token the API is "
                            "read-only, but it shows physical addresses to everyone who can reach it)");
  }
  api.Finish();

  YamlMap papi = root.Map("peer_api");
  // No default address: the peer API belongs on the management network, and
  // the address is also where this node's requests to peers come from.
  if (papi.Require("listen")) {
    c.peer_api.listen = papi.Listen("listen", Endpoint{});
    if (IsUnspecified(c.peer_api.listen.host)) {
      papi.Error("listen", "'" + c.peer_api.listen.ToString() +
                               "' listens on every interface: give the management address peers reach this node "
                               "on (also the source address its peers check)");
    }
  }
  if (papi.Has("secret_file")) {
    papi.String("secret_file", "");
    papi.Error("secret_file", "no longer used: each peer has its own secret (peers[].secret_file, >= 32 bytes, "
                              "the same file content on both nodes)");
  }
  c.peer_api.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(
      papi.Duration("timeout", std::chrono::seconds(2), std::chrono::milliseconds(10), std::chrono::seconds(60)));
  papi.Finish();

  c.reconcile_interval = std::chrono::duration_cast<std::chrono::milliseconds>(root.Duration(
      "reconcile_interval", std::chrono::seconds(10), std::chrono::milliseconds(100), std::chrono::hours(1)));

  std::vector<std::string> secret_errors;
  for (YamlMap& p : root.MapList("peers")) {
    PeerSpec s;
    p.Require("name");
    s.name = p.String("name", "");
    s.ip = V4Key(p, "address");
    p.Require("api");
    const Endpoint ep = p.Listen("api", Endpoint{});
    s.api = ep.ToString();
    // The peer's requests come from its own peer_api.listen address, which is
    // normally where we reach it.
    s.source = ep.host;
    if (!p.String("source", "").empty()) {  // read even when absent: named among the allowed keys
      if (auto a = p.Address("source")) s.source = *a;
    }
    if (IsUnspecified(s.source)) {
      p.Error(p.Has("source") ? "source" : "api",
              "'" + s.source.ToString() + "' is no single address: set the address the peer's requests come from");
    }
    if (p.Require("secret_file")) {
      const std::string sf = p.String("secret_file", "");
      auto secret = ReadSecretFile(sf);
      if (!secret.ok()) {
        p.Error("secret_file", secret.status().message());
      } else if (secret->size() < kMinPeerSecretBytes) {
        p.Error("secret_file", "secret file " + sf + " holds " + std::to_string(secret->size()) +
                                   " bytes; at least " + std::to_string(kMinPeerSecretBytes) +
                                   " are needed (e.g. openssl rand -hex 32 > " + sf + ")");
      } else {
        s.secret = *secret;
      }
    }
    p.Finish();
    c.desired.peers.push_back(s);
  }
  for (YamlMap& e : root.MapList("exports")) {
    ExportSpec s;
    e.Require("name");
    s.name = e.String("name", "");
    s.base = AddressKey(e, "base", true);
    s.length = AddressKey(e, "length", true);
    e.Require("allow");
    const std::string allow = e.String("allow", "");
    auto pfx = Prefix::Parse(allow);
    if (!pfx.ok() || !pfx->addr().is_v4()) {
      e.Error("allow", "'" + allow + "' is not an IPv4 prefix (e.g. 172.18.0.0/16)");
    } else {
      s.allow = *pfx;
    }
    e.Finish();
    c.desired.exports.push_back(s);
  }
  for (YamlMap& m : root.MapList("mappings")) {
    MappingSpec s;
    m.Require("name");
    s.name = m.String("name", "");
    m.Require("peer");
    s.peer = m.String("peer", "");
    m.Require("export");
    s.export_name = m.String("export", "");
    s.offset = AddressKey(m, "offset", false);
    m.Require("first_page");
    s.first_page = m.Int<uint32_t>("first_page", 0, {0, (int64_t{1} << 32) - 1});
    m.Require("pages");
    s.pages = m.Int<uint32_t>("pages", 1, {1, (int64_t{1} << 32) - 1});
    m.Finish();
    c.desired.mappings.push_back(s);
  }
  root.Finish();
  RETURN_IF_ERROR(errs.ToStatus());
  return c;
}

}  // namespace

}  // namespace fibnic::ipnuma
