// fibnicd — the FIBNIC control-plane daemon. See docs/daemon.md.
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fib/heap_trim.h"
#include "fibnicd/fibnicd.h"
#include "common/log.h"

namespace {

constexpr const char* kUsage =
    "usage: fibnicd [--config FILE | --config-if-present FILE] [--bar FILE] [--check-config]\n"
    "       fibnicd --print-default-config\n"
    "\n"
    "  --config FILE             YAML configuration (configs/fibnicd.yaml documents every key)\n"
    "  --config-if-present FILE  use FILE when it exists, else the embedded default\n"
    "  --bar FILE                file backend: the BAR image (overrides device.path)\n"
    "  --check-config            validate the configuration, print the result, exit 0 (valid) or 1\n"
    "  --print-default-config    print the embedded default configuration\n"
    "\n"
    "Without a config fibnicd runs the embedded default: the file backend under\n"
    "$STATE_DIRECTORY (or /var/lib/fibnic) and the kernel routing table, no hardware\n"
    "and no FRR needed. SIGHUP reloads the config; SIGTERM stops, leaving the device\n"
    "forwarding with its last tables.\n";

bool FileExists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace fibnic;
  MapBigBlocks();
  FibnicdOptions options;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string* out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fibnicd: %s needs a value\n%s", a.c_str(), kUsage);
        std::exit(2);
      }
      *out = argv[++i];
    };
    if (a == "--config") {
      std::string p;
      value(&p);
      options.config_path = p;
    } else if (a == "--config-if-present") {
      std::string p;
      value(&p);
      if (FileExists(p)) options.config_path = p;
    } else if (a == "--bar") {
      value(&options.bar_path);
    } else if (a == "--check-config") {
      check = true;
    } else if (a == "--print-default-config") {
      std::fputs(kDefaultConfigYaml, stdout);
      return 0;
    } else if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    } else {
      std::fprintf(stderr, "fibnicd: unknown argument '%s'\n%s", a.c_str(), kUsage);
      return 2;
    }
  }

  auto config = options.config_path ? LoadFibnicdConfig(*options.config_path) : DefaultFibnicdConfig();
  if (!config.ok()) {
    std::fprintf(stderr, "fibnicd: invalid configuration:\n%s\n", config.status().message().c_str());
    return 1;
  }
  if (check) {
    std::printf("%s: OK\n", config->source_name.c_str());
    return 0;
  }
  Fibnicd daemon(options, std::move(*config));
  return daemon.Run();
}
