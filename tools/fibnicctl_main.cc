// fibnicctl — look into a running fibnicd through its REST API (/api/v1/...),
// and compare BAR images offline. Human tables by default, --json for scripts.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/ctl_table.h"
#include "tools/ctl_views.h"
#include "common/http_client.h"
#include "tools/image_diff.h"
#include "device/fibnic_image_codec.h"
#include "common/mapped_region.h"
#include "device/fibnic_lookup.h"

namespace fibnic {
namespace {

using nlohmann::json;

constexpr const char* kUsage =
    "usage: fibnicctl [--server HOST:PORT] [--token-file FILE] [--json] COMMAND\n"
    "\n"
    "commands (ask the running fibnicd):\n"
    "  status                               device, route counts per family and offload state, slots, rates\n"
    "  routes [PREFIX] [--state offloaded|partial|punted] [--source kernel|static|api]\n"
    "         [--family 4|6] [--covering ADDRESS] [--limit N] [--after PREFIX]\n"
    "                                       a page of routes; --after takes the 'next' a page ends with\n"
    "  lookup ADDRESS                       the RIB's answer next to the hardware's (decoded from the BAR)\n"
    "  nexthops | neighbors | tcam          the device tables, decoded, with the RIB's owners\n"
    "offline:\n"
    "  lookup ADDRESS --bar FILE            the hardware's answer decoded from a BAR image file\n"
    "  image diff A B                       differences between two BAR image files, by table\n"
    "\n"
    "--server HOST[:PORT], [IPV6]:PORT or http://HOST[:PORT] (HOST an address or a name; port 8080\n"
    "unless given); defaults to $FIBNIC_API or 127.0.0.1:8080. The bearer token: --token-file (a file only\n"
    "its owner may read), else $FIBNIC_TOKEN; --token TOKEN also works but shows it in ps(1) (and warns).\n"
    "\n"
    "exit status: 0 ok; 1 fibnicd answered with an error (or a file could not be read); 2 bad usage;\n"
    "3 fibnicd could not be reached; 4 'image diff' found differences.\n";

// Scripts tell "fibnicd is not there" (retry, start it) from "fibnicd said
// no" (fix the request) by the exit status alone.
constexpr int kExitError = 1;
constexpr int kExitUsage = 2;
constexpr int kExitUnreachable = 3;
constexpr int kExitDiffer = 4;

struct Args {
  Endpoint server{IpAddr::V4(0x7F000001), 8080};
  std::string token;
  bool json = false;
  std::string bar;
  std::vector<std::string> words;
  std::vector<std::pair<std::string, std::string>> query;
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "fibnicctl: %s\n%s", why.c_str(), kUsage);
  std::exit(kExitUsage);
}

int Fail(const Status& st) {
  std::fprintf(stderr, "fibnicctl: %s\n", st.ToString().c_str());
  return st.code() == StatusCode::kUnavailable ? kExitUnreachable : kExitError;
}

// --server or $FIBNIC_API: a malformed address is bad usage, a name that does
// not resolve is a fibnicd that cannot be reached.
Endpoint ServerOrExit(const std::string& what, const std::string& text) {
  auto ep = ParseServer(text, 8080);
  if (ep.ok()) return *ep;
  if (ep.status().code() != StatusCode::kUnavailable) Usage(what + ": " + ep.status().message());
  std::fprintf(stderr, "fibnicctl: %s: %s\n", what.c_str(), ep.status().message().c_str());
  std::exit(kExitUnreachable);
}

// A secret in argv is visible to every local user (ps, /proc/PID/cmdline): the
// token comes from a file that, like an ssh key, only its owner may read.
std::string ReadTokenFile(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) Usage("--token-file: cannot open '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    Usage("--token-file: '" + path + "' is not a regular file");
  }
  if ((st.st_mode & 077) != 0) {
    close(fd);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    Usage("--token-file: '" + path + "' may be read by others (mode " + mode + "); chmod 600 it");
  }
  std::string text(4096, '\0');
  ssize_t n = read(fd, text.data(), text.size());
  close(fd);
  if (n < 0) Usage("--token-file: cannot read '" + path + "': " + std::strerror(errno));
  text.resize(static_cast<size_t>(n));
  std::string token = text.substr(0, text.find('\n'));
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) Usage("--token-file: '" + path + "' holds no token on its first line");
  return token;
}

// The API names families ipv4/ipv6; operators type 4 or 6.
std::string FamilyParam(const std::string& v) {
  if (v == "4" || v == "ipv4") return "ipv4";
  if (v == "6" || v == "ipv6") return "ipv6";
  Usage("--family: '" + v + "' is not 4 or 6");
}

Args Parse(int argc, char** argv) {
  Args a;
  if (const char* env = std::getenv("FIBNIC_API")) a.server = ServerOrExit("FIBNIC_API", env);
  if (const char* env = std::getenv("FIBNIC_TOKEN")) a.token = env;
  for (int i = 1; i < argc; ++i) {
    std::string w = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) Usage(w + " needs a value");
      return argv[++i];
    };
    if (w == "--server") {
      a.server = ServerOrExit("--server", value());
    } else if (w == "--token") {
      a.token = value();
      // Every local user sees argv (ps, /proc/PID/cmdline) for as long as we run.
      std::fprintf(stderr,
                   "fibnicctl: warning: --token shows the token to every local user in ps(1); "
                   "use --token-file FILE (mode 600) or $FIBNIC_TOKEN\n");
    } else if (w == "--token-file") {
      a.token = ReadTokenFile(value());
    } else if (w == "--json") {
      a.json = true;
    } else if (w == "--bar") {
      a.bar = value();
    } else if (w == "--family") {
      a.query.emplace_back("family", FamilyParam(value()));
    } else if (w == "--state" || w == "--source" || w == "--covering" || w == "--limit" || w == "--after") {
      a.query.emplace_back(w.substr(2), value());
    } else if (w == "--help" || w == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (w.rfind("--", 0) == 0) {
      Usage("unknown option '" + w + "'");
    } else {
      a.words.push_back(w);
    }
  }
  return a;
}

StatusOr<json> Get(const Args& a, const std::string& target) {
  HttpRequestSpec spec;
  spec.server = a.server;
  spec.target = target;
  spec.token = a.token;
  auto called = HttpCall(spec);
  // No answer at all (refused, reset, cut short) is "cannot reach", whatever
  // the socket said.
  if (!called.ok()) {
    const bool refused = called.status().code() == StatusCode::kUnavailable;
    return Status(StatusCode::kUnavailable,
                  "fibnicd: " + called.status().message() +
                      (refused ? " (is fibnicd running? --server HOST[:PORT] picks another)" : ""));
  }
  HttpResult r = std::move(*called);
  json j = json::parse(r.body, nullptr, false);
  if (j.is_discarded()) {
    return Internal("fibnicd answered " + std::to_string(r.status) + " with something that is not JSON for " +
                    target);
  }
  if (r.status >= 400) {
    std::string msg = j.contains("error") && j["error"].contains("message") ? j["error"]["message"].get<std::string>()
                                                                             : r.body;
    return InvalidArgument("fibnicd: " + std::to_string(r.status) + " for " + target + ": " + msg);
  }
  return j;
}

void Print(const Args& a, const json& j, const std::string& human) {
  if (a.json) {
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::fputs(human.c_str(), stdout);
  }
}

int ImageDiff(const Args& a) {
  if (a.words.size() != 4) Usage("image diff needs two image files");
  auto d = DiffImageFiles(a.words[2], a.words[3]);
  if (!d.ok()) return Fail(d.status());
  Print(a, ImageDiffJson(*d), FormatImageDiff(*d));
  return d->empty() ? 0 : kExitDiffer;
}

int LocalLookup(const Args& a, const IpAddr& dst) {
  // Mapped, not read: a lookup touches a few words of a 20 MiB image (a
  // file, or the BAR map fibnicd writes on a bpffs).
  auto view = MappedRegion::Open(a.bar);
  if (!view.ok()) return Fail(view.status());
  std::span<const uint8_t> bar(view->data(), view->size());
  auto header = DecodeBarHeader(bar.data(), bar.size());
  if (!header.ok()) return Fail(header.status().WithContext(a.bar));
  HwDecision d = HwLookup(bar.data(), bar.size(), dst);
  json j = {{"address", dst.ToString()},
            {"hardware",
             {{"forward", d.forward},
              {"drop", d.drop},
              {"why", d.why},
              {"code", d.code},
              {"tcam_index", d.tcam_index >= 0 ? json(d.tcam_index) : json(nullptr)},
              {"port", d.forward ? json(d.port) : json(nullptr)},
              {"dst_mac", d.forward ? json(d.dst_mac.ToString()) : json(nullptr)}}}};
  Print(a, j, RenderKeyValues(j));
  return 0;
}

int Run(const Args& a) {
  if (a.words.empty()) Usage("no command");
  const std::string& cmd = a.words[0];
  if (cmd == "image") {
    if (a.words.size() < 2 || a.words[1] != "diff") Usage("image: only 'image diff A B'");
    return ImageDiff(a);
  }
  if (cmd == "lookup") {
    if (a.words.size() != 2) Usage("lookup needs one ADDRESS");
    auto dst = IpAddr::Parse(a.words[1]);
    if (!dst.ok()) Usage("lookup: " + dst.status().message());
    if (!a.bar.empty()) return LocalLookup(a, *dst);
    auto j = Get(a, "/api/v1/lookup/" + UrlEncode(a.words[1]));
    if (!j.ok()) return Fail(j.status());
    std::string human;
    if (j->contains("rib") && j->contains("hardware")) {
      human = "lookup " + a.words[1] + "\n" + RenderSideBySide((*j)["rib"], "rib", (*j)["hardware"], "hardware");
      json rest = *j;
      rest.erase("rib");
      rest.erase("hardware");
      rest.erase("address");
      if (!rest.empty()) human += RenderKeyValues(rest);
    } else {
      human = RenderAnswer(*j);
    }
    Print(a, *j, human);
    return 0;
  }
  std::string target;
  if (cmd == "status") {
    target = "/api/v1/status";
  } else if (cmd == "routes") {
    if (a.words.size() > 2) Usage("routes takes at most one PREFIX");
    target = "/api/v1/routes";
    std::string q;
    if (a.words.size() == 2) q += "prefix=" + UrlEncode(a.words[1]);
    for (const auto& [k, v] : a.query) q += (q.empty() ? "" : "&") + k + "=" + UrlEncode(v);
    if (!q.empty()) target += "?" + q;
  } else if (cmd == "nexthops" || cmd == "neighbors" || cmd == "tcam") {
    target = "/api/v1/" + cmd;
  } else {
    Usage("unknown command '" + cmd + "'");
  }
  if (!a.query.empty() && cmd != "routes") Usage("--state/--source/--family/--covering/--limit/--after are for 'routes'");
  if (a.words.size() > 1 && cmd != "routes") Usage(cmd + " takes no arguments");
  auto j = Get(a, target);
  if (!j.ok()) return Fail(j.status());
  if (a.json) {
    Print(a, *j, "");
    return 0;
  }
  std::string human;
  if (cmd == "status") {
    // The events date each source's last change; status stands without them.
    auto events = Get(a, "/api/v1/events?limit=1000");
    human = RenderStatus(*j, events.ok() ? *events : json(nullptr));
  } else if (cmd == "routes") {
    human = RenderRoutes(*j);
  } else if (cmd == "nexthops") {
    human = RenderNexthops(*j);
  } else {
    human = RenderAnswer(*j);
  }
  Print(a, *j, human);
  return 0;
}

}  // namespace
}  // namespace fibnic

int main(int argc, char** argv) { return fibnic::Run(fibnic::Parse(argc, argv)); }
