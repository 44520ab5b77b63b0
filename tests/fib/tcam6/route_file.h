// Loads IPv6 routes produced by the shared make-routes tool (route-file format
// of the spec: `PREFIX GATEWAY PORT`) for tests and the bench. Gateways become
// hardware codes 1, 2, ... in address order.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "common/ip.h"
#include "common/status.h"
#include "fib/tcam6/tcam6_compiler.h"

namespace fibnic::tcam6test {

struct FileRoute {
  Prefix prefix;
  IpAddr gateway;
};

// Runs make-routes on the real table (IPv6 only, `limit` routes if > 0) into a
// temporary file and parses it.
inline StatusOr<std::vector<FileRoute>> LoadSharedTable(const std::string& shared_dir, int limit, int gateways = 3) {
  std::string tmpl = "/tmp/tcam6-routes-" + std::string(6, 'X');  // mkdtemp's template
  char* dir = mkdtemp(tmpl.data());
  if (dir == nullptr) return Internal("mkdtemp failed");
  const std::string out = std::string(dir) + "/r.txt";
  std::string cmd = "python3 '" + shared_dir + "/tools/make-routes' '" + shared_dir +
                    "/data/full-table-2024-03.prefixes.gz' --family 6 --gateways " + std::to_string(gateways) +
                    " --out '" + out + "' 2>/dev/null";
  if (limit > 0) cmd += " --limit " + std::to_string(limit);
  if (std::system(cmd.c_str()) != 0) return Internal("make-routes failed: " + cmd);
  std::ifstream in(out);
  std::vector<FileRoute> routes;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    std::istringstream ss(line);
    std::string p, gw;
    if (!(ss >> p >> gw)) continue;
    auto prefix = Prefix::Parse(p);
    auto addr = IpAddr::Parse(gw);
    if (!prefix.ok() || !addr.ok()) return InvalidArgument(out + ":" + std::to_string(lineno) + ": bad route");
    routes.push_back({*prefix, *addr});
  }
  std::remove(out.c_str());
  rmdir(dir);
  return routes;
}

// Gateway -> code 1..n in address order.
inline std::map<Prefix, Tcam6Route> ToCodes(const std::vector<FileRoute>& routes) {
  std::map<IpAddr, uint8_t> codes;
  for (const auto& r : routes) codes[r.gateway] = 0;
  uint8_t next = 1;
  for (auto& [gw, c] : codes) c = next++;
  std::map<Prefix, Tcam6Route> out;
  for (const auto& r : routes) out[r.prefix] = Tcam6Route{codes[r.gateway], PuntReason::kNone, 1};
  return out;
}

}  // namespace fibnic::tcam6test
