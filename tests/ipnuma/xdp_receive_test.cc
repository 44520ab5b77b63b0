// ipnuma-emu's kernel receive path (ipnuma/xdp/ipnuma_rx.bpf.c) on real
// frames, held to the contract's model: a veth pair in a network namespace of
// its own, the program attached to one end (skb and native mode), BAR0 and
// host memory in BPF maps as ipnumad and the emulator share them. Random
// requests (in order, duplicates, gaps, new and stale epochs, too many
// sources, reads, denied and unmapped ranges, byte enables, broken frames),
// with CONTROL and REGION entries changed live. Every frame's outcome is
// seen: the answer on the sender's end, a read handed up through the ring, a
// frame passed up unchanged, or a drop counted in BAR0. After each one, host
// memory equals the model's and BAR0's counters the model's.
//
// Needs root (a network namespace, BPF maps, XDP); fails saying so otherwise.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <thread>

#include "device/ipnuma_model.h"
#include "device/ipnuma_regs.h"
#include "device/ipnuma_wire.h"
#include "ipnuma/emu_frames.h"
#include "ipnuma/xdp_receive.h"
#include "tests/ipnuma/xdp_frames.h"
#include "tests/support/parse.h"
#include "tests/support/test_seed.h"

namespace fibnic::ipnuma {
namespace {

namespace regs = ::fibnic::ipnuma_regs;
namespace wire = ::fibnic::ipnuma_wire;
namespace model = ::fibnic::ipnuma_model;
using fibnic::testing::Ip;
using fibnic::testing::Mac;
using Bytes = std::vector<uint8_t>;

constexpr uint64_t kPoolBase = 0x40000000;
constexpr size_t kPoolBytes = 1 << 20;
constexpr uint16_t kPort = 4790;
constexpr uint16_t kPcidEntries = 4;  // receive streams: a fifth source finds the table full
constexpr uint16_t kRegions = 8;
const MacAddr kNicMac = Mac("02:00:00:00:00:02");
const MacAddr kPeerMac = Mac("02:00:00:00:00:01");
const uint32_t kNicIp = Ip("10.9.0.2");
constexpr int kSources = 6;

void Put32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }
uint64_t Get64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

class XdpReceiveTest : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    // A network namespace of this process's own: the veth pair and whatever
    // it is attached to go with the process.
    ASSERT_EQ(unshare(CLONE_NEWNET), 0) << std::strerror(errno);
    ASSERT_EQ(system("ip link set lo up && ip link add x0 type veth peer name x1 && "
                     "sysctl -qw net.ipv6.conf.x0.disable_ipv6=1 net.ipv6.conf.x1.disable_ipv6=1 && "
                     "ip link set x0 address 02:00:00:00:00:01 && ip link set x1 address 02:00:00:00:00:02 && "
                     "ip link set x0 up && ip link set x1 up"),
              0);
  }

  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root: a network namespace, BPF maps and an XDP program";
    regs::Caps caps;
    caps.pages = 512;
    caps.pcid_entries = kPcidEntries;
    caps.region_entries = kRegions;
    auto bar = PageMap::Make(caps.bar0_bytes());
    auto pool = PageMap::Make(kPoolBytes);
    ASSERT_TRUE(bar && pool) << "cannot make mmapable BPF maps: " << std::strerror(errno);
    bar_ = *bar;
    pool_ = *pool;
    uint8_t* b = bar_.data;
    Put32(b + regs::kOffId, regs::kId);
    Put32(b + regs::kOffVersion, regs::kVersion);
    Put32(b + regs::kOffCaps0, caps.caps0());
    Put32(b + regs::kOffCaps1, caps.caps1());
    regs::LocalRegs local;
    local.control = regs::kControlEnable;
    local.local_ip = kNicIp;
    local.netmask = Ip("255.255.255.0");
    local.local_mac = kNicMac;
    local.udp_port = kPort;
    for (auto [off, v] : regs::EncodeLocalRegs(local)) Put32(b + off, v);
    XdpReceive::Config c;
    c.bar0_map_fd = bar_.fd;
    c.pool_map_fd = pool_.fd;
    c.pool_base = kPoolBase;
    c.pool_bytes = kPoolBytes;
    c.pcid_entries = kPcidEntries;
    c.region_entries = kRegions;
    c.interface = "x1";
    c.native = GetParam();
    // Native XDP on a veth takes frames that fit a page: the 1500-byte MTU
    // a deployment's 1 KiB MAX_PAYLOAD implies. In skb mode, the contract's
    // largest packet (4 KiB of data).
    ASSERT_EQ(system(GetParam() ? "ip link set x0 mtu 1500 && ip link set x1 mtu 1500"
                                : "ip link set x0 mtu 4200 && ip link set x1 mtu 4200"),
              0);
    // A native XDP_TX into a veth is received by the far end's NAPI, which
    // runs while that end has an XDP program (GRO on did not bring the
    // answers through on 6.18): there, the peer NIC's own.
    const std::string far_end = GetParam() ? std::string("ip link set x0 xdpdrv obj ") + XDP_PASS_OBJECT + " sec xdp"
                                           : std::string("ip link set x0 xdp off");
    ASSERT_EQ(system(far_end.c_str()), 0);
    auto x = XdpReceive::Attach(c);
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    rx_ = std::move(x).value();
    s0_ = RawSocket("x0");
    s1_ = RawSocket("x1");
    ASSERT_TRUE(s0_ >= 0 && s1_ >= 0) << std::strerror(errno);
  }

  void TearDown() override {
    rx_.reset();
    if (s0_ >= 0) close(s0_);
    if (s1_ >= 0) close(s1_);
    bar_.Close();
    pool_.Close();
  }

  void SetRegion(uint32_t i, const regs::RegionEntry& r) {
    auto e = r.Encode();
    std::memcpy(bar_.data + regs::RegionOffset(i), e.data(), e.size());
  }

  PageMap bar_, pool_;
  std::unique_ptr<XdpReceive> rx_;
  int s0_ = -1, s1_ = -1;
};

struct Source {
  uint32_t ip = 0;
  uint16_t epoch = 1;
  uint32_t next = 0;
};

TEST_P(XdpReceiveTest, RandomRequestsMatchTheModel) {
  std::mt19937_64 rng(fibnic::testing::TestSeed(GetParam() ? "xdp receive, native" : "xdp receive, skb"));
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };

  std::vector<Source> src(kSources);
  for (int i = 0; i < kSources; ++i) src[i].ip = Ip("10.9.0.10") + static_cast<uint32_t>(i);
  // Regions: some for one source, some for a /29 of them, one for nobody's address.
  for (uint32_t i = 0; i < kRegions; ++i) {
    regs::RegionEntry r;
    r.base = kPoolBase + 0x20000 * i;
    r.length = 0x10000 + 0x40 * pick(0x100);
    r.peer_ip = i == 7 ? Ip("192.0.2.1") : src[i % kSources].ip;
    r.mask = i % 3 == 0 ? 0xfffffff8 : 0xffffffff;
    r.flags = regs::kRegionValid;
    SetRegion(i, r);
  }

  Bytes model_mem(kPoolBytes, 0);
  model::Receiver want(std::span<const uint8_t>(bar_.data, bar_.size), model_mem, kPoolBase);
  // Reads the kernel accepted run here, on its memory, as the emulator's would.
  model::Receiver reads(std::span<const uint8_t>(bar_.data, bar_.size), std::span<uint8_t>(pool_.data, kPoolBytes),
                        kPoolBase);
  uint64_t passed_malformed = 0;
  uint16_t ip_id = 0;

  // XDP_RECEIVE_STEPS: fewer in the emulated guest of the kernel 6.1 run.
  const char* env_steps = std::getenv("XDP_RECEIVE_STEPS");
  const int steps = env_steps ? std::atoi(env_steps) : 20000;
  const uint64_t scale = static_cast<uint64_t>(steps) / 1000;  // what the run must reach, per 1000 steps
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    // Live register changes, as ipnumad makes them.
    if (chance(0.02)) {
      uint32_t ctl = bar_.data[regs::kOffControl];
      Put32(bar_.data + regs::kOffControl, ctl ^ regs::kControlEnable);
    } else if (!(bar_.data[regs::kOffControl] & regs::kControlEnable) && chance(0.5)) {
      Put32(bar_.data + regs::kOffControl, regs::kControlEnable);
    }
    // A revoke, and the region granted again a few steps later.
    if (chance(0.02)) bar_.data[regs::RegionOffset(static_cast<uint32_t>(pick(kRegions))) + 24] &= ~regs::kRegionValid;
    if (chance(0.1)) bar_.data[regs::RegionOffset(static_cast<uint32_t>(pick(kRegions))) + 24] |= regs::kRegionValid;

    Source& s = src[pick(kSources)];
    wire::Packet p;
    p.type = chance(0.15) ? wire::PacketType::kReadRequest : wire::PacketType::kWrite;
    p.epoch = s.epoch;
    const double r = std::uniform_real_distribution<double>(0, 1)(rng);
    if (r < 0.75) {
      p.seq = s.next;
    } else if (r < 0.85) {
      p.seq = s.next - 1 - static_cast<uint32_t>(pick(3));  // a duplicate
    } else if (r < 0.9) {
      p.seq = s.next + 1 + static_cast<uint32_t>(pick(3));  // after a gap
    } else if (r < 0.95) {
      s.epoch = static_cast<uint16_t>(s.epoch + 1);  // a new stream
      s.next = 0;
      p.epoch = s.epoch;
      p.seq = chance(0.8) ? 0 : 5;
    } else {
      p.epoch = static_cast<uint16_t>(s.epoch - 1 - pick(3));  // a stale stream
      p.seq = static_cast<uint32_t>(pick(4));
    }
    // The range: mostly inside a region, else anywhere in or near the pool.
    const uint32_t most = GetParam() ? 1024 : 4096;
    const uint32_t len = chance(0.3) ? 1 + static_cast<uint32_t>(pick(8)) : 1 + static_cast<uint32_t>(pick(most - 3));
    uint64_t at = chance(0.75) ? kPoolBase + 0x20000 * pick(kRegions) + pick(0x10000)
                               : kPoolBase - 0x1000 + pick(kPoolBytes + 0x2000);
    p.tlp = wire::TlpHeader::ForBytes(p.type == wire::PacketType::kWrite ? wire::kFmtTypeMWr64 : wire::kFmtTypeMRd64, at,
                                      len);
    if (p.tlp.length_dw > wire::kMaxLengthDw) p.tlp = wire::TlpHeader::ForBytes(p.tlp.fmt_type, at, 8);
    if (p.type == wire::PacketType::kWrite) {
      p.payload.resize(4u * p.tlp.length_dw);
      for (auto& x : p.payload) x = static_cast<uint8_t>(pick(256));
    }
    auto enc = wire::Encode(p);
    ASSERT_TRUE(enc.ok()) << enc.status().ToString();
    Bytes payload = *enc;
    if (chance(0.02) && p.tlp.length_dw >= 3) payload[wire::kOffTlp + 7] = 0x25;  // non-contiguous byte enables
    if (chance(0.02)) payload[wire::kOffFlags] = 1;
    FrameAddress a{kPeerMac, kNicMac, s.ip, kNicIp, 40000, kPort};
    Bytes frame = BuildUdpFrame(a, ip_id++, payload);
    if (chance(0.03)) frame[pick(frame.size())] ^= static_cast<uint8_t>(1 + pick(255));  // anything, checksums too
    if (chance(0.01)) frame.resize(frame.size() - 1 - pick(8));
    if (frame.size() < 60) frame.resize(60, 0);  // Ethernet's shortest; the IP length says where the datagram ends

    // What the model does with it.
    const ParsedFrame f = ParseUdpFrame(frame, kNicMac, kNicIp, kPort);
    Bytes reply;
    bool request = false, malformed = false;
    if (f.verdict == FrameVerdict::kOurs) {
      auto d = wire::Decode(f.payload);
      request = d.ok() && wire::IsRequest(d->type);
      malformed = !d.ok();
      reply = want.OnDatagram(f.from.src_ip, f.payload);  // counts what its codec refuses; an answer is not its
    }
    if (!reply.empty() && p.seq == s.next && p.epoch == s.epoch) s.next++;

    ASSERT_EQ(send(s0_, frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size())) << std::strerror(errno);
    if (!request) {
      // Not the kernel's: it reaches the stack unchanged (the emulator's parser
      // then counts a broken one).
      auto up = Receive(s1_, [&](const Bytes& g) { return g == frame; }, 2000);
      ASSERT_TRUE(up.has_value()) << "a frame the program should pass up did not arrive";
      if (malformed) passed_malformed++;  // the model's codec counts it; a broken frame is the parser's to count
    } else if (!reply.empty() && reply[wire::kOffType] == static_cast<uint8_t>(wire::PacketType::kReadCompletion)) {
      std::optional<Bytes> got;
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!got && std::chrono::steady_clock::now() < end) {
        auto n = rx_->Drain([&](const AcceptedRead& rd) {
          auto rp = wire::Decode(rd.packet);
          ASSERT_TRUE(rp.ok());
          EXPECT_EQ(rd.src_ip, f.from.src_ip);
          EXPECT_EQ(rd.src_mac, f.from.src_mac);
          EXPECT_EQ(rd.src_port, f.from.src_port);
          got = reads.Execute(rd.src_ip, *rp, rd.epoch, rd.ack_seq);
        });
        ASSERT_TRUE(n.ok());
        if (!got) std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
      ASSERT_TRUE(got.has_value()) << "no read handed up";
      EXPECT_EQ(*got, reply) << "read completion";
    } else if (!reply.empty()) {
      auto ans = Receive(s0_, [&](const Bytes& g) { return g.size() > 12 && std::memcmp(g.data() + 6, kNicMac.b.data(), 6) == 0; },
                         2000);
      ASSERT_TRUE(ans.has_value()) << "no answer";
      // Back to where the request came from (a broken byte may have changed its source MAC).
      const ParsedFrame af = ParseUdpFrame(*ans, f.from.src_mac, f.from.src_ip, f.from.src_port);
      ASSERT_EQ(af.verdict, FrameVerdict::kOurs) << "the answer's framing (addresses, checksums): " << [&] {
        std::string h;
        for (uint8_t x : *ans) h += "0123456789abcdef"[x >> 4], h += "0123456789abcdef"[x & 15];
        return h;
      }();
      EXPECT_EQ(af.from.src_ip, kNicIp);
      EXPECT_EQ(af.from.src_port, kPort);
      EXPECT_EQ(Bytes(af.payload.begin(), af.payload.end()), reply);
    }
    // BAR0's counters: the program's, the reads' and the passed broken frames'
    // together are the model's.
    auto counters_match = [&] {
      for (int i = 0; i < regs::kCounterCount; ++i) {
        if (Get64(bar_.data + regs::kOffCounters + 8 * i) + reads.counters().base.v[i] != want.counters().base.v[i])
          return false;
      }
      for (int i = 0; i < regs::kExtCounterCount; ++i) {
        uint64_t have = Get64(bar_.data + regs::kOffExtCounters + 8 * i) + reads.counters().ext.v[i];
        if (i == regs::kRxMalformed) have += passed_malformed;
        if (have != want.counters().ext.v[i]) return false;
      }
      return true;
    };
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (!counters_match() && std::chrono::steady_clock::now() < end) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    if (!counters_match()) {
      ADD_FAILURE() << "after a " << wire::PacketTypeName(p.type) << " seq " << p.seq << " epoch " << p.epoch
                    << (request ? " (a request)" : " (not a request)") << ", model answer of " << reply.size()
                    << " bytes";
      for (int i = 0; i < regs::kCounterCount; ++i)
        ADD_FAILURE() << regs::kCounterNames[i] << ": kernel " << Get64(bar_.data + regs::kOffCounters + 8 * i)
                      << " + reads " << reads.counters().base.v[i] << ", model " << want.counters().base.v[i];
      for (int i = 0; i < regs::kExtCounterCount; ++i)
        ADD_FAILURE() << regs::kExtCounterNames[i] << ": kernel " << Get64(bar_.data + regs::kOffExtCounters + 8 * i)
                      << " + reads " << reads.counters().ext.v[i] << " (+ passed malformed " << passed_malformed
                      << "), model " << want.counters().ext.v[i];
      return;
    }
    ASSERT_EQ(std::memcmp(pool_.data, model_mem.data(), kPoolBytes), 0) << "host memory differs from the model's";
  }
  std::cout << "model:";
  for (int i = 0; i < regs::kCounterCount; ++i) std::cout << " " << regs::kCounterNames[i] << "=" << want.counters().base.v[i];
  for (int i = 0; i < regs::kExtCounterCount; ++i)
    if (want.counters().ext.v[i]) std::cout << " " << regs::kExtCounterNames[i] << "=" << want.counters().ext.v[i];
  std::cout << "; passed up broken " << passed_malformed << std::endl;
  // The run reached what it is for.
  EXPECT_GT(want.counters()[regs::kRxWrites], 50u * scale);
  EXPECT_GT(want.counters()[regs::kRxDenied], 25u * scale);
  EXPECT_GT(want.counters()[regs::kRxReads], 5u * scale);
  EXPECT_GT(want.counters()[regs::kRxReadsDenied], 5u * scale);
  EXPECT_GT(want.counters()[regs::kRxDuplicate], 25u * scale);
  EXPECT_GT(want.counters()[regs::kRxOutOfOrder], 25u * scale);
  EXPECT_GT(want.counters()[regs::kRxStaleEpoch], 10u * scale);
  EXPECT_GT(want.counters()[regs::kRxNoPeerState], 25u * scale);
  EXPECT_GT(want.counters()[regs::kRxDisabled], 10u * scale);
  EXPECT_GT(passed_malformed, 10u * scale);
}

INSTANTIATE_TEST_SUITE_P(Modes, XdpReceiveTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Native" : "Skb"; });

}  // namespace
}  // namespace fibnic::ipnuma
