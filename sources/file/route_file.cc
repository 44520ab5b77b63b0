#include "sources/file/route_file.h"

#include <charconv>
#include <fstream>
#include <unordered_set>

namespace fibnic {
namespace {

// Splits a line (comment stripped) into whitespace-separated fields.
std::vector<std::string_view> Fields(std::string_view line) {
  if (auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

StatusOr<PortId> ParsePort(std::string_view text, int ports) {
  int v = -1;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0 || v >= ports || v >= kHostPort) {
    return InvalidArgument("bad port '" + std::string(text) + "' (want 0.." + std::to_string(ports - 1) + ")");
  }
  return static_cast<PortId>(v);
}

StatusOr<RouteLine> ParseRouteLine(const std::vector<std::string_view>& f, int ports) {
  if (f.size() == 2 && f[1] == "blackhole") {
    RouteLine r;
    ASSIGN_OR_RETURN(r.prefix, Prefix::Parse(f[0]));
    r.path = NextHop::Drop();
    return r;
  }
  if (f.size() != 3) {
    return InvalidArgument("want 'PREFIX GATEWAY PORT', 'PREFIX connected PORT' or 'PREFIX blackhole', got " +
                           std::to_string(f.size()) + " fields");
  }
  RouteLine r;
  ASSIGN_OR_RETURN(r.prefix, Prefix::Parse(f[0]));
  if (f[1] != "connected") {
    ASSIGN_OR_RETURN(IpAddr gw, IpAddr::Parse(f[1]));
    if (gw.family() != r.prefix.family()) {
      return InvalidArgument("gateway " + gw.ToString() + " is not " + FamilyName(r.prefix.family()) + " like " +
                             r.prefix.ToString());
    }
    r.path.gateway = gw;
  }
  ASSIGN_OR_RETURN(r.path.port, ParsePort(f[2], ports));
  return r;
}

Status AtLine(const std::string& name, int line, const Status& st) {
  return Status(st.code(), name + ":" + std::to_string(line) + ": " + st.message());
}

}  // namespace

Status ReadRoutes(std::istream& in, const std::string& name, int ports, const RouteLineFn& fn) {
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const auto f = Fields(text);
    if (f.empty()) continue;
    auto r = ParseRouteLine(f, ports);
    if (!r.ok()) return AtLine(name, line, r.status());
    r->line = line;
    if (Status st = fn(*r); !st.ok()) return AtLine(name, line, st);
  }
  if (in.bad()) return IoError(name + ": read error after line " + std::to_string(line));
  return OkStatus();
}

Status ReadRouteFile(const std::string& path, int ports, const RouteLineFn& fn) {
  std::ifstream in(path);
  if (!in) return IoError("cannot open route file " + path);
  return ReadRoutes(in, path, ports, fn);
}

StatusOr<std::vector<Neighbor>> ReadNeighbors(std::istream& in, const std::string& name, int ports) {
  std::vector<Neighbor> out;
  std::unordered_set<IpAddr> seen;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    const auto f = Fields(text);
    if (f.empty()) continue;
    if (f.size() != 3) {
      return AtLine(name, line, InvalidArgument("want 'ADDRESS MAC PORT', got " + std::to_string(f.size()) + " fields"));
    }
    Neighbor n;
    auto addr = IpAddr::Parse(f[0]);
    if (!addr.ok()) return AtLine(name, line, addr.status());
    auto mac = MacAddr::Parse(f[1]);
    if (!mac.ok()) return AtLine(name, line, mac.status());
    auto port = ParsePort(f[2], ports);
    if (!port.ok()) return AtLine(name, line, port.status());
    n.addr = *addr;
    n.mac = *mac;
    n.port = *port;
    n.state = NeighState::kReachable;
    if (!seen.insert(n.addr).second) {
      return AtLine(name, line, InvalidArgument("neighbour " + n.addr.ToString() + " listed twice"));
    }
    out.push_back(n);
  }
  if (in.bad()) return IoError(name + ": read error after line " + std::to_string(line));
  return out;
}

StatusOr<std::vector<Neighbor>> ReadNeighborFile(const std::string& path, int ports) {
  std::ifstream in(path);
  if (!in) return IoError("cannot open neighbour file " + path);
  return ReadNeighbors(in, path, ports);
}

}  // namespace fibnic
