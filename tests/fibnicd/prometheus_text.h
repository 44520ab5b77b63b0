// A strict reader of the Prometheus text exposition format 0.0.4, for tests:
// every line a HELP, a TYPE or a sample; names and label names as the format
// allows, label values quoted with only \\ \" \n escapes, values that parse;
// one TYPE per family, before its samples, and samples of a family together;
// no series twice; counters not negative; histograms with an le on every
// bucket, buckets cumulative up to +Inf, +Inf == _count, and _sum present.
// Parse() returns the problems found (empty = valid) and fills samples.
#pragma once

#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fibnic::testing {

struct PromSample {
  std::string name;                           // as written (with _bucket, _sum, _count)
  std::map<std::string, std::string> labels;
  double value = 0;
};

class PromText {
 public:
  std::vector<std::string> Parse(const std::string& text) {
    std::vector<std::string> problems;
    auto bad = [&](int line, const std::string& what) { problems.push_back("line " + std::to_string(line) + ": " + what); };
    static const std::regex kName("[a-zA-Z_:][a-zA-Z0-9_:]*");
    static const std::regex kLabelName("[a-zA-Z_][a-zA-Z0-9_]*");
    std::istringstream in(text);
    std::string line, current;  // current: the family whose samples are being read
    std::set<std::string> closed, series;
    int n = 0;
    if (!text.empty() && text.back() != '\n') bad(0, "the text does not end with a newline");
    while (std::getline(in, line)) {
      ++n;
      if (line.empty()) continue;
      if (line[0] == '#') {
        std::istringstream c(line.substr(1));
        std::string kind, name, rest;
        c >> kind >> name;
        std::getline(c, rest);
        if (kind != "HELP" && kind != "TYPE") continue;  // a plain comment
        if (!std::regex_match(name, kName)) bad(n, "bad metric name '" + name + "'");
        if (kind == "TYPE") {
          const std::string type = rest.empty() ? "" : rest.substr(1);
          if (type != "counter" && type != "gauge" && type != "histogram" && type != "summary" && type != "untyped")
            bad(n, "bad type '" + type + "'");
          if (types.count(name)) bad(n, "second TYPE for " + name);
          types[name] = type;
          if (current != name) {
            if (!current.empty()) closed.insert(current);
            if (closed.count(name)) bad(n, "family " + name + " continues after another one");
            current = name;
          }
        }
        continue;
      }
      PromSample s;
      size_t i = 0;
      while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
      s.name = line.substr(0, i);
      if (!std::regex_match(s.name, kName)) {
        bad(n, "bad sample name '" + s.name + "'");
        continue;
      }
      std::string key;
      if (i < line.size() && line[i] == '{') {
        ++i;
        while (i < line.size() && line[i] != '}') {
          const size_t eq = line.find('=', i);
          if (eq == std::string::npos || eq + 1 >= line.size() || line[eq + 1] != '"') {
            bad(n, "bad label syntax");
            break;
          }
          const std::string lname = line.substr(i, eq - i);
          if (!std::regex_match(lname, kLabelName)) bad(n, "bad label name '" + lname + "'");
          std::string v;
          size_t j = eq + 2;
          for (; j < line.size() && line[j] != '"'; ++j) {
            if (line[j] == '\\') {
              ++j;
              if (j >= line.size() || (line[j] != '\\' && line[j] != '"' && line[j] != 'n')) bad(n, "bad escape");
              v += j < line.size() && line[j] == 'n' ? '\n' : line[j];
            } else {
              v += line[j];
            }
          }
          if (j >= line.size()) {
            bad(n, "unterminated label value");
            break;
          }
          if (s.labels.count(lname)) bad(n, "label " + lname + " twice");
          s.labels[lname] = v;
          i = j + 1;
          if (i < line.size() && line[i] == ',') ++i;
        }
        if (i >= line.size() || line[i] != '}') {
          bad(n, "labels not closed");
          continue;
        }
        ++i;
      }
      if (i >= line.size() || line[i] != ' ') {
        bad(n, "no value");
        continue;
      }
      const std::string value = line.substr(i + 1);
      if (value == "+Inf" || value == "-Inf" || value == "NaN") {
        s.value = value == "NaN" ? NAN : value == "+Inf" ? INFINITY : -INFINITY;
      } else {
        char* end = nullptr;
        s.value = std::strtod(value.c_str(), &end);
        if (value.empty() || *end != '\0') bad(n, "bad value '" + value + "' (timestamps are not expected)");
      }
      const std::string family = FamilyOf(s.name);
      if (!types.count(family)) bad(n, "sample of " + s.name + " without a TYPE");
      if (family != current) bad(n, "sample of " + family + " outside its family's block");
      const std::string type = types.count(family) ? types[family] : "";
      if (type == "counter" && !(s.value >= 0)) bad(n, "counter " + s.name + " is " + value);
      if (type == "histogram" && s.name == family) bad(n, "histogram " + family + " has a plain sample");
      if (type == "histogram" && s.name == family + "_bucket" && !s.labels.count("le")) bad(n, "bucket without le");
      std::ostringstream k;
      k << s.name;
      for (const auto& [ln, lv] : s.labels) k << ',' << ln << '=' << lv;
      key = k.str();
      if (!series.insert(key).second) bad(n, "series twice: " + key);
      samples.push_back(s);
    }
    CheckHistograms(problems);
    return problems;
  }

  // A sample's family: the name itself, or the histogram it is a part of.
  std::string FamilyOf(const std::string& name) const {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      const std::string sfx = suffix;
      if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0) {
        const std::string base = name.substr(0, name.size() - sfx.size());
        const auto t = types.find(base);
        if (t != types.end() && (t->second == "histogram" || t->second == "summary")) return base;
      }
    }
    return name;
  }

  // Value of the one sample with this name whose labels include want; NaN if none.
  double Value(const std::string& name, const std::map<std::string, std::string>& want = {}) const {
    for (const auto& s : samples) {
      if (s.name != name) continue;
      bool match = true;
      for (const auto& [k, v] : want) match = match && s.labels.count(k) && s.labels.at(k) == v;
      if (match) return s.value;
    }
    return NAN;
  }

  std::map<std::string, std::string> types;  // family → type
  std::vector<PromSample> samples;

 private:
  void CheckHistograms(std::vector<std::string>& problems) const {
    for (const auto& [family, type] : types) {
      if (type != "histogram") continue;
      // Series of one histogram: its labels without le.
      std::map<std::string, std::vector<std::pair<double, double>>> buckets;
      std::map<std::string, double> count, sum;
      for (const auto& s : samples) {
        auto labels = s.labels;
        const std::string le = labels.count("le") ? labels["le"] : "";
        labels.erase("le");
        std::string key;
        for (const auto& [k, v] : labels) key += k + "=" + v + ",";
        if (s.name == family + "_bucket") {
          buckets[key].push_back({le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr), s.value});
        }
        if (s.name == family + "_count") count[key] = s.value;
        if (s.name == family + "_sum") sum[key] = s.value;
      }
      for (const auto& [key, b] : buckets) {
        double last_le = -INFINITY, last = 0;
        for (const auto& [le, v] : b) {
          if (!(le > last_le)) problems.push_back(family + "{" + key + "}: buckets not in le order");
          if (v < last) problems.push_back(family + "{" + key + "}: buckets not cumulative");
          last_le = le;
          last = v;
        }
        if (b.empty() || !std::isinf(b.back().first)) problems.push_back(family + "{" + key + "}: no +Inf bucket");
        if (!count.count(key) || count.at(key) != last) problems.push_back(family + "{" + key + "}: +Inf != _count");
        if (!sum.count(key)) problems.push_back(family + "{" + key + "}: no _sum");
      }
    }
  }
};

}  // namespace fibnic::testing
