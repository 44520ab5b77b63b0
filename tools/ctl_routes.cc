// `fibnicctl routes` and `fibnicctl nexthops`: the key column first (the
// prefix, the code), next-hops as a router prints them, one per line.
#include <string>
#include <vector>

#include "tools/ctl_table.h"
#include "tools/ctl_views.h"

namespace fibnic {
namespace {

using nlohmann::json;

// One path per line: "via GW port P", "connected port P", "to host", "drop".
std::string PathLines(const json& paths) {
  if (!paths.is_array() || paths.empty()) return "-";
  std::string t;
  for (const json& p : paths) {
    std::string one = "-";
    if (At(p, "text").is_string()) {
      one = At(p, "text").get<std::string>();
    } else if (At(p, "gateway").is_string()) {
      one = "via " + At(p, "gateway").get<std::string>() + " port " + FormatCount(At(p, "port"));
    }
    t += (t.empty() ? "" : "\n") + one;
  }
  return t;
}

std::string Reason(const json& r) {
  std::string t;
  if (const json& reason = At(r, "reason"); reason.is_string() && reason != "none") t = reason.get<std::string>();
  if (const json& why = At(r, "why"); why.is_string() && !why.get<std::string>().empty()) {
    t += (t.empty() ? "" : ": ") + why.get<std::string>();
  }
  // A partial route forwards some of its /24s in the card and punts the rest.
  if (At(r, "state") == "partial" && At(r, "slash24_punted").is_number() && At(r, "slash24_total").is_number()) {
    t += (t.empty() ? "" : ", ") + FormatCount(At(r, "slash24_punted")) + " of " +
         FormatCount(At(r, "slash24_total")) + " /24s punt";
  }
  return t.empty() ? "-" : t;
}

std::string Text(const json& v) { return v.is_string() && !v.get<std::string>().empty() ? v.get<std::string>() : "-"; }

}  // namespace

std::string RenderRoutes(const json& answer) {
  const json& routes = At(answer, "routes");
  std::vector<std::vector<std::string>> rows;
  if (routes.is_array()) {
    for (const json& r : routes) {
      std::string state = Text(At(r, "state"));
      if (At(r, "best") == false) state += " (not best)";
      rows.push_back({Text(At(r, "prefix")), state, PathLines(At(r, "paths")), Text(At(r, "source")), Reason(r)});
    }
  }
  std::string out = rows.empty() ? "no routes\n" : RenderGrid({"prefix", "state", "paths", "source", "reason"}, rows);
  // A page that ends early says how to ask for the next one.
  if (const json& next = At(answer, "next"); next.is_string()) {
    out += "more: add --after " + next.get<std::string>() + "\n";
  }
  return out;
}

std::string RenderNexthops(const json& answer) {
  const json& slots = At(answer, "slots");
  std::vector<std::vector<std::string>> rows;
  size_t in_use = 0;
  if (slots.is_array()) {
    for (const json& s : slots) {
      const bool owned = !At(s, "adjacency").is_null() || !At(s, "owner").is_null();
      in_use += owned;
      const json& entry = At(s, "entry");
      std::string state;
      if (!owned) {
        state = "free";
      } else if (At(entry, "valid") == false) {
        state = "invalid";
      } else if (At(entry, "drop") == true) {
        state = "drop";
      } else if (At(entry, "valid") == true) {
        state = At(entry, "connected") == true ? "connected" : "active";
      } else {
        state = "-";
      }
      // What the device holds, when it is not what was compiled.
      if (At(s, "in_sync") == false) state += ", device differs";
      // A connected entry takes each destination's MAC from the NEIGH CAM:
      // its own MAC field means nothing.
      const bool mac_applies = owned && At(entry, "valid") == true && At(entry, "drop") != true &&
                               At(entry, "connected") != true;
      const json& hops = At(s, "next_hops");
      std::string nh = PathLines(hops.is_array() && !hops.empty() ? hops : json::array({At(s, "owner")}));
      if (!owned) nh = "-";
      rows.push_back({FormatCount(At(s, "code")), nh, owned ? FormatCount(At(entry, "port")) : "-",
                      mac_applies ? Text(At(entry, "mac")) : "-", state, owned ? FormatCount(At(s, "weight")) : "-"});
    }
  }
  if (rows.empty()) return "no next-hop codes\n";
  return std::to_string(in_use) + " of " + std::to_string(rows.size()) + " codes in use\n\n" +
         RenderGrid({"code", "next-hop", "port", "mac", "state", "covers"}, rows,
                    {true, false, true, false, false, true});
}

}  // namespace fibnic
