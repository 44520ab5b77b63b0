// Test bench: IP-NUMA NICs in memory, each behind a RecordingBar whose
// observer runs the RuleChecker after every bus write, and ipnumad services
// wired to each other by direct calls (the HTTP transport is tested apart).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "hwif/memory_bar.h"
#include "hwif/recording_bar.h"
#include "ipnuma/service.h"
#include "tests/ipnuma/rule_checker.h"
#include "tests/support/parse.h"

namespace fibnic::ipnuma::testing {

using fibnic::testing::Ip;
using fibnic::testing::Mac;

// Small tables so "full" is easy to reach: 64 pages, 3 usable PC IDs, 3 REGIONs.
inline regs::Caps SmallCaps() { return {.pages = 64, .pcid_entries = 4, .region_entries = 3}; }

class Bench;

// Calls the peer's service directly, as the peer's HTTP server would after
// authenticating the caller as `self`'s NIC address.
class DirectTransport : public PeerTransport {
 public:
  DirectTransport(Bench& bench, uint32_t self) : bench_(bench), self_(self) {}
  StatusOr<nlohmann::json> Post(const PeerSpec& peer, const std::string& path, const nlohmann::json& body) override;
  // Runs before a request is delivered (to interleave other operations).
  std::function<void(const std::string& path)> before;

 private:
  Bench& bench_;
  uint32_t self_;
};

struct Nic {
  std::string name;
  LocalNic local;
  BufferPool pool;
  std::unique_ptr<MemoryBar> mem;
  std::unique_ptr<RecordingBar> rec;
  std::unique_ptr<DirectTransport> transport;
  std::unique_ptr<IpnumaService> svc;
  int checker_id = 0;
  std::vector<uint8_t> Bytes() const { return mem->bytes(); }
  NicTables Tables() const { return DecodeNicTables(mem->data(), SmallCaps()); }
};

class Bench {
 public:
  // Neighbour table every NIC sees (the kernel's, in the daemon).
  std::map<uint32_t, MacAddr> neighbours;
  RuleChecker checker;
  std::vector<std::unique_ptr<Nic>> nics;

  Nic& AddNic(const std::string& name, const char* ip, const char* mac, uint64_t pool_base) {
    auto n = std::make_unique<Nic>();
    n->name = name;
    n->local.ip = Ip(ip);
    n->local.netmask = Ip("255.255.255.0");
    n->local.gateway = (n->local.ip & 0xFFFFFF00u) | 254;
    n->local.mac = Mac(mac);
    n->local.udp_port = 4791;
    n->local.retx_timeout_ns = 5000;
    n->pool = BufferPool::Reserved(pool_base, 1 << 20).value();
    const regs::Caps caps = SmallCaps();
    n->mem = std::make_unique<MemoryBar>(caps.bar0_bytes());
    auto id = IdentityBlock(caps);
    EXPECT_TRUE(n->mem->Write(0, id.data(), id.size()).ok());
    n->checker_id = checker.AddNic(caps, n->mem->data());
    const int cid = n->checker_id;
    n->rec = std::make_unique<RecordingBar>(*n->mem, [this, cid](const BusWrite&, size_t) { return checker.Check(cid); });
    n->transport = std::make_unique<DirectTransport>(*this, n->local.ip);
    nics.push_back(std::move(n));
    return *nics.back();
  }

  // (Re)creates the NIC's service, as a daemon start does, and starts it.
  Status Start(Nic& n, const DesiredState& desired) {
    ASSIGN_OR_RETURN(auto prov, Provisioner::Open(*n.rec, n.local, n.pool));
    n.svc = std::make_unique<IpnumaService>(std::move(prov), *n.transport, [this](uint32_t ip) -> std::optional<MacAddr> {
      auto it = neighbours.find(ip);
      if (it == neighbours.end()) return std::nullopt;
      return it->second;
    });
    return n.svc->Start(desired);
  }

  Nic* ByApi(const std::string& api) {
    for (auto& n : nics) {
      if (n->name == api) return n.get();
    }
    return nullptr;
  }
};

inline StatusOr<nlohmann::json> DirectTransport::Post(const PeerSpec& peer, const std::string& path,
                                                      const nlohmann::json& body) {
  if (before) before(path);
  Nic* target = bench_.ByApi(peer.api);
  if (!target || !target->svc) return Unavailable("peer '" + peer.name + "' (" + peer.api + ") is not running");
  return target->svc->HandlePeer(path, self_, body);
}

inline PeerSpec PeerOf(const Nic& n) { return PeerSpec{n.name, n.local.ip, n.name, "secret-" + n.name, IpAddr::V4(n.local.ip)}; }

inline ExportSpec Export(const std::string& name, uint64_t base, uint64_t length, const char* allow) {
  return ExportSpec{name, base, length, Prefix::Parse(allow).value()};
}

inline MappingSpec Mapping(const std::string& name, const std::string& peer, const std::string& exp, uint64_t offset,
                           uint32_t first, uint32_t pages) {
  return MappingSpec{name, peer, exp, offset, first, pages};
}

inline constexpr uint64_t kPoolA = 0x100000000ull;
inline constexpr uint64_t kPoolB = 0x200000000ull;

// Two NICs a (10.0.0.1) and b (10.0.0.2) on one segment, each knowing the
// other's MAC; every bus write checked against the contract's write rules.
class TwoNicTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = &bench_.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
    b_ = &bench_.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
    bench_.neighbours[Ip("10.0.0.1")] = Mac("02:00:00:00:00:01");
    bench_.neighbours[Ip("10.0.0.2")] = Mac("02:00:00:00:00:02");
  }
  void TearDown() override { EXPECT_EQ(bench_.checker.first_violation(), ""); }
  Bench bench_;
  Nic* a_ = nullptr;
  Nic* b_ = nullptr;
};

}  // namespace fibnic::ipnuma::testing
