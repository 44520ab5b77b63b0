// Two (and three) IP-NUMA NICs provisioned by their ipnumad services talking
// to each other; every bus write is checked by the RuleChecker (update rules,
// cross-NIC: nothing mapped into memory the peer does not admit), and final
// tables are decoded with the ipnuma_regs codecs and compared with the spec.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "tests/ipnuma/two_nics.h"

namespace fibnic::ipnuma::testing {
namespace {

class ServiceTest : public TwoNicTest {
 protected:
  void SetUp() override {
    TwoNicTest::SetUp();
    bench_.neighbours[Ip("10.0.0.254")] = Mac("02:00:00:00:00:fe");
  }
  // A maps nothing yet; B offers "rx" (16 KiB at pool+0x1000) to 10.0.0.0/24.
  void StartBoth(std::vector<MappingSpec> a_maps = {}) {
    DesiredState da{{PeerOf(*b_)}, {Export("tx", kPoolA + 0x4000, 0x2000, "10.0.0.2/32")}, a_maps};
    DesiredState db{{PeerOf(*a_)}, {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.0/24")}, {}};
    ASSERT_TRUE(bench_.Start(*b_, db).ok());
    ASSERT_TRUE(bench_.Start(*a_, da).ok());
  }
};

TEST_F(ServiceTest, ProvisionEachOtherEndToEnd) {
  StartBoth({Mapping("to-b", "b", "rx", 0x1000, 4, 3)});
  ASSERT_TRUE(b_->svc->AddMapping(Mapping("to-a", "a", "tx", 0, 10, 2)).ok());

  NicTables ta = a_->Tables();
  NicTables tb = b_->Tables();
  // Local registers as configured, enabled.
  EXPECT_EQ(ta.local.local_ip, Ip("10.0.0.1"));
  EXPECT_EQ(ta.local.control, regs::kControlEnable);
  EXPECT_EQ(ta.local.udp_port, 4791);
  EXPECT_EQ(ta.local.retx_timeout_ns, 5000u);
  // A: PC ID 1 = B (on-segment: B's own MAC); pages 4..6 → B's rx + 0x1000.
  EXPECT_TRUE(ta.pcid[1].valid());
  EXPECT_FALSE(ta.pcid[1].via_gateway());
  EXPECT_EQ(ta.pcid[1].ip, Ip("10.0.0.2"));
  EXPECT_EQ(ta.pcid[1].mac, Mac("02:00:00:00:00:02"));
  EXPECT_FALSE(ta.pcid[0].valid());  // PC ID 0 reserved
  for (uint32_t p = 0; p < 64; ++p) {
    if (p >= 4 && p < 7) {
      EXPECT_EQ(ta.pagemap[p], (regs::PagemapEntry{kPoolB + 0x2000 + (p - 4) * 4096ull, 1})) << p;
    } else {
      EXPECT_FALSE(ta.pagemap[p].mapped()) << p;
    }
  }
  // B: REGION 0 is rx for 10.0.0.0/24; pages 10..11 → A's tx.
  EXPECT_EQ(tb.region[0], (regs::RegionEntry{kPoolB + 0x1000, 0x4000, Ip("10.0.0.0"), Ip("255.255.255.0"),
                                             regs::kRegionValid}));
  EXPECT_FALSE(tb.region[1].valid());
  EXPECT_EQ(tb.pagemap[10], (regs::PagemapEntry{kPoolA + 0x4000, 1}));
  EXPECT_EQ(tb.pagemap[11], (regs::PagemapEntry{kPoolA + 0x5000, 1}));
  // Every page A maps is admitted by B's REGION for A's address (what B's NIC checks).
  for (uint32_t p = 4; p < 7; ++p) {
    EXPECT_TRUE(tb.region[0].Admits(Ip("10.0.0.1"), ta.pagemap[p].remote_pa, 4096));
  }
  EXPECT_GT(bench_.checker.checks(), 0u);
}

TEST_F(ServiceTest, RevocationUnmapsAtPeerBeforeRegionGoes) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 4)});
  ASSERT_TRUE(a_->Tables().pagemap[3].mapped());
  // The checker fails any write after which A still maps into an invalid REGION of B.
  Status st = b_->svc->RemoveExport("rx").status();
  ASSERT_TRUE(st.ok()) << st.ToString();
  for (uint32_t p = 0; p < 4; ++p) EXPECT_EQ(a_->Tables().pagemap[p].Encode(), 0u);
  EXPECT_FALSE(b_->Tables().region[0].valid());
  EXPECT_TRUE(a_->svc->Snapshot()["mappings"].empty());
}

// Attack: a peer that never acknowledges a revocation. Before, the REGION
// stayed VALID (the memory writable) until every peer answered; now it is
// invalid at once and the notice is re-sent from every reconcile.
TEST_F(ServiceTest, SilentPeerCannotKeepRevokedRegionOpen) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 4)});
  auto a_svc = std::move(a_->svc);  // A's ipnumad stops answering
  int notices = 0;
  b_->transport->before = [&](const std::string& path) { notices += path == kPeerRevokePath; };
  auto waiting = b_->svc->RemoveExport("rx");
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  EXPECT_EQ(*waiting, std::vector<std::string>{"a"});
  EXPECT_FALSE(b_->Tables().region[0].valid());  // the memory stopped being writable first
  EXPECT_EQ(notices, 1);
  auto g = b_->svc->HandlePeer(kPeerGrantPath, Ip("10.0.0.1"), {{"export", "rx"}, {"offset", 0}, {"length", 4096}});
  EXPECT_EQ(g.status().code(), StatusCode::kNotFound);
  // Still silent: every reconcile tells it again and says so.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(b_->svc->Reconcile().ok());
    auto snap = b_->svc->Snapshot();
    ASSERT_EQ(snap["revocations"].size(), 1u) << snap["revocations"];
    EXPECT_EQ(snap["revocations"][0]["unacknowledged"], nlohmann::json::array({"a"}));
    ASSERT_FALSE(snap["errors"].empty());
    EXPECT_NE(snap["errors"][0].get<std::string>().find("not acknowledged by peer 'a'"), std::string::npos)
        << snap["errors"];
  }
  EXPECT_EQ(notices, 3);
  // A answers again: the next reconcile's notice unmaps its pages; nothing is left queued.
  a_->svc = std::move(a_svc);
  ASSERT_TRUE(b_->svc->Reconcile().ok());
  for (uint32_t p = 0; p < 4; ++p) EXPECT_FALSE(a_->Tables().pagemap[p].mapped()) << p;
  EXPECT_TRUE(b_->svc->Snapshot()["revocations"].empty());
  ASSERT_TRUE(b_->svc->Reconcile().ok());
  EXPECT_EQ(notices, 4);
}

TEST_F(ServiceTest, RevocationOvertakingGrantAnswerCancelsMapping) {
  StartBoth();
  // B answers A's grant, then revokes rx before A has written its page map.
  bool once = false;
  a_->transport->before = [&](const std::string& path) {
    if (path != kPeerGrantPath || once) return;
    once = true;
    // Deliver the grant first is not possible from here; instead revoke races in
    // right before the grant: the reservation already exists, so A drops it.
    ASSERT_TRUE(b_->svc->RemoveExport("rx").ok());
  };
  auto before = a_->Bytes();
  Status st = a_->svc->AddMapping(Mapping("m", "b", "rx", 0, 0, 1));
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(a_->Bytes(), before);
}

TEST_F(ServiceTest, RestartWithSameConfigWritesNothingAndKeepsMappings) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 2, 2)});
  auto before = a_->Bytes();
  a_->rec->Clear();
  DesiredState da{{PeerOf(*b_)}, {Export("tx", kPoolA + 0x4000, 0x2000, "10.0.0.2/32")},
                  {Mapping("to-b", "b", "rx", 0, 2, 2)}};
  ASSERT_TRUE(bench_.Start(*a_, da).ok());
  EXPECT_TRUE(a_->rec->writes().empty()) << a_->rec->writes().size() << " writes";
  EXPECT_EQ(a_->Bytes(), before);
  auto snap = a_->svc->Snapshot();
  ASSERT_EQ(snap["mappings"].size(), 1u);
  EXPECT_TRUE(snap["mappings"][0]["confirmed"].get<bool>());
}

// MAX_PAYLOAD and RETRY_LIMIT as configured; EPOCH_BASE one newer each time
// ipnumad enables the NIC, unchanged when it finds the NIC running.
TEST_F(ServiceTest, WireRegistersAndANewerEpochEachTimeTheNicIsEnabled) {
  a_->local.max_payload = 1024;
  a_->local.retry_limit = 4;
  StartBoth();
  auto word = [&](Nic& n, uint32_t off) {
    uint32_t v;
    std::memcpy(&v, n.mem->data() + off, 4);
    return v;
  };
  EXPECT_EQ(word(*a_, regs::kOffMaxPayload), 1024u);
  EXPECT_EQ(word(*a_, regs::kOffRetryLimit), 4u);
  EXPECT_EQ(word(*a_, regs::kOffEpochBase), 1u);
  EXPECT_EQ(word(*b_, regs::kOffMaxPayload), 0u);  // not configured: the NIC's default
  EXPECT_EQ(word(*b_, regs::kOffEpochBase), 1u);
  const DesiredState da{{PeerOf(*b_)}, {Export("tx", kPoolA + 0x4000, 0x2000, "10.0.0.2/32")}, {}};
  ASSERT_TRUE(bench_.Start(*a_, da).ok());
  EXPECT_EQ(word(*a_, regs::kOffEpochBase), 1u);
  // Disabled (as after a reset that kept the registers): enabled again with a newer epoch.
  ASSERT_TRUE(a_->mem->Write32(regs::kOffControl, 0).ok());
  ASSERT_TRUE(bench_.Start(*a_, da).ok());
  EXPECT_EQ(word(*a_, regs::kOffEpochBase), 2u);
  EXPECT_EQ(word(*a_, regs::kOffControl), regs::kControlEnable);
}

TEST_F(ServiceTest, RestartReconcilesTablesToNewConfig) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 2, 2)});
  // A restarts without the mapping and without its export; B restarts without rx:
  // B's leftover REGION is revoked, A (still running) unmaps first.
  DesiredState db{{PeerOf(*a_)}, {}, {}};
  ASSERT_TRUE(bench_.Start(*b_, db).ok());
  EXPECT_FALSE(b_->Tables().region[0].valid());
  EXPECT_FALSE(a_->Tables().pagemap[2].mapped());
  DesiredState da{{PeerOf(*b_)}, {}, {}};
  ASSERT_TRUE(bench_.Start(*a_, da).ok());
  NicTables ta = a_->Tables();
  for (const auto& r : ta.region) EXPECT_FALSE(r.valid());
}

TEST_F(ServiceTest, RestartDropsPagesOfRemovedPeerBeforeClearingItsPcid) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 2, 2)});
  // A restarts knowing no peer: pages naming B's PC ID are unmapped, then the entry cleared.
  ASSERT_TRUE(bench_.Start(*a_, DesiredState{}).ok());
  NicTables ta = a_->Tables();
  EXPECT_FALSE(ta.pcid[1].valid());
  EXPECT_FALSE(ta.pagemap[2].mapped());
}

TEST_F(ServiceTest, NeighbourChangeRewritesPcidInPlace) {
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 2)});
  auto first = a_->svc->OnNeighbour(Ip("10.0.0.2"), Mac("02:00:00:00:00:22"));
  ASSERT_TRUE(first.ok());
  EXPECT_FALSE(*first);  // b had a MAC already
  NicTables ta = a_->Tables();
  EXPECT_EQ(ta.pcid[1].mac, Mac("02:00:00:00:00:22"));
  EXPECT_TRUE(ta.pcid[1].valid());
  EXPECT_EQ(ta.pagemap[0].pcid, 1);
}

TEST_F(ServiceTest, OffSegmentPeerUsesGatewayMac) {
  Nic& c = bench_.AddNic("c", "10.9.0.3", "02:00:00:00:00:03", 0x300000000ull);
  DesiredState dc{{PeerOf(*a_)}, {Export("rx", 0x300000000ull, 0x2000, "10.0.0.1/32")}, {}};
  ASSERT_TRUE(bench_.Start(c, dc).ok());
  DesiredState da{{PeerOf(c)}, {}, {Mapping("to-c", "c", "rx", 0, 0, 2)}};
  ASSERT_TRUE(bench_.Start(*a_, da).ok());
  NicTables ta = a_->Tables();
  EXPECT_TRUE(ta.pcid[1].valid());
  EXPECT_TRUE(ta.pcid[1].via_gateway());
  EXPECT_EQ(ta.pcid[1].ip, Ip("10.9.0.3"));
  EXPECT_EQ(ta.pcid[1].mac, Mac("02:00:00:00:00:fe"));
  EXPECT_EQ(ta.pagemap[1], (regs::PagemapEntry{0x300001000ull, 1}));
}

TEST_F(ServiceTest, UnresolvedPeerMacIsRetriedWhenNeighbourAppears) {
  bench_.neighbours.erase(Ip("10.0.0.2"));
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 1)});
  EXPECT_FALSE(a_->Tables().pagemap[0].mapped());
  auto snap = a_->svc->Snapshot();
  ASSERT_EQ(snap["pending"].size(), 1u);
  EXPECT_NE(snap["errors"][0].get<std::string>().find("no MAC yet"), std::string::npos) << snap["errors"];
  bench_.neighbours[Ip("10.0.0.2")] = Mac("02:00:00:00:00:02");
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_EQ(a_->Tables().pagemap[0], (regs::PagemapEntry{kPoolB + 0x1000, 1}));
}

TEST_F(ServiceTest, NeighbourEventResolvesWaitingPeer) {
  bench_.neighbours.erase(Ip("10.0.0.2"));
  StartBoth({Mapping("to-b", "b", "rx", 0, 0, 1)});
  EXPECT_FALSE(a_->Tables().pcid[1].valid());
  // The kernel learns b's MAC (an event, not the periodic lookup).
  auto first = a_->svc->OnNeighbour(Ip("10.0.0.2"), Mac("02:00:00:00:00:02"));
  ASSERT_TRUE(first.ok());
  EXPECT_TRUE(*first);
  EXPECT_EQ(a_->Tables().pcid[1], (regs::PcidEntry{Ip("10.0.0.2"), Mac("02:00:00:00:00:02"), regs::kPcidValid}));
  // A neighbour nobody sends to changes nothing.
  auto other = a_->svc->OnNeighbour(Ip("10.0.0.77"), Mac("02:00:00:00:00:77"));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(*other);
  ASSERT_TRUE(a_->svc->Reconcile().ok());
  EXPECT_EQ(a_->Tables().pagemap[0], (regs::PagemapEntry{kPoolB + 0x1000, 1}));
}

TEST_F(ServiceTest, CountersShowTheDeviceCounters) {
  StartBoth();
  // What the NIC counts (written straight into the device, as the hardware
  // does): values above 2^32 need both halves of each u64.
  const uint64_t want[regs::kCounterCount] = {0x1ffffffffull, 7, 0, 0x100000000ull, 42, 3};
  for (int i = 0; i < regs::kCounterCount; ++i) {
    ASSERT_TRUE(a_->mem->Write(regs::kOffCounters + 8 * i, &want[i], 8).ok());
  }
  // The extended block likewise, each value its own (index + 1) << 32 | index.
  for (int i = 0; i < regs::kExtCounterCount; ++i) {
    const uint64_t v = (uint64_t(i + 1) << 32) | uint64_t(i);
    ASSERT_TRUE(a_->mem->Write(regs::kOffExtCounters + 8 * i, &v, 8).ok());
  }
  nlohmann::json c = a_->svc->Counters();
  for (int i = 0; i < regs::kCounterCount; ++i) {
    EXPECT_EQ(c[regs::kCounterNames[i]].get<uint64_t>(), want[i]) << regs::kCounterNames[i];
  }
  EXPECT_EQ(c["tx_unmapped"].get<uint64_t>(), 0x100000000ull);
  EXPECT_EQ(c["peers_down"].get<uint64_t>(), 0x700000006ull);
  EXPECT_EQ(c["rx_reads_denied"].get<uint64_t>(), 0xf0000000eull);
  EXPECT_FALSE(c.contains("reserved15"));
  EXPECT_EQ(c.size(), size_t{regs::kCounterCount + regs::kExtCounterCount - 1});
}

// Random operations on three NICs; the RuleChecker checks every single write.
TEST(ServiceRandom, EveryIntermediateStateObeysTheRules) {
  const uint32_t seed = std::random_device{}();
  std::cout << "seed " << seed << "\n";
  std::mt19937 rng(seed);
  Bench bench;
  std::vector<Nic*> n = {&bench.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", 0x100000000ull),
                         &bench.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", 0x200000000ull),
                         &bench.AddNic("c", "10.0.0.3", "02:00:00:00:00:03", 0x300000000ull)};
  for (auto* x : n) bench.neighbours[x->local.ip] = x->local.mac;
  for (auto* x : n) {
    DesiredState d;
    for (auto* y : n) {
      if (y != x) d.peers.push_back(PeerOf(*y));
    }
    ASSERT_TRUE(bench.Start(*x, d).ok());
  }
  int ok = 0;
  for (int step = 0; step < 400; ++step) {
    Nic& x = *n[rng() % 3];
    Nic& y = *n[rng() % 3];
    const std::string en = "e" + std::to_string(rng() % 4);
    switch (rng() % 5) {
      case 0:
      case 1: {
        const uint64_t base = x.pool.phys_base + (rng() % 16) * 0x4000;
        ok += x.svc->AddExport(Export(en, base, (1 + rng() % 4) * 0x1000, rng() % 2 ? "10.0.0.0/24" : "10.0.0.2/32"))
                  .ok();
        break;
      }
      case 2:
        ok += x.svc->RemoveExport(en).ok();
        break;
      case 3: {
        if (&x == &y) break;
        const std::string mn = "m" + std::to_string(rng() % 6);
        ok += x.svc->AddMapping(Mapping(mn, y.name, en, (rng() % 2) * 0x1000, rng() % 64, 1 + rng() % 3)).ok();
        break;
      }
      case 4:
        if (rng() % 2) {
          ok += x.svc->RemoveMapping("m" + std::to_string(rng() % 6)).ok();
        } else {
          MacAddr m = y.local.mac;
          m.b[5] = static_cast<uint8_t>(rng());
          ok += x.svc->OnNeighbour(y.local.ip, m).ok();
        }
        break;
    }
  }
  EXPECT_EQ(bench.checker.first_violation(), "") << "seed " << seed;
  EXPECT_GT(ok, 50) << "seed " << seed;
  EXPECT_GT(bench.checker.checks(), 500u);
}

}  // namespace
}  // namespace fibnic::ipnuma::testing
