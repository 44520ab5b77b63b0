// ipnuma-emu's kernel transmit path (ipnuma/xdp/ipnuma_tx.bpf.c) on real
// frames, held to the contract's model: in a network namespace of its own,
// the host link and the wire are veth pairs (doorbells sent into h0, the
// program on h1, WRITEs leaving on w0 and captured on w1), skb and native
// mode, BAR0 in a BPF map. The test plays the emulator: it hands stream slots
// to the program, takes the frames passed up (storing them in the model, as
// the emulator's sender would), ACKs, and hands slots back. Random doorbells
// (1 B .. 4 KiB, across MAX_PAYLOAD lines and pages, unmapped pages, invalid
// PC IDs, PC IDs sharing an address, a full window, KERNEL cleared, no slot,
// broken frames) with CONTROL, PAGEMAP, PCID and MAX_PAYLOAD changed live.
// A store the program sent is the model's Store+Poll byte for byte, framed
// as BuildUdpFrame frames it, and recorded; a store it passed up arrives on
// h1 counted in the slot the rules name. BAR0's TX_WRITES counts the sends.
//
// Needs root (a network namespace, BPF maps, XDP); fails saying so otherwise.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>

#include "device/ipnuma_model.h"
#include "device/ipnuma_regs.h"
#include "device/ipnuma_wire.h"
#include "ipnuma/emu_frames.h"
#include "ipnuma/xdp_transmit.h"
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

constexpr uint16_t kPort = 4790;
constexpr uint32_t kPages = 64;
constexpr uint16_t kPcidEntries = 8;  // PC IDs 1..7 named; 8 and 9 lie beyond the table
constexpr uint16_t kWindow = 6;
constexpr size_t kDoorbellBytes = kEthHeaderBytes + sizeof(ipnuma_doorbell);
const MacAddr kNicMac = Mac("02:00:00:00:00:02");
const uint32_t kNicIp = Ip("10.9.0.2");
// The peers: PC ID i names address kPeerOf[i] (several PC IDs share one).
const uint32_t kPeers[4] = {Ip("10.9.1.1"), Ip("10.9.1.2"), Ip("10.9.1.3"), Ip("10.9.1.4")};
constexpr int kPeerOf[8] = {-1, 0, 1, 0, 2, 3, 1, 2};
// The slot each peer's stream starts with (0: none; peer 3 gains one later).
constexpr uint32_t kSlotOf[4] = {1, 2, 5, 0};

template <typename T>
void Put(uint8_t* p, T v) {
  std::memcpy(p, &v, sizeof v);
}
template <typename T>
T Get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The test's own side of one stream, as the emulator keeps it.
struct Stream {
  uint32_t slot = 0;
  uint32_t base = 0;       // oldest unacked
  uint32_t next = 0;       // next sequence assigned (by the program or the model)
  uint32_t sent_upto = 0;  // sequences below were sent
  uint32_t unsent() const { return next - sent_upto; }
};

class XdpTransmitTest : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    ASSERT_EQ(unshare(CLONE_NEWNET), 0) << std::strerror(errno);
    ASSERT_EQ(system("ip link set lo up && ip link add h0 type veth peer name h1 && "
                     "ip link add w0 type veth peer name w1 && "
                     "for i in h0 h1 w0 w1; do sysctl -qw net.ipv6.conf.$i.disable_ipv6=1 && ip link set $i up; done && "
                     "ip link set h1 address 02:00:00:00:00:02"),
              0);
  }

  void SetUp() override {
    ASSERT_EQ(geteuid(), 0u) << "needs root: a network namespace, BPF maps and an XDP program";
    regs::Caps caps;
    caps.pages = kPages;
    caps.pcid_entries = kPcidEntries;
    caps.region_entries = 0;
    auto bar = PageMap::Make((caps.bar0_bytes() + 4095) / 4096 * 4096);
    ASSERT_TRUE(bar) << "cannot make an mmapable BPF map: " << std::strerror(errno);
    bar_ = *bar;
    uint8_t* b = bar_.data;
    Put<uint32_t>(b + regs::kOffId, regs::kId);
    Put<uint32_t>(b + regs::kOffVersion, regs::kVersion);
    Put<uint32_t>(b + regs::kOffCaps0, caps.caps0());
    Put<uint32_t>(b + regs::kOffCaps1, caps.caps1());
    Put<uint32_t>(b + regs::kOffCaps2, kWindow);
    regs::LocalRegs local;
    local.control = regs::kControlEnable;
    local.local_ip = kNicIp;
    local.netmask = Ip("255.255.0.0");
    local.local_mac = kNicMac;
    local.udp_port = kPort;
    for (auto [off, v] : regs::EncodeLocalRegs(local)) Put<uint32_t>(b + off, v);
    for (uint16_t i = 1; i < 8; ++i) {
      regs::PcidEntry e;
      e.ip = kPeers[kPeerOf[i]];
      e.mac = Mac(static_cast<uint8_t>(0x10 + i));
      e.flags = regs::kPcidValid;
      auto enc = e.Encode();
      std::memcpy(b + regs::PcidOffset(i), enc.data(), enc.size());
    }
    // Native XDP on a veth takes frames that fit a page; skb mode the
    // contract's largest packet (4 KiB of data). The far end's program goes
    // first: a veth whose peer has one refuses the larger MTU.
    ASSERT_EQ(system("ip link set w1 xdp off"), 0);
    const char* mtu = GetParam() ? "1500" : "4200";
    for (const char* i : {"h0", "h1", "w0", "w1"})
      ASSERT_EQ(system((std::string("ip link set ") + i + " mtu " + mtu).c_str()), 0);
    // A native redirect into a veth is received by the far end's NAPI, which
    // runs while that end has an XDP program.
    if (GetParam()) {
      ASSERT_EQ(system((std::string("ip link set w1 xdpdrv obj ") + XDP_PASS_OBJECT + " sec xdp").c_str()), 0);
    }
    XdpTransmit::Config c;
    c.bar0_map_fd = bar_.fd;
    c.pcid_entries = kPcidEntries;
    c.link = "h1";
    c.wire = "w0";
    c.native = GetParam();
    auto x = XdpTransmit::Attach(c);
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    tx_ = std::move(x).value();
    ASSERT_EQ(tx_->slot_count(), kPcidEntries + 1u);
    host_ = RawSocket("h0");
    nic_ = RawSocket("h1");
    far_ = RawSocket("w1");
    ASSERT_TRUE(host_ >= 0 && nic_ >= 0 && far_ >= 0) << std::strerror(errno);
  }

  void TearDown() override {
    tx_.reset();
    for (int s : {host_, nic_, far_})
      if (s >= 0) close(s);
    bar_.Close();
  }

  std::atomic_ref<uint64_t> Word(uint32_t slot) { return std::atomic_ref<uint64_t>(tx_->slot(slot).word); }
  uint64_t Punted(uint32_t slot) { return std::atomic_ref<uint64_t>(tx_->slot(slot).punted).load(); }
  void SetLimit(uint32_t slot, uint32_t limit) {
    std::atomic_ref<uint32_t>(tx_->slot(slot).limit).store(limit, std::memory_order_release);
  }
  // A slot written whole before its address is mapped (the header's order).
  void OpenSlot(uint32_t slot, uint32_t ip, uint16_t epoch, const Stream& s) {
    ipnuma_tx_stream& st = tx_->slot(slot);
    st.ip = htonl(ip);
    SetLimit(slot, s.base + kWindow);
    // The count of frames passed up stays: `punted` does.
    const uint64_t punts = Word(slot).load() & ~(IPNUMA_TX_PUNTS_ONE - 1);
    Word(slot).store(punts | IPNUMA_TX_KERNEL | (uint64_t{epoch} << IPNUMA_TX_EPOCH_SHIFT) | s.next);
    ASSERT_TRUE(tx_->MapAddress(ip, slot).ok());
  }
  uint64_t TxWrites() { return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(bar_.data + regs::kOffCounters)).load(); }

  PageMap bar_;
  std::unique_ptr<XdpTransmit> tx_;
  int host_ = -1, nic_ = -1, far_ = -1;
};

Bytes Doorbell(uint32_t magic, uint16_t op, uint16_t length, uint32_t client, uint64_t offset,
               std::span<const uint8_t> data) {
  Bytes f(kDoorbellBytes + data.size());
  std::memcpy(f.data(), kNicMac.b.data(), 6);
  std::memcpy(f.data() + 6, Mac(1).b.data(), 6);
  f[12] = IPNUMA_DOORBELL_ETHERTYPE >> 8;
  f[13] = IPNUMA_DOORBELL_ETHERTYPE & 0xff;
  ipnuma_doorbell db{magic, op, length, client, 0, offset};
  std::memcpy(f.data() + kEthHeaderBytes, &db, sizeof db);
  if (!data.empty()) std::memcpy(f.data() + kDoorbellBytes, data.data(), data.size());
  if (f.size() < 60) f.resize(60, 0);
  return f;
}

TEST_P(XdpTransmitTest, RandomStoresMatchTheModel) {
  std::mt19937_64 rng(fibnic::testing::TestSeed(GetParam() ? "xdp transmit, native" : "xdp transmit, skb"));
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  auto chance = [&](double p) { return std::bernoulli_distribution(p)(rng); };
  uint8_t* b = bar_.data;
  const uint16_t epoch = static_cast<uint16_t>(pick(0x10000));
  Put<uint32_t>(b + regs::kOffEpochBase, epoch);
  auto set_page = [&](uint32_t p) {
    regs::PagemapEntry e;
    e.pcid = chance(0.1) ? 0 : chance(0.05) ? static_cast<uint16_t>(8 + pick(2)) : static_cast<uint16_t>(1 + pick(7));
    e.remote_pa = pick(uint64_t{1} << 36) << 12;
    Put<uint64_t>(b + regs::PagemapOffset(p), e.Encode());
  };
  for (uint32_t p = 0; p < kPages; ++p) set_page(p);

  model::Sender want(std::span<const uint8_t>(b, bar_.size));
  std::map<uint32_t, Stream> streams;  // by peer address
  for (int i = 0; i < 4; ++i) {
    Stream& s = streams[kPeers[i]];
    s.slot = kSlotOf[i];
    if (s.slot) OpenSlot(s.slot, kPeers[i], epoch, s);
  }
  std::map<uint32_t, uint64_t> taken;  // frames passed up, by the slot they were counted in
  uint64_t sent = 0, passed = 0, emulator_sent = 0, window_full = 0, spanning = 0, kernel_clear = 0;

  // The model's view of where a store's pieces go (Sender::Enqueue): the
  // peer address of each piece the model queues.
  auto pieces = [&](uint64_t offset, uint32_t length) {
    std::vector<uint32_t> ips;
    const uint32_t mp = regs::DecodeWireParams(b).max_payload;
    if (!(Get<uint32_t>(b + regs::kOffControl) & regs::kControlEnable)) return ips;
    for (uint64_t pos = offset; pos < offset + length; pos = (pos / mp + 1) * mp) {
      if (pos / 4096 >= kPages) continue;
      const auto pm = regs::PagemapEntry::Decode(Get<uint64_t>(b + regs::PagemapOffset(pos / 4096)));
      if (!pm.mapped() || pm.pcid >= kPcidEntries) continue;
      const auto pe = regs::PcidEntry::Decode(b + regs::PcidOffset(pm.pcid));
      if (pe.valid()) ips.push_back(pe.ip);
    }
    return ips;
  };
  // The emulator's sends: what the model sends of its queues.
  auto poll_model = [&] {
    for (const model::Datagram& d : want.Poll(0)) {
      auto p = wire::Decode(d.bytes);
      ASSERT_TRUE(p.ok());
      Stream& s = streams[d.dst_ip];
      ASSERT_EQ(p->seq, s.sent_upto) << "the model sent out of the test's order";
      s.sent_upto++;
      emulator_sent++;
    }
  };

  const char* env_steps = std::getenv("XDP_TRANSMIT_STEPS");
  const int steps = env_steps ? std::atoi(env_steps) : 20000;
  const uint32_t most = GetParam() ? 1400 : 4096;  // data bytes a doorbell frame carries within the MTU
  for (int step = 0; step < steps; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    // Live register changes, as ipnumad makes them.
    if (chance(0.02)) Put<uint32_t>(b + regs::kOffControl, Get<uint32_t>(b + regs::kOffControl) ^ regs::kControlEnable);
    if (!(Get<uint32_t>(b + regs::kOffControl) & regs::kControlEnable) && chance(0.3))
      Put<uint32_t>(b + regs::kOffControl, regs::kControlEnable);
    if (chance(0.05)) set_page(static_cast<uint32_t>(pick(kPages)));
    if (chance(0.01)) b[regs::PcidOffset(static_cast<uint32_t>(1 + pick(7))) + 10] &= ~regs::kPcidValid;
    if (chance(0.1)) b[regs::PcidOffset(static_cast<uint32_t>(1 + pick(7))) + 10] |= regs::kPcidValid;
    if (chance(0.03)) {
      static constexpr uint32_t kMaxPayloads[] = {0, 1, 64, 100, 128, 256, 512, 1000, 1024, 2048, 4096, 9000};
      Put<uint32_t>(b + regs::kOffMaxPayload, kMaxPayloads[pick(std::size(kMaxPayloads))]);
    }
    // Peer 3 gains its slot, loses its address, gets it back.
    if (chance(0.01)) {
      Stream& s = streams[kPeers[3]];
      if (s.slot == 0) {
        s.slot = 7;
        ASSERT_NO_FATAL_FAILURE(OpenSlot(7, kPeers[3], epoch, s));
        Word(7).fetch_and(~IPNUMA_TX_KERNEL);  // handed over below, once its queue is empty
      } else {
        ASSERT_TRUE(tx_->UnmapAddress(kPeers[3]).ok());
        s.slot = 0;
      }
    }
    // ACKs: the model and the slot's limit move together.
    for (auto& [ip, s] : streams) {
      // Faster while the model's queue holds stores passed up, so slots go back.
      if (s.sent_upto != s.base && chance(s.unsent() ? 0.6 : 0.15)) {
        wire::Packet ack;
        ack.type = wire::PacketType::kAck;
        ack.epoch = epoch;
        ack.ack_seq = s.unsent() ? s.sent_upto : s.base + 1 + static_cast<uint32_t>(pick(s.sent_upto - s.base));
        ASSERT_TRUE(want.OnDatagram(ip, *wire::Encode(ack), 0).ok());
        s.base = ack.ack_seq;
        if (s.slot) SetLimit(s.slot, s.base + kWindow);
      }
    }
    ASSERT_NO_FATAL_FAILURE(poll_model());
    // The emulator takes a slot back now and then, and hands it back once
    // its own queue is empty and it took every frame passed up for it.
    for (auto& [ip, s] : streams) {
      if (!s.slot) continue;
      uint64_t w = Word(s.slot).load();
      if ((w & IPNUMA_TX_KERNEL) && chance(0.01)) Word(s.slot).fetch_and(~IPNUMA_TX_KERNEL);
      w = Word(s.slot).load();
      if (!(w & IPNUMA_TX_KERNEL) && s.unsent() == 0 && Punted(s.slot) == taken[s.slot] && chance(0.8)) {
        const uint64_t back = (w & ~(IPNUMA_TX_SEQ_MASK | (0xffffULL << IPNUMA_TX_EPOCH_SHIFT))) | IPNUMA_TX_KERNEL |
                              (uint64_t{epoch} << IPNUMA_TX_EPOCH_SHIFT) | s.next;
        ASSERT_TRUE(Word(s.slot).compare_exchange_strong(w, back));
      }
    }

    // A doorbell: mostly one that fits its MAX_PAYLOAD line.
    const uint64_t at = pick(uint64_t{kPages + 2} * 4096);
    const uint32_t line = regs::DecodeWireParams(b).max_payload;
    uint32_t len = chance(0.3) ? 1 + static_cast<uint32_t>(pick(8)) : 1 + static_cast<uint32_t>(pick(most));
    if (chance(0.85)) len = std::min<uint32_t>(len, static_cast<uint32_t>(line - at % line));
    Bytes data(len);
    for (auto& x : data) x = static_cast<uint8_t>(pick(256));
    const uint32_t client = static_cast<uint32_t>(step);
    const int broken = chance(0.06) ? static_cast<int>(pick(6)) : -1;
    uint32_t magic = IPNUMA_DOORBELL_MAGIC;
    uint16_t op = IPNUMA_DOORBELL_POSTED_WRITE, length = static_cast<uint16_t>(len);
    if (broken == 0) magic ^= 1u << pick(32);
    if (broken == 1) op = static_cast<uint16_t>(2 + pick(100));
    if (broken == 2) length = 0;
    if (broken == 3) length = static_cast<uint16_t>(IPNUMA_DOORBELL_MAX_DATA + 1 + pick(100));
    Bytes frame = Doorbell(magic, op, length, client, at, data);
    if (broken == 4) frame.resize(kDoorbellBytes + len - 1 - pick(len));             // shorter than its data
    if (broken == 5) frame.resize(kEthHeaderBytes + pick(sizeof(ipnuma_doorbell)));  // shorter than a doorbell
    if (broken == 4 && frame.size() < 60 && len + kDoorbellBytes > 60) frame.resize(60, 0);
    const bool other_type = broken < 0 && chance(0.01);
    if (other_type) frame[13] ^= 1;

    // What the rules say happens to it.
    uint32_t want_slot = 0;
    bool fast = false;
    std::vector<uint32_t> ips;
    if (broken < 0 && !other_type) {
      ips = pieces(at, len);
      const bool one_piece = at / line == (at + len - 1) / line;
      const bool resolved = !ips.empty() && (at / 4096 < kPages) &&
                            [&] {  // the first byte's page resolves
                              const auto pm = regs::PagemapEntry::Decode(Get<uint64_t>(b + regs::PagemapOffset(at / 4096)));
                              return pm.mapped() && pm.pcid < kPcidEntries &&
                                     regs::PcidEntry::Decode(b + regs::PcidOffset(pm.pcid)).valid();
                            }();
      if (resolved) {
        const Stream& s = streams[ips.front()];
        want_slot = s.slot;
        if (s.slot) {
          const uint64_t w = Word(s.slot).load();
          const bool room = static_cast<int32_t>(tx_->slot(s.slot).limit - static_cast<uint32_t>(w)) > 0;
          fast = one_piece && (w & IPNUMA_TX_KERNEL) && room;
          spanning += !one_piece;
          kernel_clear += one_piece && !(w & IPNUMA_TX_KERNEL);
          window_full += one_piece && (w & IPNUMA_TX_KERNEL) && !room;
        }
      }
    }
    const uint64_t punted_before = Punted(want_slot), writes_before = TxWrites();
    ASSERT_EQ(send(host_, frame.data(), frame.size(), 0), static_cast<ssize_t>(frame.size())) << std::strerror(errno);

    if (fast) {
      const uint32_t ip = ips.front();
      Stream& s = streams[ip];
      ASSERT_TRUE(want.Store(at, data).ok());
      auto out = want.Poll(0);
      ASSERT_EQ(out.size(), 1u);
      const model::Datagram& d = out.front();
      ASSERT_EQ(d.dst_ip, ip);
      auto f = Receive(far_, [&](const Bytes& g) { return g.size() > 12 && g[12] == 0x08 && g[13] == 0; }, 2000);
      ASSERT_TRUE(f.has_value()) << "no WRITE on the wire";
      const ParsedFrame pf = ParseUdpFrame(*f, d.dst_mac, ip, kPort);
      ASSERT_EQ(pf.verdict, FrameVerdict::kOurs) << "the WRITE's framing (addresses, checksums)";
      EXPECT_EQ(pf.from.src_mac, kNicMac);
      EXPECT_EQ(pf.from.src_ip, kNicIp);
      EXPECT_EQ(pf.from.src_port, kPort);
      EXPECT_EQ(f->size(), kFrameOverhead + d.bytes.size()) << "bytes after the datagram";
      EXPECT_EQ(f->at(kEthHeaderBytes + 6) & 0x40, 0x40) << "DF";
      EXPECT_EQ(f->at(kEthHeaderBytes + 8), 64) << "TTL";
      ASSERT_EQ(Bytes(pf.payload.begin(), pf.payload.end()), d.bytes) << "the WRITE differs from the model's";
      size_t records = 0;
      const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (records == 0 && std::chrono::steady_clock::now() < end) {
        auto n = tx_->Drain([&](const SentPacket& r) {
          records++;
          EXPECT_EQ(r.client, client);
          EXPECT_EQ(r.slot, s.slot);
          EXPECT_EQ(r.dst_ip, ip);
          EXPECT_EQ(r.dst_mac, d.dst_mac);
          EXPECT_EQ(r.pcid, regs::PagemapEntry::Decode(Get<uint64_t>(b + regs::PagemapOffset(at / 4096))).pcid);
          EXPECT_EQ(r.bar2_offset, at);
          EXPECT_EQ(r.bytes, len);
          EXPECT_EQ(Bytes(r.packet.begin(), r.packet.end()), d.bytes) << "the record's packet";
        });
        ASSERT_TRUE(n.ok());
      }
      ASSERT_EQ(records, 1u) << "the sent packet's record";
      s.next++;
      s.sent_upto++;
      sent++;
      ASSERT_EQ(static_cast<uint32_t>(Word(s.slot).load()), s.next) << "the slot's next sequence";
    } else {
      // Passed up: unchanged but for punt_slot, counted in that slot.
      Bytes expect = frame;
      if (!other_type && expect.size() >= kDoorbellBytes)
        Put<uint32_t>(expect.data() + kEthHeaderBytes + offsetof(ipnuma_doorbell, punt_slot), want_slot);
      auto up = Receive(nic_, [&](const Bytes& g) { return g == expect; }, 2000);
      ASSERT_TRUE(up.has_value()) << "the frame was not passed up as the rules say (slot " << want_slot << ")";
      if (!other_type) {
        ASSERT_EQ(Punted(want_slot), punted_before + 1) << "slot " << want_slot << "'s punted";
        taken[want_slot]++;
        passed++;
        if (want_slot) {
          const uint64_t w = Word(want_slot).load();
          EXPECT_FALSE(w & IPNUMA_TX_KERNEL) << "KERNEL still set";
          EXPECT_EQ(w >> IPNUMA_TX_PUNTS_SHIFT, Punted(want_slot) & 0x7fff) << "the word's count of frames passed up";
        }
      } else {
        EXPECT_EQ(Punted(0), punted_before) << "another EtherType's frame counted";
      }
      if (broken < 0 && !other_type) {
        // The emulator stores it: first it owns every stream a piece goes to.
        for (uint32_t ip : ips)
          if (streams[ip].slot) Word(streams[ip].slot).fetch_and(~IPNUMA_TX_KERNEL);
        const auto c = want.counters();
        (void)want.Store(at, data);
        const uint64_t refused = want.counters()[regs::kTxUnmapped] - c[regs::kTxUnmapped] +
                                 want.counters()[regs::kTxDisabled] - c[regs::kTxDisabled];
        const uint32_t all = static_cast<uint32_t>((at + len - 1) / line - at / line + 1);
        ASSERT_EQ(refused + ips.size(), all) << "the test's view of the pieces differs from the model's";
        for (uint32_t ip : ips) streams[ip].next++;
        ASSERT_NO_FATAL_FAILURE(poll_model());
      }
      auto n = tx_->Drain([&](const SentPacket&) { ADD_FAILURE() << "a record for a frame passed up"; });
      ASSERT_TRUE(n.ok());
    }
    ASSERT_EQ(TxWrites(), writes_before + (fast ? 1 : 0)) << "BAR0 TX_WRITES";
  }
  EXPECT_EQ(TxWrites(), sent);
  EXPECT_EQ(want.counters()[regs::kTxWrites], sent + emulator_sent);
  std::cout << "sent in the kernel " << sent << ", passed up " << passed << " (window full " << window_full
            << ", across a line " << spanning << ", KERNEL clear " << kernel_clear << "), sent by the model "
            << emulator_sent << std::endl;
  const uint64_t scale = static_cast<uint64_t>(steps) / 1000;
  EXPECT_GT(sent, 300u * scale);
  EXPECT_GT(window_full, 5u * scale);
  EXPECT_GT(spanning, 20u * scale);
  EXPECT_GT(kernel_clear, 5u * scale);
  EXPECT_GT(taken[0], 50u * scale);
}

// Two senders on different CPUs storing into one stream at once: every
// sequence the program takes is recorded once, with none left out, whatever
// the order the records come in; a store it could not take is passed up.
TEST_P(XdpTransmitTest, TwoCpusIntoOneStream) {
  ASSERT_GE(std::thread::hardware_concurrency(), 2u) << "two CPUs racing on one stream need two CPUs; this machine has fewer";
  uint8_t* b = bar_.data;
  Put<uint32_t>(b + regs::kOffMaxPayload, 4096);
  for (uint32_t p = 0; p < kPages; ++p)
    Put<uint64_t>(b + regs::PagemapOffset(p), regs::PagemapEntry{uint64_t{p + 1} << 12, 1}.Encode());
  Stream s;
  s.next = 0xfffffff0;  // the sequence wraps on the way
  s.base = s.next;
  ASSERT_NO_FATAL_FAILURE(OpenSlot(1, kPeers[0], 3, s));
  SetLimit(1, s.next + (1u << 30));
  constexpr int kPerThread = 400;
  auto sender = [&](int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    const int sock = RawSocket("h0");
    const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    for (int i = 0; i < kPerThread; ++i) {
      Bytes f = Doorbell(IPNUMA_DOORBELL_MAGIC, IPNUMA_DOORBELL_POSTED_WRITE, 8, static_cast<uint32_t>(cpu << 16 | i),
                         8 * static_cast<uint64_t>(i), data);
      // ENOBUFS: the veth's ring to the program was full (native mode) and
      // the frame dropped before the program saw it; sent again.
      ssize_t n;
      while ((n = send(sock, f.data(), f.size(), 0)) < 0 && errno == ENOBUFS) std::this_thread::yield();
      if (n != static_cast<ssize_t>(f.size())) ADD_FAILURE() << std::strerror(errno);
    }
    close(sock);
  };
  std::thread t0(sender, 0), t1(sender, 1);
  std::vector<uint32_t> seqs;
  std::set<uint32_t> clients;
  auto drain = [&] {
    auto n = tx_->Drain([&](const SentPacket& r) {
      auto p = wire::Decode(r.packet);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      EXPECT_EQ(p->epoch, 3);
      seqs.push_back(p->seq);
      EXPECT_TRUE(clients.insert(r.client).second) << "a store sent twice";
    });
    ASSERT_TRUE(n.ok());
  };
  auto done = [&] { return seqs.size() + Punted(1) + Punted(0) >= 2u * kPerThread; };
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done() && std::chrono::steady_clock::now() < end) {
    drain();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  t0.join();
  t1.join();
  drain();
  ASSERT_EQ(seqs.size() + Punted(1) + Punted(0), 2u * kPerThread) << "stores neither sent nor passed up";
  EXPECT_EQ(Punted(0), 0u);
  // Records that came before a lower sequence's: both CPUs were in the program at once.
  size_t crossed = 0;
  for (size_t i = 1; i < seqs.size(); ++i) crossed += static_cast<int32_t>(seqs[i] - seqs[i - 1]) < 0;
  std::sort(seqs.begin(), seqs.end(), [&](uint32_t x, uint32_t y) { return x - s.next < y - s.next; });
  for (size_t i = 0; i < seqs.size(); ++i) ASSERT_EQ(seqs[i], static_cast<uint32_t>(s.next + i)) << "a gap or a sequence twice";
  EXPECT_EQ(static_cast<uint32_t>(Word(1).load()), static_cast<uint32_t>(s.next + seqs.size()));
  EXPECT_EQ(TxWrites(), seqs.size());
  std::cout << "sent in the kernel " << seqs.size() << ", passed up " << Punted(1) << ", records out of order "
            << crossed << std::endl;
  EXPECT_GT(seqs.size(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Modes, XdpTransmitTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& i) { return i.param ? "Native" : "Skb"; });

}  // namespace
}  // namespace fibnic::ipnuma
