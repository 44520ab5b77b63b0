// KernelTable fed what a real kernel sent during a kdiff run — its start-up
// dump, then every event — and judged at each of the run's quiescent checks
// by the kernel's own answers recorded there (tests/kdiff/netlink_record.py
// wrote tests/sources/recordings/*.nlrec). No root and no kernel: the kernel
// source's model runs here under AddressSanitizer and UBSan too.
//
// The source is right for an address when the route it gave the RIB for the
// longest prefix covering it (none: the device punts) punts, drops where the
// kernel blackholes in every forwarding context, or sends only along paths
// the kernel may send that address along (port and gateway; a connected
// path's neighbour is the address itself).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "sources/kernel/kernel_table.h"
#include "tests/sources/recording_sink.h"
#include "tests/support/netlink_bytes.h"

namespace fibnic {
namespace {

struct KernelAnswer {
  bool blackhole = false;
  std::vector<std::pair<std::optional<int>, IpAddr>> hops;  // FIBNIC port (nullopt: another interface), gateway
};

std::vector<uint32_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> bytes(hex.size() / 2);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return testing::Aligned(bytes);
}

std::vector<KernelAnswer> ParseAnswers(const nlohmann::json& kernel) {
  std::vector<KernelAnswer> out;
  for (const auto& ctx : kernel) {
    KernelAnswer a;
    if (ctx.is_string()) {
      a.blackhole = true;
    } else {
      for (const auto& hop : ctx) {
        std::optional<int> port;
        if (!hop[0].is_null()) port = hop[0].get<int>();
        a.hops.emplace_back(port, *IpAddr::Parse(hop[1].get<std::string>()));
      }
    }
    out.push_back(std::move(a));
  }
  return out;
}

// The route the source gave for the longest prefix covering addr.
const Route* Covering(const std::map<Prefix, Route>& routes, const IpAddr& addr) {
  for (int len = addr.is_v4() ? 32 : 128; len >= 0; --len) {
    auto p = Prefix::Make(addr, len);
    if (!p.ok()) continue;
    auto it = routes.find(*p);
    if (it != routes.end()) return &it->second;
  }
  return nullptr;
}

// Empty when the source's answer is one the kernel allows; else why not.
std::string Judge(const Route* route, const IpAddr& addr, const std::vector<KernelAnswer>& kernel) {
  if (!route) return "";
  for (const NextHop& nh : route->paths) {
    if (nh.to_host()) return "";
  }
  for (const NextHop& nh : route->paths) {
    if (nh.drop()) {
      for (const KernelAnswer& k : kernel) {
        if (!k.blackhole) return route->prefix.ToString() + " drops where the kernel does not blackhole";
      }
      continue;
    }
    const IpAddr neighbour = nh.gateway ? *nh.gateway : addr;
    for (const KernelAnswer& k : kernel) {
      bool found = false;
      for (const auto& [port, gw] : k.hops) found |= port && *port == static_cast<int>(nh.port) && gw == neighbour;
      if (!found) return route->prefix.ToString() + " sends it " + nh.ToString() + ", a path the kernel does not";
    }
  }
  return "";
}

void Replay(const std::filesystem::path& file) {
  std::ifstream in(file);
  ASSERT_TRUE(in) << file;
  testing::RecordingSink sink;
  KernelTable table(sink, PortNames{{"k0", 0}, {"k1", 1}, {"k2", 2}, {"k3", 3}}, KernelTableOptions{}, nullptr);
  table.BeginResync();
  bool synced = false;
  size_t line_no = 0, events = 0, checks = 0, forwarded = 0, failures = 0;
  std::map<Prefix, Route> routes;  // the sink's, copied when it changed
  std::string line;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.size() < 2) continue;
    const char kind = line[0];
    const std::string rest = line.substr(2);
    if (kind != 'D' && !synced) {
      table.EndResync();
      synced = true;
    }
    if (kind == 'D' || kind == 'E') {
      const std::vector<uint32_t> msg = FromHex(rest);
      const Status st = table.Apply(reinterpret_cast<const nlmsghdr*>(msg.data()));
      EXPECT_TRUE(st.ok()) << file.filename().string() << ":" << line_no << ": " << st.message();
      events += kind == 'E';
      continue;
    }
    ASSERT_EQ(kind, 'C') << file << ":" << line_no << ": unknown line";
    const nlohmann::json c = nlohmann::json::parse(rest);
    const IpAddr addr = *IpAddr::Parse(c["addr"].get<std::string>());
    if (!sink.TakeLog().empty()) routes = sink.routes();
    const Route* route = Covering(routes, addr);
    const std::string why = Judge(route, addr, ParseAnswers(c["kernel"]));
    ++checks;
    forwarded += route && !route->paths.empty() && !route->paths[0].to_host() && !route->paths[0].drop();
    if (!why.empty() && ++failures <= 10) {
      ADD_FAILURE() << file.filename().string() << ":" << line_no << " (after " << events << " events): "
                    << addr.ToString() << ": " << why;
    }
  }
  std::cout << file.filename().string() << ": " << events << " events, " << checks << " answers checked, "
            << forwarded << " forwarded by the source's route, " << failures << " wrong\n";
  EXPECT_GT(checks, 1000u) << "a recording with few checks shows little";
  EXPECT_GT(forwarded, 50u) << "a recording whose routes all punt shows little";
}

TEST(KernelTableReplay, EveryAnswerAsTheKernelsOwnAtEachRecordedCheck) {
  const std::filesystem::path dir = std::filesystem::path(FIBNIC_SOURCE_DIR) / "tests/sources/recordings";
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".nlrec") continue;
    ++files;
    Replay(entry.path());
  }
  EXPECT_GT(files, 0u) << "no recordings in " << dir;
}

}  // namespace
}  // namespace fibnic
