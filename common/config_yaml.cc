#include "common/config_yaml.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>

namespace fibnic {
namespace {

std::string JoinWords(std::initializer_list<const char*> words) {
  std::string out;
  for (const char* w : words) {
    if (!out.empty()) out += ", ";
    out += w;
  }
  return out;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

const char* NodeKind(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

}  // namespace

// ---- YamlDocument ------------------------------------------------------------

StatusOr<YamlDocument> YamlDocument::LoadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError("cannot open config file '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError("cannot read config file '" + path + "'");
  return Parse(ss.str(), path);
}

StatusOr<YamlDocument> YamlDocument::Parse(const std::string& text, const std::string& name) {
  YamlDocument doc;
  doc.name_ = name;
  try {
    doc.root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(name + ":" + std::to_string(e.mark.line + 1) + ":" +
                           std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
  return doc;
}

// ---- YamlErrors --------------------------------------------------------------

void YamlErrors::Add(const YAML::Mark& mark, const std::string& key, const std::string& message) {
  std::string where = file_;
  if (!mark.is_null()) where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  errors_.push_back(where + ": " + (key.empty() ? "" : key + ": ") + message);
}

Status YamlErrors::ToStatus() const {
  if (errors_.empty()) return OkStatus();
  std::string msg;
  for (const auto& e : errors_) {
    if (!msg.empty()) msg += "\n";
    msg += e;
  }
  return InvalidArgument(msg);
}

// ---- Endpoint / durations ------------------------------------------------------

std::string Endpoint::ToString() const {
  if (host.is_v4()) return host.ToString() + ":" + std::to_string(port);
  return "[" + host.ToString() + "]:" + std::to_string(port);
}

StatusOr<Endpoint> Endpoint::Parse(std::string_view text) {
  std::string_view host, port;
  if (!text.empty() && text.front() == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':')
      return InvalidArgument("'" + std::string(text) + "' is not [IPV6]:PORT");
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string_view::npos || text.find(':') != colon)
      return InvalidArgument("'" + std::string(text) + "' is not IPV4:PORT or [IPV6]:PORT");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  Endpoint ep;
  ASSIGN_OR_RETURN(ep.host, IpAddr::Parse(host));
  auto p = ParseInt(port);
  if (!p || *p < 0 || *p > 65535) return InvalidArgument("bad port '" + std::string(port) + "' (0..65535)");
  ep.port = static_cast<uint16_t>(*p);
  return ep;
}

StatusOr<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
  auto n = ParseInt(text.substr(0, i));
  std::string_view unit = text.substr(i);
  using namespace std::chrono;
  int64_t scale = 0;
  if (unit == "ns") scale = 1;
  else if (unit == "us") scale = 1'000;
  else if (unit == "ms") scale = 1'000'000;
  else if (unit == "s") scale = 1'000'000'000;
  else if (unit == "m") scale = 60'000'000'000;
  else if (unit == "h") scale = 3'600'000'000'000;
  if (!n || scale == 0 || *n > INT64_MAX / scale)
    return InvalidArgument("'" + std::string(text) + "' is not a duration (integer + ns|us|ms|s|m|h)");
  return nanoseconds(*n * scale);
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t n = d.count();
  struct Unit { int64_t scale; const char* name; };
  static constexpr Unit kUnits[] = {{3'600'000'000'000, "h"}, {60'000'000'000, "m"}, {1'000'000'000, "s"},
                                    {1'000'000, "ms"},        {1'000, "us"},          {1, "ns"}};
  for (const Unit& u : kUnits) {
    if (n != 0 && n % u.scale == 0) return std::to_string(n / u.scale) + u.name;
  }
  return std::to_string(n) + "ns";
}

// ---- YamlMap -------------------------------------------------------------------

YamlMap::YamlMap(const YAML::Node& node, std::string path, YamlErrors* errs)
    : node_(node), path_(std::move(path)), errs_(errs), mark_(YAML::Mark::null_mark()) {
  if (!node_.IsDefined() || node_.IsNull()) {
    node_ = YAML::Node(YAML::NodeType::Map);
    return;
  }
  mark_ = node_.Mark();
  if (!node_.IsMap()) {
    errs_->Add(mark_, path_, std::string("expected a mapping of keys, found ") + NodeKind(node_));
    node_ = YAML::Node(YAML::NodeType::Map);
    return;
  }
  std::set<std::string> seen;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) {
      errs_->Add(kv.first.Mark(), path_, "keys must be plain words");
      continue;
    }
    if (!seen.insert(kv.first.Scalar()).second)
      errs_->Add(kv.first.Mark(), KeyPath(kv.first.Scalar()), "key given twice");
  }
}

std::string YamlMap::KeyPath(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

YAML::Node YamlMap::Child(const std::string& key) const {
  for (const auto& kv : node_) {
    if (kv.first.IsScalar() && kv.first.Scalar() == key) return kv.second;
  }
  return YAML::Node();
}

bool YamlMap::Has(const std::string& key) const {
  YAML::Node c = Child(key);
  return c.IsDefined() && !c.IsNull();
}

bool YamlMap::Require(const std::string& key) {
  asked_.insert(key);
  if (Has(key)) return true;
  errs_->Add(mark_, KeyPath(key), "missing required key");
  return false;
}

void YamlMap::Error(const std::string& key, const std::string& message) {
  YAML::Node c = key.empty() ? YAML::Node() : Child(key);
  errs_->Add(c.IsDefined() ? c.Mark() : mark_, key.empty() ? path_ : KeyPath(key), message);
}

void YamlMap::BadValue(const std::string& key, const std::string& value, const std::string& allowed) {
  Error(key, "bad value '" + value + "'; allowed: " + allowed);
}

std::optional<std::string> YamlMap::Scalar(const std::string& key) {
  asked_.insert(key);
  YAML::Node c = Child(key);
  if (!c.IsDefined() || c.IsNull()) return std::nullopt;
  if (!c.IsScalar()) {
    Error(key, std::string("expected a single value, found ") + NodeKind(c));
    return std::nullopt;
  }
  return c.Scalar();
}

std::string YamlMap::String(const std::string& key, const std::string& def) {
  return Scalar(key).value_or(def);
}

bool YamlMap::Bool(const std::string& key, bool def) {
  auto s = Scalar(key);
  if (!s) return def;
  if (*s == "true") return true;
  if (*s == "false") return false;
  BadValue(key, *s, "true, false");
  return def;
}

int64_t YamlMap::Integer(const std::string& key, int64_t def, int64_t min, int64_t max) {
  auto s = Scalar(key);
  if (!s) return def;
  auto v = ParseInt(*s);
  if (!v || *v < min || *v > max) {
    BadValue(key, *s, "an integer in " + std::to_string(min) + ".." + std::to_string(max));
    return def;
  }
  return *v;
}

int64_t YamlMap::OneOfInts(const std::string& key, int64_t def, std::initializer_list<int64_t> allowed) {
  auto s = Scalar(key);
  if (!s) return def;
  auto v = ParseInt(*s);
  for (int64_t a : allowed) {
    if (v && *v == a) return a;
  }
  std::string list;
  for (int64_t a : allowed) list += (list.empty() ? "" : ", ") + std::to_string(a);
  BadValue(key, *s, list);
  return def;
}

double YamlMap::Double(const std::string& key, double def, double min, double max) {
  auto s = Scalar(key);
  if (!s) return def;
  double v = 0;
  auto [p, ec] = std::from_chars(s->data(), s->data() + s->size(), v);
  if (ec != std::errc() || p != s->data() + s->size() || !std::isfinite(v) || v < min || v > max) {
    std::ostringstream allowed;
    allowed << "a number in " << min << ".." << max;
    BadValue(key, *s, allowed.str());
    return def;
  }
  return v;
}

size_t YamlMap::Enum(const std::string& key, size_t def, std::initializer_list<const char*> allowed) {
  auto s = Scalar(key);
  if (!s) return def;
  size_t i = 0;
  for (const char* a : allowed) {
    if (*s == a) return i;
    ++i;
  }
  BadValue(key, *s, JoinWords(allowed));
  return def;
}

std::chrono::nanoseconds YamlMap::Duration(const std::string& key, std::chrono::nanoseconds def,
                                           std::chrono::nanoseconds min, std::chrono::nanoseconds max) {
  auto s = Scalar(key);
  if (!s) return def;
  auto d = ParseDuration(*s);
  if (!d.ok() || *d < min || *d > max) {
    BadValue(key, *s, "a duration from " + FormatDuration(min) + " to " + FormatDuration(max) +
                          " (integer + ns|us|ms|s|m|h)");
    return def;
  }
  return *d;
}

std::optional<IpAddr> YamlMap::Address(const std::string& key) {
  auto s = Scalar(key);
  if (!s) return std::nullopt;
  auto a = IpAddr::Parse(*s);
  if (!a.ok()) {
    BadValue(key, *s, "an IPv4 or IPv6 address");
    return std::nullopt;
  }
  return *a;
}

std::optional<MacAddr> YamlMap::Mac(const std::string& key) {
  auto s = Scalar(key);
  if (!s) return std::nullopt;
  auto m = MacAddr::Parse(*s);
  if (!m.ok()) {
    BadValue(key, *s, "a MAC address aa:bb:cc:dd:ee:ff");
    return std::nullopt;
  }
  return *m;
}

Endpoint YamlMap::Listen(const std::string& key, const Endpoint& def) {
  auto s = Scalar(key);
  if (!s) return def;
  auto e = Endpoint::Parse(*s);
  if (!e.ok()) {
    BadValue(key, *s, "IPV4:PORT or [IPV6]:PORT with port 0..65535");
    return def;
  }
  return *e;
}

std::vector<int64_t> YamlMap::IntList(const std::string& key, const std::vector<int64_t>& def, int64_t min,
                                      int64_t max) {
  asked_.insert(key);
  YAML::Node c = Child(key);
  if (!c.IsDefined() || c.IsNull()) return def;
  std::string allowed = "a list of integers in " + std::to_string(min) + ".." + std::to_string(max);
  if (!c.IsSequence()) {
    Error(key, std::string("expected ") + allowed + ", found " + NodeKind(c));
    return def;
  }
  std::vector<int64_t> out;
  for (const auto& item : c) {
    std::optional<int64_t> v = item.IsScalar() ? ParseInt(item.Scalar()) : std::nullopt;
    if (!v || *v < min || *v > max) {
      errs_->Add(item.Mark(), KeyPath(key),
                 "bad value '" + (item.IsScalar() ? item.Scalar() : std::string(NodeKind(item))) +
                     "'; allowed: " + allowed);
      return def;
    }
    out.push_back(*v);
  }
  return out;
}

std::vector<std::string> YamlMap::StringList(const std::string& key, const std::string& what) {
  asked_.insert(key);
  YAML::Node c = Child(key);
  if (!c.IsDefined() || c.IsNull()) return {};
  if (!c.IsSequence()) {
    Error(key, "expected a list of " + what + ", found " + NodeKind(c));
    return {};
  }
  std::vector<std::string> out;
  for (const auto& item : c) {
    if (!item.IsScalar()) {
      errs_->Add(item.Mark(), KeyPath(key), std::string("bad value '") + NodeKind(item) + "'; allowed: " + what);
      return {};
    }
    out.push_back(item.Scalar());
  }
  return out;
}

YamlMap YamlMap::Map(const std::string& key) {
  asked_.insert(key);
  return YamlMap(Child(key), KeyPath(key), errs_);
}

std::vector<YamlMap> YamlMap::MapList(const std::string& key) {
  asked_.insert(key);
  YAML::Node c = Child(key);
  std::vector<YamlMap> out;
  if (!c.IsDefined() || c.IsNull()) return out;
  if (!c.IsSequence()) {
    Error(key, std::string("expected a list of mappings, found ") + NodeKind(c));
    return out;
  }
  size_t i = 0;
  for (const auto& item : c) {
    std::string p = KeyPath(key) + "[" + std::to_string(i++) + "]";
    if (!item.IsMap()) {
      errs_->Add(item.Mark(), p, std::string("expected a mapping, found ") + NodeKind(item));
      continue;
    }
    out.emplace_back(item, p, errs_);
  }
  return out;
}

void YamlMap::Finish() {
  std::string known;
  for (const auto& k : asked_) known += (known.empty() ? "" : ", ") + k;
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar() || asked_.count(kv.first.Scalar())) continue;
    errs_->Add(kv.first.Mark(), KeyPath(kv.first.Scalar()),
               "unknown key; allowed here: " + (known.empty() ? std::string("none") : known));
  }
}

}  // namespace fibnic
