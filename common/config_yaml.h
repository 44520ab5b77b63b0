// Strict, typed reading of YAML configuration files (yaml-cpp underneath),
// shared by fibnicd and ipnumad.
//
// A config is read section by section through YamlMap. Every getter checks
// type and range and, on a bad value, records an error that names
// file:line:column, the dotted key, the offending value and what is allowed;
// then returns the default so reading goes on and one run reports every
// problem. A key that no getter asked for is an error (typos must not be
// ignored silently), and so is a key given twice.
//
//   ASSIGN_OR_RETURN(YamlDocument doc, YamlDocument::LoadFile(path));
//   YamlErrors errs(doc.name());
//   YamlMap root(doc.root(), "", &errs);
//   YamlMap dev = root.Map("device");
//   cfg.code_bits = dev.Int<int>("code_bits", 2, {2, 4});
//   dev.Finish(); root.Finish();
//   RETURN_IF_ERROR(errs.ToStatus());
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/ip.h"
#include "common/status.h"

namespace fibnic {

// A parsed YAML file (or string) and the name used in messages.
class YamlDocument {
 public:
  static StatusOr<YamlDocument> LoadFile(const std::string& path);
  // name is what messages call the text ("<embedded default>", a file name).
  static StatusOr<YamlDocument> Parse(const std::string& text, const std::string& name);

  const std::string& name() const { return name_; }
  const YAML::Node& root() const { return root_; }

 private:
  std::string name_;
  YAML::Node root_;
};

// Collects the errors found while reading one document.
class YamlErrors {
 public:
  explicit YamlErrors(std::string file) : file_(std::move(file)) {}
  // "file:line:col: key: message" (line/column omitted when unknown).
  void Add(const YAML::Mark& mark, const std::string& key, const std::string& message);
  bool empty() const { return errors_.empty(); }
  const std::vector<std::string>& errors() const { return errors_; }
  // OK, or INVALID_ARGUMENT with every error, one per line.
  Status ToStatus() const;
  const std::string& file() const { return file_; }

 private:
  std::string file_;
  std::vector<std::string> errors_;
};

// host:port, with IPv6 hosts in brackets ("[::1]:8080").
struct Endpoint {
  IpAddr host;
  uint16_t port = 0;
  std::string ToString() const;
  static StatusOr<Endpoint> Parse(std::string_view text);
  bool operator==(const Endpoint&) const = default;
};

// Parses "250us", "1ms", "30s", "5m" (integer + unit ns|us|ms|s|m|h).
StatusOr<std::chrono::nanoseconds> ParseDuration(std::string_view text);
std::string FormatDuration(std::chrono::nanoseconds d);

// One mapping of the document. A missing or null node reads as an empty map
// (every key takes its default).
class YamlMap {
 public:
  YamlMap(const YAML::Node& node, std::string path, YamlErrors* errs);

  bool Has(const std::string& key) const;
  // Records "missing required key" when absent; returns Has(key).
  bool Require(const std::string& key);

  std::string String(const std::string& key, const std::string& def);
  bool Bool(const std::string& key, bool def);
  int64_t Integer(const std::string& key, int64_t def, int64_t min, int64_t max);
  template <typename T>
  T Int(const std::string& key, T def, std::pair<int64_t, int64_t> range) {
    return static_cast<T>(Integer(key, def, range.first, range.second));
  }
  // One of a fixed set of integers (e.g. code_bits: 2 or 4).
  int64_t OneOfInts(const std::string& key, int64_t def, std::initializer_list<int64_t> allowed);
  double Double(const std::string& key, double def, double min, double max);
  // One of the allowed words; the index into allowed.
  size_t Enum(const std::string& key, size_t def, std::initializer_list<const char*> allowed);
  std::chrono::nanoseconds Duration(const std::string& key, std::chrono::nanoseconds def,
                                    std::chrono::nanoseconds min, std::chrono::nanoseconds max);
  std::optional<IpAddr> Address(const std::string& key);
  std::optional<MacAddr> Mac(const std::string& key);
  Endpoint Listen(const std::string& key, const Endpoint& def);
  std::vector<int64_t> IntList(const std::string& key, const std::vector<int64_t>& def, int64_t min,
                               int64_t max);
  // A list of scalars (an absent key: empty); `what` says what each must be when one is not a scalar.
  std::vector<std::string> StringList(const std::string& key, const std::string& what);

  // Sub-sections.
  YamlMap Map(const std::string& key);
  std::vector<YamlMap> MapList(const std::string& key);

  // Records one error per key that no getter asked for. Call once, last.
  void Finish();

  // For checks that involve several keys: an error at key (or at the map itself).
  void Error(const std::string& key, const std::string& message);
  const std::string& path() const { return path_; }
  YAML::Mark mark() const { return mark_; }

 private:
  // The scalar text of key, or nullopt (absent, or not a scalar: error recorded).
  std::optional<std::string> Scalar(const std::string& key);
  YAML::Node Child(const std::string& key) const;
  std::string KeyPath(const std::string& key) const;
  void BadValue(const std::string& key, const std::string& value, const std::string& allowed);

  YAML::Node node_;
  std::string path_;
  YamlErrors* errs_;
  YAML::Mark mark_;
  std::set<std::string> asked_;
};

}  // namespace fibnic
