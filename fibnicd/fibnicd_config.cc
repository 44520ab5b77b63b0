#include "fibnicd/fibnicd_config.h"

#include <cctype>
#include <charconv>
#include <cstdlib>
#include <set>

namespace fibnic {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

bool IsLoopback(const IpAddr& a) {
  return a.is_v4() ? (a.v4() >> 24) == 127 : a.v6() == 1;
}

std::optional<uint16_t> ParseHex16(std::string_view s) {
  uint16_t v = 0;
  if (s.empty() || s.size() > 4) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// "0000:03:00.0" (domain:bus:device.function, hex).
bool ValidBdf(const std::string& s) {
  if (s.size() != 12 || s[4] != ':' || s[7] != ':' || s[10] != '.') return false;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11}) {
    if (!std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return s[11] <= '7';
}

// Interface names as the kernel accepts them (IFNAMSIZ, no '/', ':' or spaces).
bool ValidIfName(const std::string& s) {
  if (s.empty() || s.size() > 15 || s == "." || s == "..") return false;
  for (char c : s) {
    if (c == '/' || c == ':' || std::isspace(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

void ReadDevice(YamlMap m, FibnicdConfig::Device* d) {
  d->backend = m.Enum("backend", 0, {"file", "pci"}) == 0 ? DeviceBackend::kFile : DeviceBackend::kPci;
  d->path = m.String("path", "");
  d->create = m.Bool("create", true);
  d->bdf = m.String("bdf", "");
  std::string id = m.String("pci_id", "");
  d->code_bits = static_cast<int>(m.OneOfInts("code_bits", 2, {2, 4}));
  d->verify_writes = m.Bool("verify_writes", false);
  if (!d->bdf.empty() && !ValidBdf(d->bdf))
    m.Error("bdf", "bad value '" + d->bdf + "'; allowed: a PCI address DDDD:BB:DD.F (hex), e.g. 0000:03:00.0");
  if (!id.empty()) {
    size_t colon = id.find(':');
    auto v = colon == std::string::npos ? std::nullopt : ParseHex16(std::string_view(id).substr(0, colon));
    auto dv = colon == std::string::npos ? std::nullopt : ParseHex16(std::string_view(id).substr(colon + 1));
    if (!v || !dv) {
      m.Error("pci_id", "bad value '" + id + "'; allowed: VENDOR:DEVICE in hex, e.g. 10ee:0007");
    } else {
      d->vendor_id = v;
      d->device_id = dv;
    }
  }
  if (d->backend == DeviceBackend::kPci) {
    if (d->bdf.empty() == id.empty())
      m.Error("backend", "backend 'pci' needs exactly one of 'bdf' or 'pci_id'");
    if (m.Has("path")) m.Error("path", "'path' is for backend 'file'; this device uses backend 'pci'");
  } else {
    if (m.Has("bdf")) m.Error("bdf", "'bdf' is for backend 'pci'; this device uses backend 'file'");
    if (m.Has("pci_id")) m.Error("pci_id", "'pci_id' is for backend 'pci'; this device uses backend 'file'");
    if (!d->path.empty() && d->path.front() != '/')
      m.Error("path", "bad value '" + d->path + "'; allowed: an absolute file path");
  }
  m.Finish();
}

void ReadPorts(YamlMap& root, std::vector<FibnicdConfig::Port>* ports) {
  std::set<std::string> ifnames;
  std::set<int> indexes;
  for (YamlMap p : root.MapList("ports")) {
    FibnicdConfig::Port pc;
    if (p.Require("interface")) pc.interface = p.String("interface", "");
    // FIBNIC v1 has 4 ports on both models.
    if (p.Require("port")) pc.port = p.Int<PortId>("port", 0, {0, 3});
    pc.mac = p.Mac("mac");
    if (!pc.interface.empty() && !ValidIfName(pc.interface))
      p.Error("interface", "bad value '" + pc.interface + "'; allowed: a Linux interface name (1-15 chars, no '/', ':' or spaces)");
    if (!pc.interface.empty() && !ifnames.insert(pc.interface).second)
      p.Error("interface", "interface '" + pc.interface + "' is mapped twice");
    if (p.Has("port") && !indexes.insert(pc.port).second)
      p.Error("port", "FIBNIC port " + std::to_string(pc.port) + " is mapped twice");
    if (pc.mac && (pc.mac->IsZero() || (pc.mac->b[0] & 1)))
      p.Error("mac", "bad value '" + pc.mac->ToString() + "'; allowed: a unicast, non-zero MAC");
    p.Finish();
    ports->push_back(pc);
  }
}

void ReadSources(YamlMap m, FibnicdConfig::Kernel* k, FibnicdConfig::Fpm* f, FibnicdConfig::File* file) {
  YamlMap km = m.Map("kernel");
  k->enabled = km.Bool("enabled", true);
  std::vector<int64_t> tables = km.IntList("tables", {255, 254}, 1, 0xFFFFFFFFll);
  k->tables.assign(tables.begin(), tables.end());
  if (k->tables.empty()) km.Error("tables", "needs at least one routing table (254 = main)");
  k->distance = km.Int<uint8_t>("distance", 20, {0, 255});
  km.Finish();

  YamlMap fm = m.Map("fpm");
  f->enabled = fm.Bool("enabled", false);
  f->listen = fm.Listen("listen", f->listen);
  f->allow_non_loopback = fm.Bool("allow_non_loopback", false);
  for (const char* gone : {"distance", "initial_wait"}) {
    if (fm.Has(gone)) {
      fm.Error(gone, "is no longer read: zebra's routes come from the kernel source, FPM carries only the "
                     "offload replies (docs/sources.md); remove it");
    }
  }
  if (!IsLoopback(f->listen.host) && !f->allow_non_loopback)
    fm.Error("listen", "bad value '" + f->listen.ToString() +
                           "'; allowed: a loopback address (FPM has no authentication and programs the device; "
                           "to listen beyond loopback set 'allow_non_loopback: true' and firewall the port, "
                           "see docs/security.md)");
  if (f->enabled && !k->enabled) {
    fm.Error("enabled", "needs sources.kernel enabled: zebra's routes come from the kernel, FPM carries only "
                        "the offload replies about them");
  }
  fm.Finish();

  YamlMap sm = m.Map("file");
  file->routes = sm.String("routes", "");
  file->neighbors = sm.String("neighbors", "");
  file->distance = sm.Int<uint8_t>("distance", 1, {0, 255});
  for (const char* key : {"routes", "neighbors"}) {
    std::string v = sm.String(key, "");
    if (!v.empty() && v.front() != '/') sm.Error(key, "bad value '" + v + "'; allowed: an absolute file path");
  }
  sm.Finish();
  m.Finish();
}

void ReadPolicies(YamlMap m, FibnicdConfig::Policies* p) {
  p->ecmp = m.Enum("ecmp", 0, {"first", "punt"}) == 0 ? EcmpPolicy::kFirst : EcmpPolicy::kPunt;
  p->slot_hysteresis = m.Double("slot_hysteresis", 1.25, 1.0, 100.0);
  p->slot_hold = std::chrono::duration_cast<milliseconds>(m.Duration("slot_hold", seconds(60), seconds(0), seconds(3600)));
  for (const std::string& pin : m.StringList("slot_pins", "gateway addresses")) {
    auto a = IpAddr::Parse(pin);
    if (!a.ok()) {
      m.Error("slot_pins", "bad address '" + pin + "'; allowed: a next-hop gateway's IPv4 or IPv6 address");
      continue;
    }
    p->slot_pins.push_back(*a);
  }
  for (const char* gone : {"stale_hold", "stale_hold_max"}) {
    if (m.Has(gone)) {
      m.Error(gone, "is no longer read: fibnicd keeps no route of zebra's but the kernel's, so nothing is swept "
                    "after zebra's replay (docs/sources.md); remove it");
    }
  }
  p->batch_delay = m.Duration("batch_delay", milliseconds(1), nanoseconds(0), seconds(1));
  p->batch_max = m.Int<uint32_t>("batch_max", 100000, {1, 10'000'000});
  m.Finish();
}

void ReadWeb(YamlMap m, FibnicdConfig::Web* w) {
  w->enabled = m.Bool("enabled", true);
  w->listen = m.Listen("listen", w->listen);
  w->token = m.String("token", "");
  w->tls_cert = m.String("tls_cert", "");
  w->tls_key = m.String("tls_key", "");
  w->header_limit = m.Int<uint32_t>("header_limit", 8 * 1024, {1024, 1024 * 1024});
  w->body_limit = m.Int<uint32_t>("body_limit", 64 * 1024, {1024, 64 * 1024 * 1024});
  w->max_connections = m.Int<uint32_t>("max_connections", 256, {1, 65536});
  w->max_connections_per_client = m.Int<uint32_t>("max_connections_per_client", 32, {1, 65536});
  w->max_streams = m.Int<uint32_t>("max_streams", 16, {1, 65536});
  w->max_streams_per_client = m.Int<uint32_t>("max_streams_per_client", 4, {1, 65536});
  w->auth_failure_limit = m.Int<uint32_t>("auth_failure_limit", 5, {1, 1000});
  w->auth_failure_window_ms = m.Int<uint32_t>("auth_failure_window_ms", 60000, {1000, 3600000});
  w->allowed_hosts = m.StringList("allowed_hosts", "host names (letters, digits, '.', '-')");
  for (const auto& h : w->allowed_hosts) {
    if (!IsHostName(h))
      m.Error("allowed_hosts", "bad value '" + h + "'; allowed: host names (letters, digits, '.', '-')");
  }
  w->read_timeout_ms = m.Int<uint32_t>("read_timeout_ms", 10000, {100, 3600000});
  w->idle_timeout_ms = m.Int<uint32_t>("idle_timeout_ms", 30000, {100, 3600000});
  w->write_timeout_ms = m.Int<uint32_t>("write_timeout_ms", 10000, {100, 3600000});
  if (w->tls_cert.empty() != w->tls_key.empty())
    m.Error(w->tls_cert.empty() ? "tls_key" : "tls_cert", "TLS needs both 'tls_cert' and 'tls_key'");
  if (m.Has("token") && w->token.size() < 16)
    m.Error("token", "token is too short (" + std::to_string(w->token.size()) + " chars); allowed: 16 or more");
  if (w->enabled && !IsLoopback(w->listen.host) && w->token.empty())
    m.Error("listen", "listening on non-loopback " + w->listen.ToString() +
                          " needs 'token' (the API would be open to the network)");
  m.Finish();
}

void ReadAudit(YamlMap m, FibnicdConfig::Audit* a) {
  a->interval = m.Duration("interval", seconds(300), seconds(0), hours(24));
  a->repair = m.Bool("repair", false);
  a->max_events = m.Int<uint32_t>("max_events", 20, {0, 1000});
  // A pass reads the whole device (4-8 MiB over the bus): not more often than once a second.
  if (a->interval != nanoseconds(0) && a->interval < seconds(1))
    m.Error("interval", "bad value '" + FormatDuration(a->interval) + "'; allowed: 0 (off) or 1s to 24h");
  m.Finish();
}

}  // namespace

const char* DeviceBackendName(DeviceBackend b) { return b == DeviceBackend::kFile ? "file" : "pci"; }

const char* const kDefaultConfigYaml = R"(# fibnicd embedded default: file-backed FIBNIC, kernel routes, no FRR.
device:
  backend: file
  code_bits: 2
sources:
  kernel:
    enabled: true
    tables: [255, 254]
  fpm:
    enabled: false
web:
  listen: 127.0.0.1:8080
logging:
  level: info
)";

StatusOr<FibnicdConfig> ParseFibnicdConfig(const YamlDocument& doc) {
  FibnicdConfig c;
  c.source_name = doc.name();
  YamlErrors errs(doc.name());
  YamlMap root(doc.root(), "", &errs);
  ReadDevice(root.Map("device"), &c.device);
  ReadPorts(root, &c.ports);
  ReadSources(root.Map("sources"), &c.kernel, &c.fpm, &c.file);
  ReadPolicies(root.Map("policies"), &c.policies);
  ReadWeb(root.Map("web"), &c.web);
  ReadAudit(root.Map("audit"), &c.audit);
  YamlMap log = root.Map("logging");
  c.log_level = static_cast<LogLevel>(log.Enum("level", 2, {"error", "warn", "info", "debug"}));
  log.Finish();
  root.Finish();
  RETURN_IF_ERROR(errs.ToStatus());
  return c;
}

StatusOr<FibnicdConfig> LoadFibnicdConfig(const std::string& path) {
  ASSIGN_OR_RETURN(YamlDocument doc, YamlDocument::LoadFile(path));
  return ParseFibnicdConfig(doc);
}

StatusOr<FibnicdConfig> DefaultFibnicdConfig() {
  ASSIGN_OR_RETURN(YamlDocument doc, YamlDocument::Parse(kDefaultConfigYaml, "<embedded default>"));
  return ParseFibnicdConfig(doc);
}

FibConfig FibnicdConfig::MakeFibConfig() const {
  FibConfig f;
  f.caps = device.code_bits == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  f.ecmp = policies.ecmp;
  f.slot_hysteresis = policies.slot_hysteresis;
  f.slot_hold = policies.slot_hold;
  f.slot_pins = policies.slot_pins;
  return f;
}

bool FibnicdConfig::SameSettings(const FibnicdConfig& o) const { return ChangedSections(o).empty(); }

std::vector<std::string> FibnicdConfig::ChangedSections(const FibnicdConfig& o) const {
  std::vector<std::string> out;
  if (!(device == o.device)) out.push_back("device");
  if (!(ports == o.ports)) out.push_back("ports");
  if (!(kernel == o.kernel)) out.push_back("sources.kernel");
  if (!(fpm == o.fpm)) out.push_back("sources.fpm");
  if (!(file == o.file)) out.push_back("sources.file");
  if (!(policies == o.policies)) out.push_back("policies");
  if (!(web == o.web)) out.push_back("web");
  if (!(audit == o.audit)) out.push_back("audit");
  if (log_level != o.log_level) out.push_back("logging");
  return out;
}

std::string ResolveBarPath(const FibnicdConfig::Device& device) {
  if (!device.path.empty()) return device.path;
  const char* state = std::getenv("STATE_DIRECTORY");
  if (state && *state) {
    std::string s(state);
    // systemd passes a colon-separated list when several StateDirectory= are set.
    s = s.substr(0, s.find(':'));
    return s + "/bar0.img";
  }
  return "/var/lib/fibnic/bar0.img";
}

}  // namespace fibnic
