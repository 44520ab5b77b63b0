// fibnicctl's views of its main commands, shaped like a router's show
// commands (vtysh, birdc, `ip -s link`): the key column first, a summary on
// top, the details an operator acts on and no more. `--json` prints the API's
// answer instead, unchanged. Every view takes whatever JSON it is given: a
// member that is missing or of another type prints as "-".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace fibnic {

// GET /api/v1/status; `events` is GET /api/v1/events (or null when it could
// not be had), which dates each source's last change.
std::string RenderStatus(const nlohmann::json& status, const nlohmann::json& events);

// GET /api/v1/routes: one row per route, prefix first, each path on its own
// line; a page that ends early says how to ask for the next one.
std::string RenderRoutes(const nlohmann::json& answer);

// GET /api/v1/nexthops: one row per code.
std::string RenderNexthops(const nlohmann::json& answer);

}  // namespace fibnic
