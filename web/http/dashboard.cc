#include "web/http/dashboard.h"

#include <string>

#include "web/http/assets.h"

namespace fibnic::web {

std::string_view EmbeddedFile(std::string_view name) {
  for (const auto& a : EmbeddedAssets()) {
    if (a.name == name) return a.data;
  }
  return {};
}

namespace {

const char* ContentType(std::string_view name) {
  auto ends = [&](std::string_view s) { return name.size() >= s.size() && name.substr(name.size() - s.size()) == s; };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  if (ends(".json")) return "application/json";
  return "application/octet-stream";
}

}  // namespace

void AddDashboard(Router& router) {
  for (const auto& a : EmbeddedAssets()) {
    if (a.name == "openapi.json") continue;  // served by the router from what is mounted
    if (a.name == "index.html") router.AddAsset("/", ContentType(a.name), a.data);
    router.AddAsset("/ui/" + std::string(a.name), ContentType(a.name), a.data);
  }
}

}  // namespace fibnic::web
