#include "tools/ctl_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

const json& At(const json& j, const std::string& dotted) {
  static const json kNull;
  const json* cur = &j;
  size_t from = 0;
  while (true) {
    const size_t dot = dotted.find('.', from);
    const std::string key = dotted.substr(from, dot == std::string::npos ? std::string::npos : dot - from);
    if (!cur->is_object()) return kNull;
    auto it = cur->find(key);
    if (it == cur->end()) return kNull;
    cur = &*it;
    if (dot == std::string::npos) return *cur;
    from = dot + 1;
  }
}

std::string RenderGrid(const std::vector<std::string>& head, const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right) {
  const size_t n = head.size();
  auto split = [](const std::string& cell) {
    std::vector<std::string> lines;
    size_t from = 0;
    for (size_t nl; (nl = cell.find('\n', from)) != std::string::npos; from = nl + 1) {
      lines.push_back(cell.substr(from, nl - from));
    }
    lines.push_back(cell.substr(from));
    return lines;
  };
  std::vector<std::vector<std::vector<std::string>>> cells;  // row, column, line
  std::vector<size_t> w(n);
  for (size_t c = 0; c < n; ++c) w[c] = head[c].size();
  for (const auto& r : rows) {
    auto& row = cells.emplace_back(n);
    for (size_t c = 0; c < n; ++c) {
      row[c] = split(c < r.size() ? r[c] : "-");
      for (const auto& l : row[c]) w[c] = std::max(w[c], l.size());
    }
  }
  std::string out;
  auto line = [&](const std::vector<std::string>& parts) {
    std::string l;
    for (size_t c = 0; c < n; ++c) {
      const std::string& s = parts[c];
      const std::string pad(w[c] - std::min(w[c], s.size()), ' ');
      l += (c ? "  " : "") + (c < right.size() && right[c] ? pad + s : s + pad);
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  };
  std::vector<std::string> upper;
  for (const auto& h : head) {
    std::string u = h;
    std::transform(u.begin(), u.end(), u.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
    upper.push_back(u);
  }
  line(upper);
  for (const auto& row : cells) {
    size_t height = 0;
    for (const auto& col : row) height = std::max(height, col.size());
    for (size_t i = 0; i < height; ++i) {
      std::vector<std::string> parts;
      for (const auto& col : row) parts.push_back(i < col.size() ? col[i] : "");
      line(parts);
    }
  }
  return out;
}

std::string FormatCount(const json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  if (v.is_number_float()) return FormatRate(v);
  return "-";
}

std::string FormatRate(const json& v) {
  if (!v.is_number()) return "-";
  const double d = v.get<double>();
  if (!std::isfinite(d)) return "-";
  char buf[32];
  // A tenth tells 0.5/s from 1/s; above 10 the tenths are noise.
  if (std::fabs(d) < 0.05) return "0";
  std::snprintf(buf, sizeof buf, std::fabs(d) < 9.95 ? "%.1f" : "%.0f", d);
  return buf;
}

std::string FormatBytes(const json& v) {
  if (!v.is_number()) return "-";
  double d = v.get<double>();
  if (!std::isfinite(d)) return "-";
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  size_t u = 0;
  while (std::fabs(d) >= 1024 && u + 1 < std::size(kUnits)) {
    d /= 1024;
    ++u;
  }
  char buf[32];
  if (u == 0) {
    std::snprintf(buf, sizeof buf, "%.0f B", d);
  } else {
    std::snprintf(buf, sizeof buf, std::fabs(d) < 9.95 ? "%.1f %s" : "%.0f %s", d, kUnits[u]);
  }
  return buf;
}

std::string FormatAge(double seconds) {
  if (!std::isfinite(seconds)) return "-";
  const uint64_t s = seconds <= 0 ? 0 : static_cast<uint64_t>(seconds);
  char buf[32];
  if (s < 60) {
    std::snprintf(buf, sizeof buf, "%llus", static_cast<unsigned long long>(s));
  } else if (s < 3600) {
    std::snprintf(buf, sizeof buf, "%llum%02llus", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  } else if (s < 86400) {
    std::snprintf(buf, sizeof buf, "%lluh%02llum", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s % 3600 / 60));
  } else {
    std::snprintf(buf, sizeof buf, "%llud%02lluh", static_cast<unsigned long long>(s / 86400),
                  static_cast<unsigned long long>(s % 86400 / 3600));
  }
  return buf;
}

}  // namespace fibnic
