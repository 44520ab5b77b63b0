// Human renderings of the REST API's JSON for fibnicctl: lists of objects as
// aligned tables (nested objects flattened to dotted columns), objects as
// "key: value" lines, and two answers side by side (RIB vs hardware).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fibnic {

// One cell's text: strings bare, null "-", arrays of scalars joined by ",",
// arrays of objects that all have a "text" member (paths) as those texts,
// other arrays/objects compact JSON.
std::string CellText(const nlohmann::json& v);

// Flattens an object into (dotted key, cell text) pairs, in key order.
std::vector<std::pair<std::string, std::string>> Flatten(const nlohmann::json& obj);

// rows: a JSON array of objects. Columns: the union of flattened keys in order
// of first appearance (or `columns` when given).
std::string RenderTable(const nlohmann::json& rows, const std::vector<std::string>& columns = {});
std::string RenderKeyValues(const nlohmann::json& obj);
// Two objects as a three-column table: key | left | right.
std::string RenderSideBySide(const nlohmann::json& left, const std::string& left_title, const nlohmann::json& right,
                             const std::string& right_title);

// An API answer, made readable: the first array member as a table, the other
// members as key: value lines.
std::string RenderAnswer(const nlohmann::json& j);

}  // namespace fibnic
