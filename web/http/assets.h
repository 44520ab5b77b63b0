// Files compiled into the binary (web/http/embed.cmake): the dashboard, the
// charting library it uses, and the OpenAPI document.
#pragma once

#include <string_view>
#include <vector>

namespace fibnic::web {

struct EmbeddedAsset {
  std::string_view name;  // "index.html", "openapi.json", ...
  std::string_view data;
};

const std::vector<EmbeddedAsset>& EmbeddedAssets();
// The file's bytes, empty if there is no such file.
std::string_view EmbeddedFile(std::string_view name);

}  // namespace fibnic::web
