// ipnuma-emu's NIC without a network: its Ethernet/IPv4/UDP framing, and two
// EmuNics on files wired back to back through a lossy in-process channel,
// held to a plain byte array to which the same writes were applied.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "device/ipnuma_regs.h"
#include "device/ipnuma_wire.h"
#include "hwif/file_bar.h"
#include "ipnuma/emu_frames.h"
#include "ipnuma/emu_nic.h"
#include "ipnuma/emu_rings.h"
#include "ipnuma/emu_sent_order.h"
#include "ipnuma/nic.h"
#include "ipnuma/nic_memory_bar.h"
#include "tests/support/parse.h"
#include "tests/support/test_seed.h"

namespace fibnic::ipnuma {
namespace {

using fibnic::testing::Ip;
using fibnic::testing::Mac;

namespace fs = std::filesystem;
using Frames = std::vector<std::vector<uint8_t>>;

FrameAddress AtoB() {
  return FrameAddress{Mac("02:00:00:00:00:01"), Mac("02:00:00:00:00:02"), Ip("10.0.0.1"), Ip("10.0.0.2"), 4790, 4790};
}

TEST(IpnumaEmuFrames, BuiltFramesParseBackAndBrokenOnesAreMalformed) {
  const std::vector<uint8_t> payload = {1, 2, 3, 4, 5};  // odd length: the checksum pads
  const auto f = BuildUdpFrame(AtoB(), 7, payload);
  const auto me = AtoB();
  auto parse = [&](std::span<const uint8_t> fr) { return ParseUdpFrame(fr, me.dst_mac, me.dst_ip, me.dst_port); };
  const ParsedFrame ok = parse(f);
  ASSERT_EQ(ok.verdict, FrameVerdict::kOurs);
  EXPECT_EQ(std::vector<uint8_t>(ok.payload.begin(), ok.payload.end()), payload);
  EXPECT_EQ(ok.from.src_ip, Ip("10.0.0.1"));
  EXPECT_EQ(ok.from.src_mac, Mac("02:00:00:00:00:01"));
  EXPECT_EQ(ok.from.src_port, 4790);
  // Ethernet padding after the datagram is not payload.
  auto padded = f;
  padded.resize(64, 0);
  EXPECT_EQ(parse(padded).payload.size(), payload.size());

  auto broken = [&](size_t at, uint8_t x) {
    auto g = f;
    g[at] ^= x;
    return parse(g).verdict;
  };
  EXPECT_EQ(broken(f.size() - 1, 0x01), FrameVerdict::kMalformed);  // payload byte: UDP checksum
  EXPECT_EQ(broken(14 + 8, 0x01), FrameVerdict::kMalformed);        // TTL: IP header checksum
  EXPECT_EQ(broken(14 + 6, 0x20), FrameVerdict::kMalformed);        // MF: a fragment
  EXPECT_EQ(broken(14, 0x01), FrameVerdict::kMalformed);            // IHL 6: options
  EXPECT_EQ(broken(0, 0x01), FrameVerdict::kNotOurs);               // another MAC
  EXPECT_EQ(broken(12, 0x08), FrameVerdict::kNotOurs);              // another EtherType
  EXPECT_EQ(broken(14 + 23, 0x01), FrameVerdict::kNotOurs);         // another UDP port
  EXPECT_EQ(parse(std::span(f).first(f.size() - 1)).verdict, FrameVerdict::kMalformed);  // truncated
  auto no_sum = f;
  no_sum[14 + 20 + 6] = no_sum[14 + 20 + 7] = 0;
  EXPECT_EQ(parse(no_sum).verdict, FrameVerdict::kMalformed);  // the contract requires the checksum
}

regs::Caps Model() { return {.pages = 64, .pcid_entries = 16, .region_entries = 8}; }

constexpr uint64_t kPoolBase = 0x200000000;
constexpr uint64_t kPoolBytes = 1 << 20;
constexpr uint64_t kExportBase = kPoolBase + 0x10000;  // B's export: 64 pages
constexpr uint32_t kPcidB = 3;

// A host: BAR0, page region and pool files, the BAR0 written as ipnumad would.
struct Host {
  fs::path dir;
  std::unique_ptr<MappedFile> bar0, pages, pool;
  std::unique_ptr<EmuNic> nic;

  void Create(const fs::path& d, const char* ip, const char* mac) {
    dir = d;
    fs::create_directories(dir);
    const auto id = IdentityBlock(Model());
    std::ofstream(dir / "bar0", std::ios::binary).write(reinterpret_cast<const char*>(id.data()), id.size());
    fs::resize_file(dir / "bar0", Model().bar0_bytes());
    std::ofstream(dir / "pool", std::ios::binary);
    fs::resize_file(dir / "pool", kPoolBytes);
    bar0 = MappedFile::Open(dir / "bar0").value();
    regs::LocalRegs r;
    r.control = regs::kControlEnable;
    r.local_ip = Ip(ip);
    r.netmask = Ip("255.255.255.0");
    r.local_mac = Mac(mac);
    r.udp_port = 4790;
    r.retx_timeout_ns = 5000;
    for (auto [off, v] : regs::EncodeLocalRegs(r)) std::memcpy(bar0->data() + off, &v, 4);
    nic = EmuNic::Open({dir / "bar0", dir / "pages", dir / "pool", kPoolBase}).value();
    pages = MappedFile::Open(dir / "pages").value();
    pool = MappedFile::Open(dir / "pool").value();
  }
  void Put(uint64_t off, std::span<const uint8_t> b) { std::memcpy(bar0->data() + off, b.data(), b.size()); }
  uint64_t Counter(uint32_t off) const {
    uint64_t v;
    std::memcpy(&v, bar0->data() + off, 8);
    return v;
  }
};

class EmuPair : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("ipnuma-emu-nic-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    a_.Create(root_ / "a", "10.0.0.1", "02:00:00:00:00:01");
    b_.Create(root_ / "b", "10.0.0.2", "02:00:00:00:00:02");
    // A: PC ID 3 is B; pages 0..63 map B's export. B: a REGION admits A.
    a_.Put(regs::PcidOffset(kPcidB), regs::PcidEntry{Ip("10.0.0.2"), Mac("02:00:00:00:00:02"), regs::kPcidValid}.Encode());
    for (uint32_t p = 0; p < Model().pages; ++p) {
      const uint64_t w = regs::PagemapEntry{kExportBase + 4096ull * p, kPcidB}.Encode();
      std::memcpy(a_.bar0->data() + regs::PagemapOffset(p), &w, 8);
    }
    b_.Put(regs::RegionOffset(1), regs::RegionEntry{kExportBase, 64 * 4096, Ip("10.0.0.1"), Ip("255.255.255.255"),
                                                    regs::kRegionValid}.Encode());
  }
  void TearDown() override { fs::remove_all(root_); }

  // Carries frames both ways (each lost with probability loss) and advances
  // the model clock until A answers the doorbell; its status.
  Status Run(double loss) {
    Frames from_a, from_b;
    for (int step = 0; step < 2'000'000; ++step) {
      a_.nic->Poll(now_, from_a);
      b_.nic->Poll(now_, from_b);
      for (int round = 0; round < 4 && (!from_a.empty() || !from_b.empty()); ++round) {
        Frames to_b = std::exchange(from_a, {}), to_a = std::exchange(from_b, {});
        for (auto& f : to_b)
          if (coin_(rng_) >= loss) b_.nic->OnFrame(f, now_, from_b);
        for (auto& f : to_a)
          if (coin_(rng_) >= loss) a_.nic->OnFrame(f, now_, from_a);
      }
      for (DoorbellDone& d : a_.nic->TakeDone()) return d.status;
      now_ += 1000;
    }
    return Internal("no answer");
  }
  void Ring(DoorbellOp op, uint64_t off, std::span<const uint8_t> data) {
    std::memcpy(a_.pages->data() + off, data.data(), data.size());
    a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(op), static_cast<uint32_t>(data.size()), off});
  }
  Status Write(uint64_t off, std::span<const uint8_t> data, double loss = 0) {
    Ring(DoorbellOp::kWrite, off, data);
    return Run(loss);
  }

  fs::path root_;
  Host a_, b_;
  uint64_t now_ = 0;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> coin_{0, 1};
};

TEST_F(EmuPair, RandomWritesThroughALossyWireEqualTheOracle) {
  const uint64_t seed = testing::TestSeed("EmuPair");
  rng_.seed(seed);
  std::vector<uint8_t> oracle(64 * 4096, 0);
  for (int i = 0; i < 60; ++i) {
    const uint32_t len = std::min<uint32_t>(
        65536, 1 + static_cast<uint32_t>(std::exp2(std::uniform_real_distribution<double>(0, 16)(rng_))));
    const uint64_t off = std::uniform_int_distribution<uint64_t>(0, oracle.size() - len)(rng_);
    std::vector<uint8_t> data(len);
    for (auto& b : data) b = static_cast<uint8_t>(rng_());
    ASSERT_TRUE(Write(off, data, i < 20 ? 0.0 : i < 40 ? 0.01 : 0.10).ok()) << "write " << i;
    std::memcpy(oracle.data() + off, data.data(), len);
  }
  EXPECT_EQ(0, std::memcmp(b_.pool->data() + (kExportBase - kPoolBase), oracle.data(), oracle.size()));
  b_.nic->Publish();
  EXPECT_GT(b_.Counter(regs::kOffCounters + 8 * regs::kRxWrites), 0u);
  EXPECT_EQ(b_.Counter(regs::kOffCounters + 8 * regs::kRxDenied), 0u);
}

TEST_F(EmuPair, MalformedFramesChangeNothingAndAreCounted) {
  const std::vector<uint8_t> data(100, 0xab);
  ASSERT_TRUE(Write(0, data).ok());
  const std::vector<uint8_t> pool(b_.pool->data(), b_.pool->data() + kPoolBytes);
  // A WRITE with a broken UDP checksum, one whose payload the codec refuses,
  // and traffic of another host: only the first two are counted.
  std::vector<uint8_t> junk(44, 0x55);
  auto bad_sum = BuildUdpFrame(AtoB(), 1, junk);
  bad_sum.back() ^= 1;
  Frames out;
  b_.nic->OnFrame(bad_sum, now_, out);
  b_.nic->OnFrame(BuildUdpFrame(AtoB(), 2, junk), now_, out);
  auto other = AtoB();
  other.dst_ip = Ip("10.0.0.9");
  b_.nic->OnFrame(BuildUdpFrame(other, 3, junk), now_, out);
  EXPECT_TRUE(out.empty());
  b_.nic->Publish();
  EXPECT_EQ(b_.Counter(regs::kOffExtCounters + 8 * regs::kRxMalformed), 2u);
  EXPECT_EQ(0, std::memcmp(b_.pool->data(), pool.data(), kPoolBytes));
}

TEST_F(EmuPair, RevokedRegionDeniesTheNextWriteAndAnUnmappedPageIsRefused) {
  const std::vector<uint8_t> data(300, 0x11);
  ASSERT_TRUE(Write(4096, data).ok());
  b_.bar0->data()[regs::RegionOffset(1) + regs::kRegionFlagsWord] = 0;  // VALID=0: revoked
  const Status denied = Write(8192, data);
  EXPECT_EQ(denied.code(), StatusCode::kPermissionDenied) << denied.ToString();
  b_.nic->Publish();
  EXPECT_EQ(b_.Counter(regs::kOffCounters + 8 * regs::kRxDenied), 5u);  // 300 bytes at 0x2000: 5 packets of 64
  EXPECT_EQ(b_.pool->data()[kExportBase - kPoolBase + 8192], 0);
  // A unmaps page 5: refused locally, at once, nothing sent.
  const uint64_t zero = 0;
  std::memcpy(a_.bar0->data() + regs::PagemapOffset(5), &zero, 8);
  const Status unmapped = Write(5 * 4096, data);
  EXPECT_EQ(unmapped.code(), StatusCode::kNotFound) << unmapped.ToString();
}

TEST_F(EmuPair, SilentPeerGoesDownAndIsRefusedUntilReset) {
  const std::vector<uint8_t> data(64, 0x22);
  const Status down = Write(0, data, 1.0);  // every frame lost
  EXPECT_EQ(down.code(), StatusCode::kUnavailable) << down.ToString();
  a_.nic->Publish();
  EXPECT_EQ(a_.Counter(regs::kOffExtCounters + 8 * regs::kPeersDown), 1u);
  EXPECT_EQ(a_.Counter(regs::kOffCounters + 8 * regs::kRetransmits), 8u);  // RETRY_LIMIT 0 reads as 8
  uint32_t state;
  std::memcpy(&state, a_.bar0->data() + regs::PeerStateOffset(kPcidB), 4);
  EXPECT_EQ(state, regs::kPeerStateDown);
  EXPECT_EQ(Write(0, data).code(), StatusCode::kUnavailable);
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kResetPeer), 0, kPcidB});
  EXPECT_TRUE(Run(0).ok());
  EXPECT_TRUE(Write(0, data).ok());
  EXPECT_EQ(b_.pool->data()[kExportBase - kPoolBase], 0x22);
}

// ipnumad's reset through the BAR file: its write of 1 over DOWN clears the
// bit in the file (NicMemoryBar), and the NIC resets the stream at its next
// publish, as a device takes the write; until then stores stay refused.
TEST_F(EmuPair, DriversWriteOfOneThroughTheFileResetsTheStream) {
  const std::vector<uint8_t> data(64, 0x44);
  ASSERT_EQ(Write(0, data, 1.0).code(), StatusCode::kUnavailable);
  a_.nic->Publish();
  auto state = [&] {
    uint32_t s;
    std::memcpy(&s, a_.bar0->data() + regs::PeerStateOffset(kPcidB), 4);
    return s;
  };
  ASSERT_EQ(state(), regs::kPeerStateDown);
  a_.nic->Publish();  // published again unchanged: still down, nothing reset
  EXPECT_EQ(Write(0, data).code(), StatusCode::kUnavailable);
  NicMemoryBar driver(FileBar::Open((a_.dir / "bar0").string(), Model().bar0_bytes()).value());
  ASSERT_TRUE(driver.Write32(regs::PeerStateOffset(kPcidB), regs::kPeerStateDown).ok());
  EXPECT_EQ(state(), 0u);
  a_.nic->Publish();
  EXPECT_EQ(state(), 0u);
  EXPECT_TRUE(Write(0, data).ok());
  EXPECT_EQ(b_.pool->data()[kExportBase - kPoolBase], 0x44);
  a_.nic->Publish();
  EXPECT_EQ(a_.Counter(regs::kOffExtCounters + 8 * regs::kPeersDown), 1u);
}

TEST_F(EmuPair, PostedWritesAreNotAnsweredAndTheFlushTellsTheirFirstRefusal) {
  // Posted writes through a lossy wire land in order; only the flush answers.
  const std::vector<uint8_t> one(100, 0x31), two(100, 0x32), three(64, 0x33);
  Ring(DoorbellOp::kWritePosted, 0, one);
  Ring(DoorbellOp::kWritePosted, 50, two);
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  EXPECT_TRUE(Run(0.10).ok());
  EXPECT_TRUE(a_.nic->TakeDone().empty()) << "one answer for the flush, none for the posted writes";
  const uint8_t* rx = b_.pool->data() + (kExportBase - kPoolBase);
  EXPECT_EQ(rx[49], 0x31);
  EXPECT_EQ(rx[50], 0x32);
  EXPECT_EQ(rx[149], 0x32);
  // A refused posted write (unmapped page 5) and a denied one (revoked
  // region): the flush gives the first, the next flush nothing.
  const uint64_t zero = 0;
  std::memcpy(a_.bar0->data() + regs::PagemapOffset(5), &zero, 8);
  Ring(DoorbellOp::kWritePosted, 5 * 4096, three);
  b_.bar0->data()[regs::RegionOffset(1) + regs::kRegionFlagsWord] = 0;
  Ring(DoorbellOp::kWritePosted, 4096, three);
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  EXPECT_EQ(Run(0).code(), StatusCode::kNotFound);
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  EXPECT_TRUE(Run(0).ok());
  EXPECT_EQ(rx[4096], 0);
  // A client that goes away leaves no refusal behind for the next one.
  Ring(DoorbellOp::kWritePosted, 5 * 4096, three);
  a_.nic->Forget(1);
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  EXPECT_TRUE(Run(0).ok());
}

TEST_F(EmuPair, PostedWritesThroughTheRingGoInOrderAndBrokenEntriesAreRefusedAtTheFlush) {
  // The program's side of a ring, as libipnuma makes it.
  DoorbellRings rings;
  const int fd = ::memfd_create("ring-test", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, sizeof(DoorbellRing)), 0);
  // Unsealed, the program could shrink it under the emulator: refused.
  EXPECT_EQ(rings.Attach(1, ::dup(fd)).code(), StatusCode::kInvalidArgument);
  ASSERT_EQ(::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
  auto* ring = static_cast<DoorbellRing*>(::mmap(nullptr, sizeof(DoorbellRing), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(ring, MAP_FAILED);
  ASSERT_TRUE(rings.Attach(1, ::dup(fd)).ok());
  EXPECT_FALSE(rings.Attach(1, ::dup(fd)).ok()) << "one ring per connection";
  ::close(fd);
  auto post = [&](uint32_t op, uint64_t off, std::span<const uint8_t> data) {
    std::memcpy(a_.pages->data() + off, data.data(), data.size());
    ring->slot[ring->tail % kDoorbellRingSlots] = DoorbellRequest{op, static_cast<uint32_t>(data.size()), off};
    __atomic_store_n(&ring->tail, ring->tail + 1, __ATOMIC_RELEASE);
  };
  const auto posted = static_cast<uint32_t>(DoorbellOp::kWritePosted);
  auto flush = [&] {
    a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
    return Run(0.10);
  };

  // An emulator going to sleep tells the program to kick, unless a store is waiting.
  EXPECT_FALSE(rings.Sleep());
  EXPECT_EQ(ring->asleep, 1u);
  rings.Awake();
  EXPECT_EQ(ring->asleep, 0u);
  // More stores than the ring holds, drained as they come: they land in order.
  const uint8_t* rx = b_.pool->data() + (kExportBase - kPoolBase);
  std::vector<uint8_t> oracle(4096, 0);
  for (uint32_t i = 0; i < 3 * kDoorbellRingSlots; ++i) {
    const std::vector<uint8_t> v(8, static_cast<uint8_t>(i));
    post(posted, 4 * (i % 64), v);  // overlapping: the later store wins each byte
    std::memcpy(oracle.data() + 4 * (i % 64), v.data(), v.size());
    if (ring->tail - ring->head == kDoorbellRingSlots) {
      EXPECT_TRUE(rings.Sleep()) << "a waiting store keeps the emulator awake";
      rings.Awake();
      EXPECT_TRUE(rings.Drain(1, *a_.nic));
      EXPECT_EQ(ring->head, ring->tail);
    }
  }
  EXPECT_FALSE(rings.Drain(1, *a_.nic)) << "nothing left";
  EXPECT_TRUE(flush().ok());
  EXPECT_EQ(std::vector<uint8_t>(rx, rx + oracle.size()), oracle);
  // Only posted writes ride the ring; anything else is refused at the next flush.
  post(static_cast<uint32_t>(DoorbellOp::kWrite), 0, std::vector<uint8_t>(4, 1));
  EXPECT_TRUE(rings.Drain(1, *a_.nic));
  EXPECT_EQ(flush().code(), StatusCode::kInvalidArgument);
  // A tail past the ring's slots: nothing of it is taken, and the flush says why.
  __atomic_store_n(&ring->tail, ring->head + kDoorbellRingSlots + 1, __ATOMIC_RELEASE);
  EXPECT_TRUE(rings.Drain(1, *a_.nic));
  EXPECT_EQ(ring->head, ring->tail);
  EXPECT_EQ(flush().code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(flush().ok());
  rings.Detach(1);
  ::munmap(ring, sizeof(DoorbellRing));
}

// What the kernel transmit path hands the emulator: a packet it already sent
// (EmuNic::Adopt), and a store it passed up with its bytes (StorePosted).
TEST_F(EmuPair, AdoptedPacketsAreRetransmittedAndAnsweredAndPassedUpStoresKeepTheirBytes) {
  const uint8_t* rx = b_.pool->data() + (kExportBase - kPoolBase);
  // A store passed up: its bytes come with it, not from BAR2 (which the
  // program may have stored over since).
  std::memset(a_.pages->data(), 0x99, 100);
  a_.nic->StorePosted(1, 0, std::vector<uint8_t>(100, 0x41));
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  ASSERT_TRUE(Run(0).ok());
  EXPECT_EQ(rx[0], 0x41);
  EXPECT_EQ(rx[99], 0x41);

  // The kernel's WRITE, encoded from the wire format, at the stream's next sequence.
  auto sent = [&](uint64_t off, uint8_t v, uint32_t seq_delta = 0) {
    const auto streams = a_.nic->Streams(now_);
    EXPECT_EQ(streams.size(), 1u);
    ipnuma_wire::Packet pkt;
    pkt.type = ipnuma_wire::PacketType::kWrite;
    pkt.epoch = streams[0].epoch;
    pkt.seq = streams[0].next + seq_delta;
    pkt.tlp = ipnuma_wire::TlpHeader::ForBytes(ipnuma_wire::kFmtTypeMWr64, kExportBase + off, 8);
    pkt.payload.assign(4u * pkt.tlp.length_dw, 0);
    std::memset(pkt.payload.data() + (off & 3), v, 8);
    return ipnuma_wire::Encode(pkt).value();
  };
  SentPacket p;
  p.client = 1;
  p.dst_ip = Ip("10.0.0.2");
  p.pcid = kPcidB;
  p.dst_mac = Mac("02:00:00:00:00:02");
  p.bytes = 8;
  // Not the next sequence: refused, nothing queued.
  p.bar2_offset = 202;
  auto wrong = sent(202, 0x42, 1);
  p.packet = wrong;
  EXPECT_FALSE(a_.nic->Adopt(1, p, now_).ok());
  EXPECT_FALSE(a_.nic->Busy());
  // Adopted and lost on the wire: the emulator's retransmission lands it.
  auto first = sent(202, 0x42);
  p.packet = first;
  ASSERT_TRUE(a_.nic->Adopt(1, p, now_).ok());
  const uint64_t retx0 = a_.Counter(regs::kOffCounters + 8 * regs::kRetransmits);
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  ASSERT_TRUE(Run(0).ok());
  a_.nic->Publish();
  EXPECT_EQ(rx[202], 0x42);
  EXPECT_EQ(rx[209], 0x42);
  EXPECT_EQ(rx[210], 0) << "byte enables kept the neighbour";
  EXPECT_EQ(a_.Counter(regs::kOffCounters + 8 * regs::kRetransmits), retx0 + 1);
  // Denied at B: its ERROR reaches the flush, as a posted write's does.
  b_.bar0->data()[regs::RegionOffset(1) + regs::kRegionFlagsWord] = 0;
  auto denied = sent(400, 0x43);
  p.packet = denied;
  p.bar2_offset = 400;
  ASSERT_TRUE(a_.nic->Adopt(1, p, now_).ok());
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  EXPECT_EQ(Run(0).code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(rx[400], 0);
  // A store passed up outside the page region is refused at the flush.
  a_.nic->StorePosted(1, a_.pages->size() - 4, std::vector<uint8_t>(8, 1));
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  EXPECT_EQ(Run(0).code(), StatusCode::kInvalidArgument);
}

// Two CPUs sending on one stream may submit their records out of sequence
// order: the sender adopts them in order all the same, and every one lands.
TEST_F(EmuPair, SentRecordsOutOfOrderAreAdoptedInSequenceOrder) {
  a_.nic->StorePosted(1, 0, std::vector<uint8_t>(4, 0x11));  // the stream, as a passed-up store makes it
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  ASSERT_TRUE(Run(0).ok());
  const auto streams = a_.nic->Streams(now_);
  ASSERT_EQ(streams.size(), 1u);
  std::mt19937_64 rng(testing::TestSeed("EmuPair.SentRecordsOutOfOrder"));
  // 48 packets of the kernel, 8 bytes each at 64 * i, sequences next .. next+47.
  std::vector<std::vector<uint8_t>> wires;
  for (uint32_t i = 0; i < 48; ++i) {
    ipnuma_wire::Packet pkt;
    pkt.type = ipnuma_wire::PacketType::kWrite;
    pkt.epoch = streams[0].epoch;
    pkt.seq = streams[0].next + i;
    pkt.tlp = ipnuma_wire::TlpHeader::ForBytes(ipnuma_wire::kFmtTypeMWr64, kExportBase + 64 + 64 * i, 8);
    pkt.payload.assign(4u * pkt.tlp.length_dw, static_cast<uint8_t>(0x20 + i));
    wires.push_back(ipnuma_wire::Encode(pkt).value());
  }
  std::vector<uint32_t> order(48);
  for (uint32_t i = 0; i < 48; ++i) order[i] = i;
  // Neighbours swapped here and there, as two CPUs interleave.
  for (uint32_t i = 0; i + 1 < 48; ++i)
    if (rng() % 3 == 0) std::swap(order[i], order[i + 1]);
  SentOrder so;
  const SentOrder::NextOf next_of = [&](uint32_t ip) -> std::optional<uint32_t> {
    for (const auto& st : a_.nic->Streams(now_))
      if (st.ip == ip) return st.next;
    return std::nullopt;
  };
  const SentOrder::Adopt adopt = [&](const SentPacket& p) { return a_.nic->Adopt(1, p, now_); };
  for (uint32_t i : order) {
    SentPacket p;
    p.client = 1;
    p.dst_ip = Ip("10.0.0.2");
    p.pcid = kPcidB;
    p.dst_mac = Mac("02:00:00:00:00:02");
    p.bar2_offset = 64 + 64 * i;
    p.bytes = 8;
    p.packet = wires[i];
    ASSERT_TRUE(so.Take(p, next_of, adopt).ok()) << "record " << i;
  }
  EXPECT_EQ(so.waiting(), 0u);
  EXPECT_EQ(a_.nic->Streams(now_)[0].next, streams[0].next + 48);
  // None was sent (all lost): the retransmissions land every one.
  a_.nic->Ring(1, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kFlush), 0, 0});
  ASSERT_TRUE(Run(0).ok());
  const uint8_t* rx = b_.pool->data() + (kExportBase - kPoolBase);
  for (uint32_t i = 0; i < 48; ++i) EXPECT_EQ(rx[64 + 64 * i], 0x20 + i) << "packet " << i;
  // A record behind the stream's next (sent twice) is an error.
  SentPacket again;
  again.dst_ip = Ip("10.0.0.2");
  again.packet = wires[5];
  EXPECT_FALSE(so.Take(again, next_of, adopt).ok());
}

}  // namespace
}  // namespace fibnic::ipnuma
