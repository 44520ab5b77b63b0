// A small OpenAPI 3.0 schema checker for the tests: does a served JSON value
// match what the document promises (type, nullable, required, properties,
// items, enum, $ref, allOf)? Returns every mismatch with its JSON path.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fibnic::web::testing {

inline const nlohmann::json& Resolve(const nlohmann::json& doc, const nlohmann::json& schema) {
  if (!schema.contains("$ref")) return schema;
  std::string ref = schema["$ref"].get<std::string>();  // "#/components/schemas/X"
  return doc.at(nlohmann::json::json_pointer(ref.substr(1)));
}

inline void CheckSchema(const nlohmann::json& doc, const nlohmann::json& schema_in, const nlohmann::json& v,
                        const std::string& path, std::vector<std::string>* errors) {
  using nlohmann::json;
  const json& s = Resolve(doc, schema_in);
  if (v.is_null()) {
    if (!s.value("nullable", false)) errors->push_back(path + ": null but not nullable");
    return;
  }
  if (s.contains("allOf")) {
    for (const auto& sub : s["allOf"]) CheckSchema(doc, sub, v, path, errors);
  }
  const std::string type = s.value("type", "");
  auto bad = [&](const std::string& what) { errors->push_back(path + ": expected " + what + ", got " + v.dump().substr(0, 80)); };
  if (type == "object" && !v.is_object()) return bad("object");
  if (type == "array" && !v.is_array()) return bad("array");
  if (type == "string" && !v.is_string()) return bad("string");
  if (type == "integer" && !v.is_number_integer()) return bad("integer");
  if (type == "number" && !v.is_number()) return bad("number");
  if (type == "boolean" && !v.is_boolean()) return bad("boolean");
  if (s.contains("enum")) {
    bool found = false;
    for (const auto& e : s["enum"]) found |= e == v;
    if (!found) bad("one of " + s["enum"].dump());
  }
  if (v.is_object()) {
    for (const auto& r : s.value("required", json::array())) {
      if (!v.contains(r.get<std::string>())) errors->push_back(path + ": missing required '" + r.get<std::string>() + "'");
    }
    if (s.contains("properties")) {
      for (const auto& [k, sub] : s["properties"].items()) {
        if (v.contains(k)) CheckSchema(doc, sub, v[k], path + "." + k, errors);
      }
    }
  }
  if (v.is_array() && s.contains("items")) {
    for (size_t i = 0; i < v.size() && i < 50; ++i) CheckSchema(doc, s["items"], v[i], path + "[" + std::to_string(i) + "]", errors);
  }
}

}  // namespace fibnic::web::testing
