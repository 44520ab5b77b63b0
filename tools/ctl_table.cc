#include "tools/ctl_table.h"

#include <algorithm>
#include <map>
#include <sstream>

namespace fibnic {
namespace {

using nlohmann::json;

void FlattenInto(const json& v, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (v.is_object() && !v.empty()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      FlattenInto(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    return;
  }
  out.emplace_back(prefix, CellText(v));
}

std::string Pad(const std::string& s, size_t w) { return s + std::string(w > s.size() ? w - s.size() : 0, ' '); }

std::string Grid(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(head.size());
  for (size_t c = 0; c < head.size(); ++c) {
    w[c] = head[c].size();
    for (const auto& r : rows) w[c] = std::max(w[c], r[c].size());
  }
  std::ostringstream out;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string l;
    for (size_t c = 0; c < cells.size(); ++c) l += (c ? "  " : "") + (c + 1 == cells.size() ? cells[c] : Pad(cells[c], w[c]));
    out << l << "\n";
  };
  std::vector<std::string> upper;
  for (const auto& h : head) {
    std::string u = h;
    std::transform(u.begin(), u.end(), u.begin(), ::toupper);
    upper.push_back(u);
  }
  line(upper);
  for (const auto& r : rows) line(r);
  return out.str();
}

}  // namespace

std::string CellText(const json& v) {
  if (v.is_null()) return "-";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_array()) {
    bool scalars = std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_primitive(); });
    // Paths and similar lists carry a readable "text" per element: show those.
    bool texts = !v.empty() && std::all_of(v.begin(), v.end(), [](const json& e) {
      return e.is_object() && e.contains("text") && e["text"].is_string();
    });
    if (texts) {
      std::string s;
      for (const auto& e : v) s += (s.empty() ? "" : ", ") + e["text"].get<std::string>();
      return s;
    }
    if (scalars) {
      std::string s;
      for (const auto& e : v) s += (s.empty() ? "" : ",") + CellText(e);
      return s.empty() ? "-" : s;
    }
  }
  return v.dump();
}

std::vector<std::pair<std::string, std::string>> Flatten(const json& obj) {
  std::vector<std::pair<std::string, std::string>> out;
  FlattenInto(obj, "", out);
  return out;
}

std::string RenderTable(const json& rows, const std::vector<std::string>& columns) {
  std::vector<std::string> cols = columns;
  std::vector<std::map<std::string, std::string>> flat;
  for (const auto& r : rows) {
    std::map<std::string, std::string> m;
    for (auto& [k, v] : Flatten(r)) {
      if (columns.empty() && std::find(cols.begin(), cols.end(), k) == cols.end()) cols.push_back(k);
      m[k] = v;
    }
    flat.push_back(std::move(m));
  }
  if (flat.empty()) return "(none)\n";
  std::vector<std::vector<std::string>> cells;
  for (const auto& m : flat) {
    std::vector<std::string> row;
    for (const auto& c : cols) {
      auto it = m.find(c);
      row.push_back(it == m.end() ? "-" : it->second);
    }
    cells.push_back(std::move(row));
  }
  return Grid(cols, cells);
}

std::string RenderKeyValues(const json& obj) {
  auto flat = Flatten(obj);
  size_t w = 0;
  for (const auto& [k, v] : flat) w = std::max(w, k.size());
  std::ostringstream out;
  for (const auto& [k, v] : flat) out << Pad(k + ":", w + 1) << " " << v << "\n";
  return out.str();
}

std::string RenderSideBySide(const json& left, const std::string& left_title, const json& right,
                             const std::string& right_title) {
  std::vector<std::string> keys;
  std::map<std::string, std::string> l, r;
  for (auto& [k, v] : Flatten(left)) {
    keys.push_back(k);
    l[k] = v;
  }
  for (auto& [k, v] : Flatten(right)) {
    if (!l.count(k)) keys.push_back(k);
    r[k] = v;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : keys) rows.push_back({k, l.count(k) ? l[k] : "", r.count(k) ? r[k] : ""});
  return Grid({"", left_title, right_title}, rows);
}

std::string RenderAnswer(const json& j) {
  if (j.is_array()) return RenderTable(j);
  if (!j.is_object()) return CellText(j) + "\n";
  std::string table, rest;
  json others = json::object();
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (table.empty() && it.value().is_array() &&
        std::all_of(it.value().begin(), it.value().end(), [](const json& e) { return e.is_object(); }) &&
        !it.value().empty()) {
      table = RenderTable(it.value());
    } else {
      others[it.key()] = it.value();
    }
  }
  if (!others.empty()) rest = RenderKeyValues(others);
  return table + (table.empty() || rest.empty() ? "" : "\n") + rest;
}

}  // namespace fibnic
