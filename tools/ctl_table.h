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

// The building blocks of the per-command views (ctl_views.h). They take any
// JSON: a member that is missing or of another type prints as "-", so an
// older or newer fibnicd never makes fibnicctl fail on its answer.

// The member at a dotted path ("device.caps.code_bits"), or null when a step
// is missing or not an object.
const nlohmann::json& At(const nlohmann::json& j, const std::string& dotted);

// An aligned table, head upper-cased. A cell holding '\n' continues on the
// lines below (ECMP paths, one per line, as routers print them); columns
// whose `right` flag is set are right-aligned (counts). No trailing blanks.
std::string RenderGrid(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right = {});

// Numbers for people: an integer as digits; a rate to a tenth below 10 and
// whole above; bytes in B/KiB/MiB/GiB; an age as 42s, 4m05s, 2h03m, 3d04h.
// Anything that is not a number is "-".
std::string FormatCount(const nlohmann::json& v);
std::string FormatRate(const nlohmann::json& v);
std::string FormatBytes(const nlohmann::json& v);
std::string FormatAge(double seconds);

}  // namespace fibnic
