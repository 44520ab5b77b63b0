// The IP-NUMA sender/receiver model against independent oracles: a plain byte
// array to which the same writes are applied in program order, and counts
// worked out by hand from the contract's rules. The channel between the two
// halves is written here (loss, reordering, late duplicates), not taken from
// the model.
#include "device/ipnuma_model.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <tuple>
#include <vector>

#include "tests/support/test_seed.h"

namespace fibnic::ipnuma_model {
namespace {
namespace regs = ipnuma_regs;
namespace wire = ipnuma_wire;

constexpr uint32_t kIpA = 0xAC130A0A;  // 172.19.10.10, the sender
constexpr uint32_t kIpB = 0xAC120310;  // 172.18.3.16, the receiver
constexpr uint32_t kIpC = 0xAC130A0B;  // 172.19.10.11, a host no region admits
constexpr uint64_t kMemBase = 0x18064A0000ull;  // receiver's buffer (thesis example, 64 B aligned)
constexpr uint32_t kMemBytes = 128 * 1024;
constexpr uint32_t kRegionBytes = 128 * 1024;

// A BAR0 image written only through the ipnuma_regs constants and codecs.
struct Bar0 {
  regs::Caps caps{64, 16, 8};
  std::vector<uint8_t> b = std::vector<uint8_t>(caps.bar0_bytes(), 0);

  Bar0() {
    Put32(regs::kOffCaps0, caps.caps0());
    Put32(regs::kOffCaps1, caps.caps1());
  }
  void Put32(uint64_t off, uint32_t v) {
    for (int i = 0; i < 4; ++i) b[off + i] = static_cast<uint8_t>(v >> (8 * i));
  }
  void Local(uint32_t ip, bool enable = true, uint32_t timeout_ns = 10'000, uint32_t retry = 0,
             uint32_t max_payload = 0) {
    regs::LocalRegs r;
    r.local_ip = ip;
    r.netmask = 0xFFFF0000;
    r.retx_timeout_ns = timeout_ns;
    r.control = enable ? regs::kControlEnable : 0;
    for (auto [off, v] : regs::EncodeLocalRegs(r)) Put32(off, v);
    Put32(regs::kOffRetryLimit, retry);
    Put32(regs::kOffMaxPayload, max_payload);
  }
  void Pcid(uint16_t i, uint32_t ip, uint8_t flags = regs::kPcidValid) {
    regs::PcidEntry e;
    e.ip = ip;
    e.mac.b = {2, 0, 0, 0, 0, static_cast<uint8_t>(i)};
    e.flags = flags;
    auto enc = e.Encode();
    std::memcpy(&b[regs::PcidOffset(i)], enc.data(), enc.size());
  }
  void Region(uint16_t i, uint64_t base, uint64_t len, uint32_t ip, uint32_t mask, bool valid = true) {
    regs::RegionEntry e{base, len, ip, mask, static_cast<uint8_t>(valid ? regs::kRegionValid : 0)};
    auto enc = e.Encode();
    std::memcpy(&b[regs::RegionOffset(i)], enc.data(), enc.size());
  }
  void Map(uint32_t page, uint16_t pcid, uint64_t remote) {
    const auto w = regs::PagemapEntry{remote, pcid}.Encode();
    Put32(regs::PagemapOffset(page), static_cast<uint32_t>(w));
    Put32(regs::PagemapOffset(page) + 4, static_cast<uint32_t>(w >> 32));
  }
};

// Sender A and receiver B: A's pages 0..31 map to B's buffer through PC ID 1;
// B's region 0 admits A (/32) over the whole buffer.
struct Pair {
  Bar0 a, b;
  std::vector<uint8_t> mem = std::vector<uint8_t>(kMemBytes, 0);
  Sender tx{a.b};
  Receiver rx{b.b, mem, kMemBase};

  explicit Pair(uint32_t retry = 0, uint32_t max_payload = 0, uint32_t timeout_ns = 10'000) {
    a.Local(kIpA, true, timeout_ns, retry, max_payload);
    b.Local(kIpB);
    a.Pcid(1, kIpB);
    for (uint32_t p = 0; p < kMemBytes / regs::kPageBytes; ++p) a.Map(p, 1, kMemBase + uint64_t{p} * regs::kPageBytes);
    b.Region(0, kMemBase, kRegionBytes, kIpA, 0xFFFFFFFF);
  }
  // Lossless, in-order delivery until nothing is in flight; returns datagrams carried.
  int Pump(uint64_t* now, uint32_t src = kIpA) {
    int n = 0;
    for (int round = 0; round < 100000; ++round) {
      auto out = tx.Poll(*now);
      if (out.empty()) break;
      for (auto& d : out) {
        ++n;
        auto reply = rx.OnDatagram(src, d.bytes);
        if (!reply.empty()) {
          EXPECT_TRUE(tx.OnDatagram(kIpB, reply, *now).ok());
        }
      }
      *now += 1000;
    }
    return n;
  }
};

std::vector<uint8_t> Bytes(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

// ------------------------------------------------------------- lossy channel

// Datagrams in flight with a delivery time: lost with probability `loss`,
// delayed 1-5 us (so they reorder), and duplicated with probability `dup`, the
// copy arriving up to 60 us late (after the sender has moved on).
class Channel {
 public:
  Channel(uint64_t seed, double loss, double dup) : rng_(seed), loss_(loss), dup_(dup) {}
  void Send(uint64_t now, bool to_rx, std::vector<uint8_t> bytes) {
    std::uniform_real_distribution<double> u(0, 1);
    if (u(rng_) < loss_) return;
    if (u(rng_) < dup_) Push(now + 1000 + rng_() % 60'000, to_rx, bytes);
    Push(now + 1000 + rng_() % 4000, to_rx, std::move(bytes));
  }
  // Removes and returns the datagrams due by now, in delivery order.
  std::vector<std::pair<bool, std::vector<uint8_t>>> Due(uint64_t now) {
    std::vector<std::pair<bool, std::vector<uint8_t>>> out;
    while (!q_.empty() && std::get<0>(q_.begin()->first) <= now) {
      out.push_back(std::move(q_.begin()->second));
      q_.erase(q_.begin());
    }
    return out;
  }
  bool empty() const { return q_.empty(); }

 private:
  void Push(uint64_t at, bool to_rx, std::vector<uint8_t> b) { q_.emplace(std::make_tuple(at, n_++), std::make_pair(to_rx, std::move(b))); }
  std::mt19937_64 rng_;
  double loss_, dup_;
  uint64_t n_ = 0;
  std::map<std::tuple<uint64_t, uint64_t>, std::pair<bool, std::vector<uint8_t>>> q_;
};

struct LossyCase {
  double loss;
  uint32_t max_payload;
  int writes;
};
void PrintTo(const LossyCase& c, std::ostream* os) {
  *os << "loss " << c.loss << ", max payload " << c.max_payload << ", " << c.writes << " writes";
}

class IpnumaModelLossy : public ::testing::TestWithParam<LossyCase> {};

// The key property: whatever the channel does, the receiver's memory ends up
// equal to a byte array to which the writes were applied in program order.
TEST_P(IpnumaModelLossy, ReceiverMemoryEqualsProgramOrderOracle) {
  const LossyCase c = GetParam();
  const uint64_t seed = testing::TestSeed("IpnumaModelLossy");
  std::mt19937_64 rng(seed);
  Pair p(/*retry=*/40, c.max_payload);
  Channel ch(seed ^ 0x5eed, c.loss, c.loss > 0 ? 0.02 : 0.01);
  std::vector<uint8_t> oracle(kMemBytes, 0);
  uint64_t now = 0, packets = 0;
  const uint32_t mp = c.max_payload ? c.max_payload : regs::kMaxPayloadDefault;
  auto step = [&] {
    now += 500;
    for (auto& [to_rx, bytes] : ch.Due(now)) {
      if (to_rx) {
        auto reply = p.rx.OnDatagram(kIpA, bytes);
        if (!reply.empty()) ch.Send(now, false, std::move(reply));
      } else {
        ASSERT_TRUE(p.tx.OnDatagram(kIpB, bytes, now).ok());
      }
    }
    for (auto& d : p.tx.Poll(now)) {
      ASSERT_EQ(d.dst_ip, kIpB);
      ch.Send(now, true, std::move(d.bytes));
    }
  };
  for (int w = 0; w < c.writes; ++w) {
    const uint32_t len = 1 + static_cast<uint32_t>(rng() % (uint64_t{1} << (rng() % 17)));  // 1 B .. 64 KiB
    const uint32_t off = static_cast<uint32_t>(rng() % (kMemBytes - len + 1));
    std::vector<uint8_t> data(len);
    for (auto& x : data) x = static_cast<uint8_t>(rng());
    ASSERT_TRUE(p.tx.Store(off, data).ok());
    std::memcpy(&oracle[off], data.data(), len);
    packets += (off + len - 1) / mp - off / mp + 1;
    const int gap = static_cast<int>(rng() % 6);
    for (int s = 0; s < gap; ++s) step();
  }
  for (int s = 0; s < 20'000'000 && (p.tx.Outstanding() > 0 || !ch.empty()); ++s) step();
  ASSERT_EQ(p.tx.Outstanding(), 0u) << "seed " << seed;
  EXPECT_TRUE(p.tx.TakeEvents().empty()) << "seed " << seed;
  const auto& rc = p.rx.counters();
  const auto& tc = p.tx.counters();
  EXPECT_EQ(rc[regs::kRxWrites], packets) << "each packet applied exactly once";
  EXPECT_EQ(tc[regs::kTxWrites], packets);
  EXPECT_EQ(rc[regs::kRxDenied], 0u);
  EXPECT_EQ(rc[regs::kRxMalformed], 0u);
  if (c.loss > 0) {
    EXPECT_GT(tc[regs::kRetransmits], 0u);
  }
  EXPECT_GT(rc[regs::kRxDuplicate], 0u) << "the channel's duplicates reached the receiver";
  size_t first_diff = kMemBytes;
  for (size_t i = 0; i < kMemBytes && first_diff == kMemBytes; ++i)
    if (p.mem[i] != oracle[i]) first_diff = i;
  EXPECT_EQ(first_diff, kMemBytes) << "memory differs from the oracle at byte " << first_diff << " (seed " << seed
                                   << ")";
  std::cout << "  packets " << packets << ", retransmits " << tc[regs::kRetransmits] << ", duplicates "
            << rc[regs::kRxDuplicate] << ", out of order " << rc[regs::kRxOutOfOrder] << std::endl;
}

INSTANTIATE_TEST_SUITE_P(Channels, IpnumaModelLossy,
                         ::testing::Values(LossyCase{0.0, 0, 200}, LossyCase{0.01, 0, 200}, LossyCase{0.10, 0, 120},
                                           LossyCase{0.10, 4096, 120}, LossyCase{0.01, 1024, 200}),
                         [](const auto& info) {
                           return "loss" + std::to_string(static_cast<int>(info.param.loss * 100)) + "pct_payload" +
                                  std::to_string(info.param.max_payload ? info.param.max_payload : 64);
                         });

// ------------------------------------------------------------- the rules one by one

TEST(IpnumaModel, StoreSplitsOnPayloadBoundariesAndRespectsByteEnables) {
  Pair p;
  std::fill(p.mem.begin(), p.mem.end(), 0xEE);
  uint64_t now = 0;
  ASSERT_TRUE(p.tx.Store(60, Bytes(200, 0x11)).ok());  // [60,64) [64,128) [128,192) [192,256) [256,260)
  ASSERT_TRUE(p.tx.Store(301, Bytes(1, 0x22)).ok());   // one byte: its DW neighbours untouched
  EXPECT_EQ(p.Pump(&now), 6);
  EXPECT_EQ(p.tx.counters()[regs::kTxWrites], 6u);
  EXPECT_EQ(p.rx.counters()[regs::kRxWrites], 6u);
  EXPECT_EQ(p.rx.counters()[regs::kAcks], 6u);
  EXPECT_EQ(p.mem[59], 0xEE);
  EXPECT_EQ(p.mem[60], 0x11);
  EXPECT_EQ(p.mem[259], 0x11);
  EXPECT_EQ(p.mem[260], 0xEE);
  EXPECT_EQ(p.mem[300], 0xEE);
  EXPECT_EQ(p.mem[301], 0x22);
  EXPECT_EQ(p.mem[302], 0xEE);
  EXPECT_EQ(p.tx.Outstanding(), 0u);
}

TEST(IpnumaModel, DeniedWritesAreCountedAndNeverLand) {
  Pair p;
  // Region 0 now admits A only over the first 16 KiB.
  p.b.Region(0, kMemBase, 16 * 1024, kIpA, 0xFFFFFFFF);
  uint64_t now = 0;
  ASSERT_TRUE(p.tx.Store(16 * 1024 - 64, Bytes(128, 0x33)).ok());  // one packet in, one out
  p.Pump(&now);
  EXPECT_EQ(p.mem[16 * 1024 - 1], 0x33);
  EXPECT_EQ(p.mem[16 * 1024], 0);
  EXPECT_EQ(p.rx.counters()[regs::kRxWrites], 1u);
  EXPECT_EQ(p.rx.counters()[regs::kRxDenied], 1u);
  EXPECT_EQ(p.rx.counters()[regs::kErrorsSent], 1u);
  EXPECT_EQ(p.tx.counters()[regs::kErrorsReceived], 1u);
  auto ev = p.tx.TakeEvents();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, WriterEvent::Kind::kDenied);
  EXPECT_EQ(ev[0].bar2_offset, 16u * 1024);
  EXPECT_EQ(ev[0].bytes, 64u);
  EXPECT_EQ(p.tx.Outstanding(), 0u) << "an ERROR also acknowledges";

  // The same stream's packets, but from a source no region admits (wrong IP).
  Pair q;
  ASSERT_TRUE(q.tx.Store(0, Bytes(256, 0x44)).ok());
  q.Pump(&now, kIpC);
  EXPECT_EQ(q.rx.counters()[regs::kRxDenied], 4u);
  EXPECT_EQ(q.rx.counters()[regs::kRxWrites], 0u);
  EXPECT_EQ(q.tx.TakeEvents().size(), 4u);
  EXPECT_EQ(std::count(q.mem.begin(), q.mem.end(), 0), static_cast<long>(kMemBytes));
}

TEST(IpnumaModel, RevokedRegionStopsWritesAtOnce) {
  Pair p;
  uint64_t now = 0;
  ASSERT_TRUE(p.tx.Store(128, Bytes(64, 0x55)).ok());
  p.Pump(&now);
  ASSERT_EQ(p.mem[128], 0x55);
  p.b.Region(0, kMemBase, kRegionBytes, kIpA, 0xFFFFFFFF, /*valid=*/false);  // revoked
  ASSERT_TRUE(p.tx.Store(128, Bytes(64, 0x66)).ok());
  ASSERT_TRUE(p.tx.Store(4096, Bytes(64, 0x66)).ok());
  p.Pump(&now);
  EXPECT_EQ(p.mem[128], 0x55);
  EXPECT_EQ(p.mem[4096], 0);
  EXPECT_EQ(p.rx.counters()[regs::kRxDenied], 2u);
  EXPECT_EQ(p.rx.counters()[regs::kRxWrites], 1u);
}

TEST(IpnumaModel, UnmappedPagesAndInvalidPcIdsAreRefusedAndCounted) {
  Pair p;
  p.a.Map(3, regs::kPcidUnmapped, 0);
  p.a.Map(5, 2, kMemBase);  // PC ID 2 is not VALID
  uint64_t now = 0;
  // Pages 2..3: page 2 sends its 64 packets, page 3's 64 are refused.
  Status st = p.tx.Store(2 * 4096, Bytes(8192, 0x77));
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("page 3"), std::string::npos) << st.message();
  EXPECT_EQ(p.tx.Store(5 * 4096 + 10, Bytes(3, 1)).code(), StatusCode::kNotFound);
  EXPECT_EQ(p.tx.Store(64 * 4096, Bytes(1, 1)).code(), StatusCode::kOutOfRange);  // beyond CAPS0
  EXPECT_EQ(p.tx.counters()[regs::kTxUnmapped], 64u + 1u + 1u);
  EXPECT_EQ(p.Pump(&now), 64);
  EXPECT_EQ(p.mem[2 * 4096], 0x77);
  EXPECT_EQ(p.mem[3 * 4096], 0);
  EXPECT_EQ(p.mem[5 * 4096 + 10], 0);
  // Disabled NIC: refused and counted apart.
  p.a.Local(kIpA, /*enable=*/false);
  EXPECT_EQ(p.tx.Store(0, Bytes(1, 1)).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(p.tx.counters()[regs::kTxDisabled], 1u);
}

TEST(IpnumaModel, PeerGoesDownAfterRetryLimitAndIsRefusedUntilReset) {
  Pair p(/*retry=*/3, /*max_payload=*/0, /*timeout_ns=*/5'000);
  uint64_t now = 0;
  // Two writes land, then the network swallows everything.
  ASSERT_TRUE(p.tx.Store(0, Bytes(128, 0x10)).ok());
  p.Pump(&now);
  ASSERT_TRUE(p.tx.Store(256, Bytes(192, 0x20)).ok());  // 3 packets, all lost
  for (; now < 1'000'000; now += 1000) p.tx.Poll(now);
  const auto& c = p.tx.counters();
  EXPECT_EQ(c[regs::kRetransmits], 3u * 3u) << "3 packets, 3 retransmissions each";
  EXPECT_EQ(c[regs::kPeersDown], 1u);
  EXPECT_EQ(p.tx.PeerState(1), regs::kPeerStateDown);
  auto ev = p.tx.TakeEvents();
  ASSERT_EQ(ev.size(), 3u);
  for (const auto& e : ev) EXPECT_EQ(e.kind, WriterEvent::Kind::kPeerDown);
  Status st = p.tx.Store(512, Bytes(100, 0x30));  // 2 packets
  EXPECT_EQ(st.code(), StatusCode::kUnavailable);
  EXPECT_EQ(c[regs::kTxPeerDownRefused], 2u);
  EXPECT_TRUE(p.tx.Poll(now).empty());
  EXPECT_EQ(p.mem[256], 0);

  // Reset: a new epoch; the receiver, which had applied sequences 0-1 of the
  // old one, starts over at sequence 0 of the new one.
  p.tx.ResetPeer(1);
  EXPECT_EQ(p.tx.PeerState(1), 0u);
  ASSERT_TRUE(p.tx.Store(512, Bytes(100, 0x30)).ok());
  p.Pump(&now);
  EXPECT_EQ(p.mem[512], 0x30);
  EXPECT_EQ(p.mem[611], 0x30);
  EXPECT_EQ(p.rx.counters()[regs::kRxWrites], 2u + 2u);
}

TEST(IpnumaModel, LateDuplicateNeverOverwritesANewerWrite) {
  Pair p;
  uint64_t now = 0;
  ASSERT_TRUE(p.tx.Store(64, Bytes(64, 0xAA)).ok());
  auto old = p.tx.Poll(now);
  ASSERT_EQ(old.size(), 1u);
  ASSERT_FALSE(p.rx.OnDatagram(kIpA, old[0].bytes).empty());  // applied; its ACK is lost
  ASSERT_TRUE(p.tx.Store(64, Bytes(64, 0xBB)).ok());
  now += 20'000;  // the first write times out and is resent together with the second
  auto resent = p.tx.Poll(now);
  ASSERT_EQ(resent.size(), 2u);
  for (auto& d : resent) {
    auto reply = p.rx.OnDatagram(kIpA, d.bytes);
    ASSERT_TRUE(p.tx.OnDatagram(kIpB, reply, now).ok());
  }
  EXPECT_EQ(p.mem[64], 0xBB);
  // The original first write turns up very late.
  auto reply = p.rx.OnDatagram(kIpA, old[0].bytes);
  EXPECT_EQ(p.mem[64], 0xBB);
  EXPECT_EQ(p.rx.counters()[regs::kRxDuplicate], 2u);
  EXPECT_EQ(p.rx.counters()[regs::kRxWrites], 2u);
  auto ack = wire::Decode(reply);
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(ack->type, wire::PacketType::kAck);
  EXPECT_EQ(ack->ack_seq, 2u) << "re-ACKed with the cumulative sequence";
  // And after a reset, the old stream's packet is stale: dropped, no reply.
  p.tx.ResetPeer(1);
  ASSERT_TRUE(p.tx.Store(64, Bytes(64, 0xCC)).ok());
  p.Pump(&now);
  EXPECT_TRUE(p.rx.OnDatagram(kIpA, old[0].bytes).empty());
  EXPECT_EQ(p.mem[64], 0xCC);
  EXPECT_EQ(p.rx.counters()[regs::kRxStaleEpoch], 1u);
}

// A restarted sender NIC starts its streams at EPOCH_BASE; the receiver still
// holds the old incarnation's stream. The rule that ipnumad raises EPOCH_BASE
// across NIC resets is what keeps the new stream's sequence 0 from being
// taken for a duplicate.
TEST(IpnumaModel, RestartedSenderNeedsARaisedEpochBase) {
  Pair p;
  uint64_t now = 0;
  ASSERT_TRUE(p.tx.Store(0, Bytes(128, 0x01)).ok());
  p.Pump(&now);
  auto pump = [&](Sender& s) {
    for (auto& d : s.Poll(now)) {
      auto reply = p.rx.OnDatagram(kIpA, d.bytes);
      if (!reply.empty()) {
        ASSERT_TRUE(s.OnDatagram(kIpB, reply, now).ok());
      }
    }
  };
  Sender same_epoch(p.a.b);  // EPOCH_BASE still 0: the hazard
  ASSERT_TRUE(same_epoch.Store(0, Bytes(4, 0x02)).ok());
  pump(same_epoch);
  EXPECT_EQ(p.mem[0], 0x01) << "taken as a duplicate of the old sequence 0";
  EXPECT_EQ(p.rx.counters()[regs::kRxDuplicate], 1u);

  p.a.Put32(regs::kOffEpochBase, 1);
  Sender raised(p.a.b);
  ASSERT_TRUE(raised.Store(0, Bytes(4, 0x03)).ok());
  pump(raised);
  EXPECT_EQ(p.mem[0], 0x03);
  EXPECT_EQ(raised.Outstanding(), 0u);
}

TEST(IpnumaModel, GapIsNotAppliedAndGoBackNFillsIt) {
  Pair p;
  uint64_t now = 0;
  ASSERT_TRUE(p.tx.Store(0, Bytes(128, 0x5A)).ok());
  auto out = p.tx.Poll(now);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(p.rx.OnDatagram(kIpA, out[1].bytes).empty());  // seq 1 before seq 0
  EXPECT_EQ(p.mem[64], 0);
  EXPECT_EQ(p.rx.counters()[regs::kRxOutOfOrder], 1u);
  now += 20'000;
  p.Pump(&now);
  EXPECT_EQ(p.mem[0], 0x5A);
  EXPECT_EQ(p.mem[127], 0x5A);
  EXPECT_EQ(p.tx.counters()[regs::kRetransmits], 2u);
}

TEST(IpnumaModel, ReadsReturnDataOrZerosWithAnError) {
  Pair p;
  uint64_t now = 0;
  std::vector<uint8_t> data(70);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i + 1);
  ASSERT_TRUE(p.tx.Store(1000, data).ok());
  ASSERT_TRUE(p.tx.Load(1000, 70).ok());  // after the write: must see it
  p.Pump(&now);
  auto ev = p.tx.TakeEvents();
  std::vector<uint8_t> got;
  for (auto& e : ev) {
    EXPECT_EQ(e.kind, WriterEvent::Kind::kReadData);
    got.insert(got.end(), e.data.begin(), e.data.end());
  }
  EXPECT_EQ(got, data);
  EXPECT_EQ(p.rx.counters()[regs::kRxReads], 2u);  // [1000,1024) and [1024,1070)
  p.b.Region(0, kMemBase, 512, kIpA, 0xFFFFFFFF);  // the read now falls outside
  ASSERT_TRUE(p.tx.Load(1000, 8).ok());
  p.Pump(&now);
  ev = p.tx.TakeEvents();
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, WriterEvent::Kind::kDenied);
  EXPECT_EQ(ev[0].data, Bytes(8, 0));
  EXPECT_EQ(p.rx.counters()[regs::kRxReadsDenied], 1u);
  EXPECT_EQ(p.tx.counters()[regs::kErrorsReceived], 1u);
}

TEST(IpnumaModel, WindowEpochWrapMaskAndSparseByteEnables) {
  // CAPS2 = 4: only four packets go out before an answer.
  Pair p;
  p.a.Put32(regs::kOffCaps2, 4);
  ASSERT_TRUE(p.tx.Store(0, Bytes(640, 0x10)).ok());  // 10 packets
  EXPECT_EQ(p.tx.Poll(0).size(), 4u);
  EXPECT_TRUE(p.tx.Poll(0).empty()) << "window full";
  uint64_t now = 20'000;  // those four were lost: go-back-N resends them, then the rest
  p.Pump(&now);
  EXPECT_EQ(p.mem[639], 0x10);
  EXPECT_EQ(p.tx.Outstanding(), 0u);

  // Epoch 0xFFFF then a reset: 0 is newer modulo 2^16.
  Pair w;
  w.a.Put32(regs::kOffEpochBase, 0xFFFF);
  ASSERT_TRUE(w.tx.Store(0, Bytes(4, 1)).ok());
  w.Pump(&now);
  w.tx.ResetPeer(1);
  ASSERT_TRUE(w.tx.Store(0, Bytes(4, 2)).ok());
  w.Pump(&now);
  EXPECT_EQ(w.mem[0], 2);
  EXPECT_EQ(w.rx.counters()[regs::kRxStaleEpoch], 0u);

  // A region for a /16 admits a second host of that subnet on its own stream.
  Pair m;
  m.b.Region(0, kMemBase, kRegionBytes, 0xAC130000, 0xFFFF0000);
  ASSERT_TRUE(m.tx.Store(8, Bytes(4, 7)).ok());
  m.Pump(&now, kIpC);
  EXPECT_EQ(m.mem[8], 7);
  EXPECT_EQ(m.rx.counters()[regs::kRxDenied], 0u);

  // Sparse first-DW enables (0101) from a packet built by hand: bytes 1 and 3 untouched.
  wire::Packet pkt;
  pkt.tlp = wire::TlpHeader::ForBytes(wire::kFmtTypeMWr64, kMemBase + 64, 4);
  pkt.tlp.first_be = 0x5;
  pkt.payload = {0xA0, 0xA1, 0xA2, 0xA3};
  Pair s;
  std::fill(s.mem.begin(), s.mem.end(), 0xEE);
  auto reply = s.rx.OnDatagram(kIpA, *wire::Encode(pkt));
  EXPECT_EQ(wire::Decode(reply)->type, wire::PacketType::kAck);
  EXPECT_EQ(std::vector<uint8_t>(s.mem.begin() + 64, s.mem.begin() + 68),
            (std::vector<uint8_t>{0xA0, 0xEE, 0xA2, 0xEE}));
}

TEST(IpnumaModel, MalformedAndDisabledAreDroppedWithoutReply) {
  Pair p;
  EXPECT_TRUE(p.rx.OnDatagram(kIpA, Bytes(40, 0)).empty());
  EXPECT_TRUE(p.rx.OnDatagram(kIpA, {}).empty());
  EXPECT_EQ(p.rx.counters()[regs::kRxMalformed], 2u);
  EXPECT_FALSE(p.tx.OnDatagram(kIpB, Bytes(3, 0), 0).ok());
  EXPECT_EQ(p.tx.counters()[regs::kRxMalformed], 1u);
  ASSERT_TRUE(p.tx.Store(0, Bytes(4, 9)).ok());
  auto out = p.tx.Poll(0);
  p.b.Local(kIpB, /*enable=*/false);
  EXPECT_TRUE(p.rx.OnDatagram(kIpA, out[0].bytes).empty());
  EXPECT_EQ(p.rx.counters()[regs::kRxDisabled], 1u);
  EXPECT_EQ(p.mem[0], 0);
}

// A WRITE another transmitter of the NIC sent (the emulator's kernel path),
// encoded here from the wire format alone.
std::vector<uint8_t> ForeignWrite(uint16_t epoch, uint32_t seq, uint64_t remote, const std::vector<uint8_t>& data,
                                  wire::PacketType type = wire::PacketType::kWrite) {
  wire::Packet pkt;
  pkt.type = type;
  pkt.epoch = epoch;
  pkt.seq = seq;
  pkt.tlp = wire::TlpHeader::ForBytes(type == wire::PacketType::kWrite ? wire::kFmtTypeMWr64 : wire::kFmtTypeMRd64,
                                      remote, static_cast<uint32_t>(data.size()));
  if (type == wire::PacketType::kWrite) {
    pkt.payload.assign(4u * pkt.tlp.length_dw, 0);
    std::memcpy(pkt.payload.data() + (remote & 3), data.data(), data.size());
  }
  return wire::Encode(pkt).value();
}

TEST(IpnumaModel, AdoptedWritesAreRetransmittedAndAckedLikeOwnAndOnlyTheNextIsTaken) {
  Pair p(/*retry=*/3, /*max_payload=*/0, /*timeout_ns=*/5'000);
  uint64_t now = 0;
  const MacAddr mac{{2, 0, 0, 0, 0, 1}};
  ASSERT_TRUE(p.tx.Store(0, Bytes(64, 0x11)).ok());
  p.Pump(&now);
  auto streams = p.tx.Streams(now);
  ASSERT_EQ(streams.size(), 1u);
  EXPECT_EQ(streams[0].ip, kIpB);
  EXPECT_EQ(streams[0].base, 1u);
  EXPECT_EQ(streams[0].next, 1u);
  EXPECT_EQ(streams[0].unsent, 0u);
  const uint16_t epoch = streams[0].epoch;

  // Only the stream's next sequence, of its epoch, as a WRITE, is taken.
  const auto data = Bytes(5, 0x22);
  EXPECT_FALSE(p.tx.Adopt(kIpB, mac, 1, 130, 5, ForeignWrite(epoch, 0, kMemBase + 130, data), now).ok());
  EXPECT_FALSE(p.tx.Adopt(kIpB, mac, 1, 130, 5, ForeignWrite(epoch, 2, kMemBase + 130, data), now).ok());
  EXPECT_FALSE(p.tx.Adopt(kIpB, mac, 1, 130, 5, ForeignWrite(epoch + 1, 1, kMemBase + 130, data), now).ok());
  EXPECT_FALSE(
      p.tx.Adopt(kIpB, mac, 1, 130, 5, ForeignWrite(epoch, 1, kMemBase + 128, Bytes(8, 0), wire::PacketType::kReadRequest), now)
          .ok());
  EXPECT_FALSE(p.tx.Adopt(kIpC, mac, 1, 130, 5, ForeignWrite(epoch, 1, kMemBase + 130, data), now).ok());
  EXPECT_EQ(p.tx.Outstanding(), 0u);
  const auto adopted = ForeignWrite(epoch, 1, kMemBase + 130, data);
  ASSERT_TRUE(p.tx.Adopt(kIpB, mac, 1, 130, 5, adopted, now).ok());
  EXPECT_EQ(p.tx.Streams(now)[0].next, 2u);
  EXPECT_EQ(p.tx.Outstanding(), 1u);
  EXPECT_TRUE(p.tx.Poll(now).empty()) << "an adopted packet was sent already";

  // It was lost: at the deadline it goes again, byte for byte, and is acked.
  EXPECT_TRUE(p.tx.Streams(now + 4'999)[0].retransmit_due == false);
  EXPECT_TRUE(p.tx.Streams(now + 5'000)[0].retransmit_due);
  now += 5'000;
  auto out = p.tx.Poll(now);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].bytes, adopted);
  EXPECT_EQ(out[0].dst_mac, mac);
  const auto reply = p.rx.OnDatagram(kIpA, out[0].bytes);
  ASSERT_TRUE(p.tx.OnDatagram(kIpB, reply, now).ok());
  EXPECT_EQ(p.tx.Outstanding(), 0u);
  EXPECT_EQ(p.mem[130], 0x22);
  EXPECT_EQ(p.mem[134], 0x22);
  EXPECT_EQ(p.mem[135], 0) << "byte enables kept the neighbour";
  EXPECT_EQ(p.tx.counters()[regs::kTxWrites], 1u) << "the adopted packet was counted by its own sender";
  EXPECT_EQ(p.tx.counters()[regs::kRetransmits], 1u);

  // Not while one of the stream's own packets waits unsent, nor behind a read in flight (shown), nor when down.
  ASSERT_TRUE(p.tx.Load(0, 4).ok());
  EXPECT_EQ(p.tx.Streams(now)[0].unsent, 1u);
  EXPECT_FALSE(p.tx.Adopt(kIpB, mac, 1, 0, 4, ForeignWrite(epoch, 3, kMemBase, Bytes(4, 1)), now).ok());
  ASSERT_EQ(p.tx.Poll(now).size(), 1u);
  EXPECT_TRUE(p.tx.Streams(now)[0].read_in_flight);
  for (now += 1000; now < 1'000'000; now += 1000) p.tx.Poll(now);
  ASSERT_TRUE(p.tx.Streams(now)[0].down);
  EXPECT_FALSE(p.tx.Streams(now)[0].retransmit_due);
  EXPECT_FALSE(p.tx.Adopt(kIpB, mac, 1, 0, 4, ForeignWrite(epoch, 3, kMemBase, Bytes(4, 1)), now).ok());
}

}  // namespace
}  // namespace fibnic::ipnuma_model
