// ipnumactl: the operator's command line for ipnumad (its REST API), and an
// offline decoder of IP-NUMA BAR images.
#include <iostream>
#include <string>
#include <vector>

#include "common/http_client.h"
#include "common/mapped_region.h"
#include "hwif/memory_bar.h"
#include "ipnuma/config.h"
#include "ipnuma/http_transport.h"
#include "ipnuma/nic.h"

namespace fibnic::ipnuma {
namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "usage: ipnumactl [--api HOST:PORT] [--token-file FILE] COMMAND\n"
    "  status | peers | exports | mappings | counters   show what ipnumad manages\n"
    "  export add NAME BASE LENGTH ALLOW                 offer [BASE, +LENGTH) to peers in ALLOW (prefix)\n"
    "  export remove NAME                                revoke (REGION invalid at once, then peers unmap)\n"
    "  map NAME PEER EXPORT OFFSET FIRST_PAGE PAGES      map local pages onto a peer's export\n"
    "  unmap NAME                                        unmap a mapping\n"
    "  reconcile                                         retry pending work now\n"
    "  decode BAR_FILE                                   decode an IP-NUMA BAR0 image or BPF map pin (offline)\n"
    "API default 127.0.0.1:7471; the token (for changes) from --token-file or $IPNUMA_TOKEN.\n";

std::string Hex(uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

// Valid entries and mapped page runs of a BAR image (a file, or a BPF map
// pinned on a bpffs), as JSON. Read only, from a copy of it.
StatusOr<json> Decode(const std::string& path) {
  ASSIGN_OR_RETURN(MappedRegion image, MappedRegion::Open(path));
  MemoryBar bar(std::vector<uint8_t>(image.data(), image.data() + image.size()));
  ASSIGN_OR_RETURN(regs::Caps caps, ProbeNic(bar));
  NicTables t = DecodeNicTables(bar.data(), caps);
  json j;
  j["caps"] = {{"pages", caps.pages}, {"pcid_entries", caps.pcid_entries}, {"region_entries", caps.region_entries}};
  j["local"] = {{"control", t.local.control},
                {"address", regs::Ipv4String(t.local.local_ip)},
                {"netmask", regs::Ipv4String(t.local.netmask)},
                {"gateway", regs::Ipv4String(t.local.gateway_ip)},
                {"mac", t.local.local_mac.ToString()},
                {"udp_port", t.local.udp_port},
                {"retransmit_timeout_ns", t.local.retx_timeout_ns}};
  j["pcid"] = json::array();
  for (size_t i = 0; i < t.pcid.size(); ++i) {
    const auto& e = t.pcid[i];
    if (!e.valid()) continue;
    j["pcid"].push_back({{"pcid", i}, {"address", regs::Ipv4String(e.ip)}, {"mac", e.mac.ToString()},
                         {"via_gateway", e.via_gateway()}});
  }
  j["regions"] = json::array();
  for (size_t i = 0; i < t.region.size(); ++i) {
    const auto& r = t.region[i];
    if (!r.valid()) continue;
    j["regions"].push_back({{"region", i}, {"base", Hex(r.base)}, {"length", r.length},
                            {"peer", regs::Ipv4String(r.peer_ip)}, {"mask", regs::Ipv4String(r.mask)}});
  }
  j["pages"] = json::array();
  for (uint32_t p = 0; p < t.pagemap.size();) {
    const auto& e = t.pagemap[p];
    if (!e.mapped()) {
      ++p;
      continue;
    }
    uint32_t n = 1;
    while (p + n < t.pagemap.size() && t.pagemap[p + n].pcid == e.pcid &&
           t.pagemap[p + n].remote_pa == e.remote_pa + uint64_t{n} * regs::kPageBytes) {
      ++n;
    }
    j["pages"].push_back({{"first_page", p}, {"pages", n}, {"pcid", e.pcid}, {"remote_base", Hex(e.remote_pa)}});
    p += n;
  }
  j["counters"] = json::object();
  for (int i = 0; i < regs::kCounterCount; ++i) j["counters"][regs::kCounterNames[i]] = t.counters.v[i];
  return j;
}

int Run(std::vector<std::string> args) {
  std::string api = "127.0.0.1:7471", token;
  if (const char* t = std::getenv("IPNUMA_TOKEN")) token = t;
  while (!args.empty() && args[0].starts_with("--")) {
    if (args[0] == "--api" && args.size() > 1) {
      api = args[1];
    } else if (args[0] == "--token-file" && args.size() > 1) {
      auto t = ReadSecretFile(args[1]);
      if (!t.ok()) {
        std::cerr << "ipnumactl: " << t.status().message() << "\n";
        return 1;
      }
      token = *t;
    } else if (args[0] == "--help") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "ipnumactl: unknown option '" << args[0] << "'\n" << kUsage;
      return 2;
    }
    args.erase(args.begin(), args.begin() + 2);
  }
  auto usage = [] {
    std::cerr << kUsage;
    return 2;
  };
  if (args.empty()) return usage();
  std::string method = "GET", target, body;
  const std::string& cmd = args[0];
  if (cmd == "decode" && args.size() == 2) {
    auto j = Decode(args[1]);
    if (!j.ok()) {
      std::cerr << "ipnumactl: " << j.status().ToString() << "\n";
      return 1;
    }
    std::cout << j->dump(2) << "\n";
    return 0;
  }
  if ((cmd == "status" || cmd == "peers" || cmd == "exports" || cmd == "mappings" || cmd == "counters") &&
      args.size() == 1) {
    target = "/api/v1/ipnuma/" + cmd;
  } else if (cmd == "export" && args.size() == 6 && args[1] == "add") {
    method = "POST";
    target = "/api/v1/ipnuma/exports";
    body = json{{"name", args[2]}, {"base", args[3]}, {"length", args[4]}, {"allow", args[5]}}.dump();
  } else if (cmd == "export" && args.size() == 3 && args[1] == "remove") {
    method = "DELETE";
    target = "/api/v1/ipnuma/exports/" + UrlEncode(args[2]);
  } else if (cmd == "map" && args.size() == 7) {
    method = "POST";
    target = "/api/v1/ipnuma/mappings";
    body = json{{"name", args[1]}, {"peer", args[2]}, {"export", args[3]}, {"offset", args[4]},
                {"first_page", args[5]}, {"pages", args[6]}}
               .dump();
  } else if (cmd == "unmap" && args.size() == 2) {
    method = "DELETE";
    target = "/api/v1/ipnuma/mappings/" + UrlEncode(args[1]);
  } else if (cmd == "reconcile" && args.size() == 1) {
    method = "POST";
    target = "/api/v1/ipnuma/reconcile";
  } else {
    return usage();
  }
  HttpRequestSpec req;
  auto server = Endpoint::Parse(api);
  if (!server.ok()) {
    std::cerr << "ipnumactl: --api: " << server.status().message() << "\n";
    return 2;
  }
  req.server = *server;
  req.method = method;
  req.target = target;
  req.token = token;
  req.body = body;
  req.timeout = std::chrono::seconds(30);
  auto ans = HttpCall(req);
  if (!ans.ok()) {
    std::cerr << "ipnumactl: ipnumad: " << ans.status().ToString()
              << (ans.status().code() == StatusCode::kUnavailable ? " (is ipnumad running? --api HOST:PORT picks another)"
                                                                 : "")
              << "\n";
    return 1;
  }
  json j = json::parse(ans->body, nullptr, false);
  if (ans->status != 200) {
    std::string msg = ans->body;
    if (!j.is_discarded() && j.contains("error") && j["error"].contains("message")) {
      msg = j["error"].value("code", "") + ": " + j["error"]["message"].get<std::string>();
    }
    std::cerr << "ipnumactl: HTTP " << ans->status << ": " << msg << "\n";
    return 1;
  }
  std::cout << (j.is_discarded() ? ans->body : j.dump(2)) << "\n";
  return 0;
}

}  // namespace
}  // namespace fibnic::ipnuma

int main(int argc, char** argv) { return fibnic::ipnuma::Run(std::vector<std::string>(argv + 1, argv + argc)); }
