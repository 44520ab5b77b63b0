#include "ipnuma/emu_nic.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "common/mapped_region.h"
#include "device/ipnuma_wire.h"
#include "ipnuma/emu_frames.h"

namespace fibnic::ipnuma {
namespace regs = ipnuma_regs;
namespace model = ipnuma_model;
namespace wire = ipnuma_wire;
namespace {

uint32_t Le32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);  // BAR0 is little-endian, as is every host this runs on
  return v;
}

// One aligned store per register, so a reader of the shared mapping never
// sees half a counter.
void StoreLe64(uint8_t* p, uint64_t v) { __atomic_store_n(reinterpret_cast<uint64_t*>(p), v, __ATOMIC_RELAXED); }
void StoreLe32(uint8_t* p, uint32_t v) { __atomic_store_n(reinterpret_cast<uint32_t*>(p), v, __ATOMIC_RELAXED); }
uint32_t LoadLe32(const uint8_t* p) { return __atomic_load_n(reinterpret_cast<const uint32_t*>(p), __ATOMIC_SEQ_CST); }

std::string Hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

StatusOr<std::unique_ptr<MappedFile>> MappedFile::Open(const std::string& path, uint64_t create_size) {
  if (IsBpfFsPath(path)) return OpenMap(path);
  const int flags = O_RDWR | O_CLOEXEC | (create_size > 0 ? O_CREAT : 0);
  const int fd = ::open(path.c_str(), flags, 0644);
  if (fd < 0) return IoError("cannot open " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return FailedPrecondition(path + " is not a regular file");
  }
  if (st.st_size == 0 && create_size > 0) {
    if (::ftruncate(fd, static_cast<off_t>(create_size)) != 0) {
      const int err = errno;
      ::close(fd);
      return IoError("cannot size " + path + ": " + std::strerror(err));
    }
    st.st_size = static_cast<off_t>(create_size);
  }
  if (st.st_size == 0) {
    ::close(fd);
    return FailedPrecondition(path + " is empty");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) return IoError("cannot map " + path + ": " + std::strerror(err));
  return std::unique_ptr<MappedFile>(new MappedFile(static_cast<uint8_t*>(map), size));
}

StatusOr<std::unique_ptr<MappedFile>> MappedFile::OpenMap(const std::string& path) {
  // Only page-sized values of an mmapable array lie end to end in one
  // region, the layout ipnumad and an XDP program address it by: BpfBar's.
  ASSIGN_OR_RETURN(auto bar, BpfBar::OpenAnySize(path));
  // BpfBar maps it read-write; it hands the bytes out read-only for decoders.
  std::unique_ptr<MappedFile> f(new MappedFile(const_cast<uint8_t*>(bar->data()), bar->size()));
  f->map_ = std::move(bar);
  return f;
}

MappedFile::~MappedFile() {
  if (!map_) ::munmap(data_, size_);
}

EmuNic::EmuNic(std::unique_ptr<MappedFile> bar0, std::unique_ptr<MappedFile> pages, std::unique_ptr<MappedFile> pool,
               uint64_t pool_base, const regs::Caps& caps)
    : bar0_(std::move(bar0)),
      pages_(std::move(pages)),
      pool_(std::move(pool)),
      pool_base_(pool_base),
      caps_(caps),
      sender_(std::span<const uint8_t>(bar0_->data(), bar0_->size())),
      receiver_(std::span<const uint8_t>(bar0_->data(), bar0_->size()), pool_->bytes(), pool_base),
      peer_state_shown_(caps.pcid_entries, 0) {
  // What the file shows is what this NIC shows until it publishes: DOWN left
  // by an earlier run that the driver then clears is a reset asked for.
  for (uint32_t i = 1; i < caps_.pcid_entries; ++i) {
    peer_state_shown_[i] = LoadLe32(bar0_->data() + regs::PeerStateOffset(i));
    if (peer_state_shown_[i] & regs::kPeerStateDown) shown_down_.push_back(static_cast<uint16_t>(i));
  }
}

StatusOr<std::unique_ptr<EmuNic>> EmuNic::Open(const Files& f) {
  ASSIGN_OR_RETURN(auto bar0, MappedFile::Open(f.bar0));
  if (bar0->size() < regs::kOffPagemap) {
    return FailedPrecondition("BAR0 file " + f.bar0 + " is " + std::to_string(bar0->size()) +
                              " bytes, smaller than the register map");
  }
  const uint8_t* b = bar0->data();
  if (Le32(b + regs::kOffId) != regs::kId) return FailedPrecondition("BAR0 file " + f.bar0 + ": not an IP-NUMA NIC (ID)");
  if ((Le32(b + regs::kOffVersion) >> 16) != (regs::kVersion >> 16)) {
    return FailedPrecondition("BAR0 file " + f.bar0 + ": VERSION " + Hex(Le32(b + regs::kOffVersion)) +
                              ", this emulator implements major " + std::to_string(regs::kVersion >> 16));
  }
  const regs::Caps caps = regs::Caps::Decode(Le32(b + regs::kOffCaps0), Le32(b + regs::kOffCaps1));
  if (Status st = caps.Validate(); !st.ok()) return st.WithContext("BAR0 file " + f.bar0);
  // A map holds whole values: ipnumad rounds BAR0 up to them.
  size_t bar0_bytes = caps.bar0_bytes();
  if (bar0->map_fd() >= 0) bar0_bytes = (bar0_bytes + kBpfBarPage - 1) / kBpfBarPage * kBpfBarPage;
  if (bar0->size() != bar0_bytes) {
    return FailedPrecondition("BAR0 file " + f.bar0 + " is " + std::to_string(bar0->size()) + " bytes, CAPS say " +
                              std::to_string(bar0_bytes));
  }
  ASSIGN_OR_RETURN(auto pages, MappedFile::Open(f.pages, caps.bar2_bytes()));
  if (pages->size() != caps.bar2_bytes()) {
    return FailedPrecondition("page region file " + f.pages + " is " + std::to_string(pages->size()) +
                              " bytes, CAPS0 says " + std::to_string(caps.bar2_bytes()));
  }
  ASSIGN_OR_RETURN(auto pool, MappedFile::Open(f.pool));
  if (f.pool_base % regs::kBufferAlign != 0 || f.pool_base > regs::kPaMask - (pool->size() - 1)) {
    return InvalidArgument("pool base " + Hex(f.pool_base) + " is not 64-byte aligned or the pool passes 2^48");
  }
  // A NIC counts from 0 at power-on; from here on Publish adds to the words.
  for (int i = 0; i < regs::kCounterCount; ++i) StoreLe64(bar0->data() + regs::kOffCounters + 8 * i, 0);
  for (int i = 0; i < regs::kExtCounterCount; ++i) StoreLe64(bar0->data() + regs::kOffExtCounters + 8 * i, 0);
  return std::unique_ptr<EmuNic>(new EmuNic(std::move(bar0), std::move(pages), std::move(pool), f.pool_base, caps));
}

void EmuNic::Send(uint32_t dst_ip, const MacAddr& dst_mac, uint16_t dst_port, std::span<const uint8_t> payload,
                  std::vector<std::vector<uint8_t>>& out) {
  const regs::LocalRegs local = regs::DecodeLocalRegs(bar0_->data());
  FrameAddress a;
  a.src_mac = local.local_mac;
  a.dst_mac = dst_mac;
  a.src_ip = local.local_ip;
  a.dst_ip = dst_ip;
  a.src_port = local.udp_port;
  a.dst_port = dst_port;
  out.push_back(BuildUdpFrame(a, ip_id_++, payload));
}

void EmuNic::OnFrame(std::span<const uint8_t> frame, uint64_t now_ns, std::vector<std::vector<uint8_t>>& out) {
  // LOCAL_MAC/IP/UDP_PORT are read per frame: ipnumad may change them live.
  const regs::LocalRegs local = regs::DecodeLocalRegs(bar0_->data());
  const ParsedFrame f = ParseUdpFrame(frame, local.local_mac, local.local_ip, local.udp_port);
  if (f.verdict == FrameVerdict::kNotOurs) return;
  if (f.verdict == FrameVerdict::kMalformed) {
    own_[regs::kRxMalformed]++;
    return;
  }
  if (kernel_receive_) {
    // The kernel took every request it found whole; what comes up is an
    // answer (the sender half's) or something the codec refuses.
    auto p = wire::Decode(f.payload);
    if (!p.ok() || wire::IsRequest(p->type)) {
      own_[regs::kRxMalformed]++;
      return;
    }
    (void)sender_.OnDatagram(f.from.src_ip, f.payload, now_ns);
    TakeEvents();
    return;
  }
  // The receiver half takes requests and counts what the codec refuses; an
  // answer it passes over (uncounted) is the sender half's. So every
  // datagram is decoded and counted by exactly one of them.
  const uint64_t malformed = receiver_.counters()[regs::kRxMalformed];
  const std::vector<uint8_t> reply = receiver_.OnDatagram(f.from.src_ip, f.payload);
  if (!reply.empty()) {
    Send(f.from.src_ip, f.from.src_mac, f.from.src_port, reply, out);
  } else if (receiver_.counters()[regs::kRxMalformed] == malformed &&
             !wire::IsRequest(static_cast<wire::PacketType>(f.payload[wire::kOffType]))) {
    (void)sender_.OnDatagram(f.from.src_ip, f.payload, now_ns);  // refusals are counted by the model
  }
  TakeEvents();
}

void EmuNic::OnAcceptedRead(const AcceptedRead& read, std::vector<std::vector<uint8_t>>& out) {
  auto p = wire::Decode(read.packet);
  if (!p.ok() || p->type != wire::PacketType::kReadRequest) {
    own_[regs::kRxMalformed]++;  // the kernel path checked it: not expected
    return;
  }
  const std::vector<uint8_t> reply = receiver_.Execute(read.src_ip, *p, read.epoch, read.ack_seq);
  if (!reply.empty()) Send(read.src_ip, read.src_mac, read.src_port, reply, out);
}

void EmuNic::Poll(uint64_t now_ns, std::vector<std::vector<uint8_t>>& out) {
  const uint16_t port = regs::DecodeLocalRegs(bar0_->data()).udp_port;  // every NIC of a deployment uses one port
  for (const model::Datagram& d : sender_.Poll(now_ns)) Send(d.dst_ip, d.dst_mac, port, d.bytes, out);
  TakeEvents();
}

void EmuNic::TakeEvents() {
  for (model::WriterEvent& ev : sender_.TakeEvents()) {
    Status st;
    if (ev.kind == model::WriterEvent::Kind::kReadData) {
      // The load's answer lands in the page it was loaded from, where the
      // client library picks it up once the doorbell is answered.
      if (ev.bar2_offset + ev.data.size() <= pages_->size()) {
        std::memcpy(pages_->data() + ev.bar2_offset, ev.data.data(), ev.data.size());
      }
    } else if (ev.kind == model::WriterEvent::Kind::kDenied) {
      st = PermissionDenied("BAR2 " + Hex(ev.bar2_offset) + " (+" + std::to_string(ev.bytes) + " bytes, PC ID " +
                            std::to_string(ev.pcid) + "): the peer refused it (DENIED)");
    } else {
      st = Unavailable("BAR2 " + Hex(ev.bar2_offset) + " (+" + std::to_string(ev.bytes) + " bytes): peer of PC ID " +
                       std::to_string(ev.pcid) + " is down, the packet was discarded");
    }
    if (st.ok()) continue;
    for (DoorbellWaiter& w : waiting_) {
      const DoorbellRequest& r = w.request;
      if (w.status.ok() && ev.bar2_offset >= r.offset && ev.bar2_offset < r.offset + r.length) w.status = st;
    }
  }
}

void EmuNic::Ring(int client, const DoorbellRequest& r) {
  DoorbellWaiter w{client, r, {}};
  const size_t before = sender_.Outstanding();
  const auto op = static_cast<DoorbellOp>(r.op);
  if (op == DoorbellOp::kResetPeer) {
    if (r.offset == 0 || r.offset >= caps_.pcid_entries) {
      w.status = OutOfRange("PC ID " + std::to_string(r.offset) + " is not in the table");
    } else {
      sender_.ResetPeer(static_cast<uint16_t>(r.offset));
      peer_state_changes_++;
      TakeEvents();
    }
    done_.push_back({client, w.status});
    return;
  }
  if (op == DoorbellOp::kFlush) {
    waiting_.push_back(std::move(w));  // TakeDone answers it once the queues are empty
    return;
  }
  const bool write = op == DoorbellOp::kWrite || op == DoorbellOp::kWritePosted;
  w.posted = op == DoorbellOp::kWritePosted;
  auto finish = [&](Status st) {
    if (w.posted) FoldPosted(client, std::move(st));
    else done_.push_back({client, std::move(st)});
  };
  if ((!write && op != DoorbellOp::kRead) || r.length == 0 || r.length > kDoorbellMaxLength ||
      r.offset > pages_->size() || r.length > pages_->size() - r.offset) {
    finish(InvalidArgument("doorbell op " + std::to_string(r.op) + " at BAR2 " + Hex(r.offset) + " +" +
                           std::to_string(r.length) + " is outside the page region"));
    return;
  }
  w.status = write ? sender_.Store(r.offset, pages_->bytes().subspan(r.offset, r.length))
                   : sender_.Load(r.offset, r.length);
  // Nothing queued (every piece refused): the answer need not wait.
  if (sender_.Outstanding() == before) {
    finish(std::move(w.status));
    return;
  }
  waiting_.push_back(std::move(w));
}

void EmuNic::StorePosted(int client, uint64_t bar2_offset, std::span<const uint8_t> data) {
  DoorbellWaiter w{client, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kWritePosted),
                                           static_cast<uint32_t>(data.size()), bar2_offset},
                   {}, true};
  if (data.empty() || bar2_offset > pages_->size() || data.size() > pages_->size() - bar2_offset) {
    FoldPosted(client, InvalidArgument("posted store at BAR2 " + Hex(bar2_offset) + " +" +
                                       std::to_string(data.size()) + " is outside the page region"));
    return;
  }
  const size_t before = sender_.Outstanding();
  w.status = sender_.Store(bar2_offset, data);
  if (sender_.Outstanding() == before) {
    FoldPosted(client, std::move(w.status));
    return;
  }
  waiting_.push_back(std::move(w));
}

Status EmuNic::Adopt(int client, const SentPacket& sent, uint64_t now_ns) {
  RETURN_IF_ERROR(sender_.Adopt(sent.dst_ip, sent.dst_mac, sent.pcid, sent.bar2_offset, sent.bytes, sent.packet, now_ns));
  // Waits like a posted write the sender queued: an ERROR for it is folded
  // into the client's next flush.
  waiting_.push_back(DoorbellWaiter{
      client, DoorbellRequest{static_cast<uint32_t>(DoorbellOp::kWritePosted), sent.bytes, sent.bar2_offset}, {}, true});
  return OkStatus();
}

void EmuNic::FoldPosted(int client, Status status) {
  if (status.ok()) return;
  for (const DoorbellDone& p : posted_) {
    if (p.client == client) return;  // the first refusal is the one kept
  }
  posted_.push_back({client, std::move(status)});
}

std::vector<DoorbellDone> EmuNic::TakeDone() {
  // A doorbell is done once nothing it queued is left. The model keeps no
  // per-request completion, so "nothing left" is "the queues are empty":
  // exact for one writer at a time, later than needed for several.
  if (sender_.Outstanding() == 0) {
    // Posted writes first: a flush released with them reports their refusals.
    for (DoorbellWaiter& w : waiting_) {
      if (w.posted) FoldPosted(w.client, std::move(w.status));
    }
    for (DoorbellWaiter& w : waiting_) {
      if (w.posted) continue;
      if (static_cast<DoorbellOp>(w.request.op) == DoorbellOp::kFlush) {
        auto it = std::find_if(posted_.begin(), posted_.end(), [&](const DoorbellDone& p) { return p.client == w.client; });
        if (it != posted_.end()) {
          w.status = std::move(it->status);
          posted_.erase(it);
        }
      }
      done_.push_back({w.client, std::move(w.status)});
    }
    waiting_.clear();
  }
  return std::exchange(done_, {});
}

void EmuNic::Forget(int client) {
  std::erase_if(waiting_, [client](const DoorbellWaiter& w) { return w.client == client; });
  std::erase_if(done_, [client](const DoorbellDone& d) { return d.client == client; });
  std::erase_if(posted_, [client](const DoorbellDone& d) { return d.client == client; });
}

void EmuNic::TakeDriverResets() {
  if (shown_down_.empty()) return;  // the common case, every round
  bool reset = false;
  for (uint16_t i : std::exchange(shown_down_, {})) {
    const uint32_t now = LoadLe32(bar0_->data() + regs::PeerStateOffset(i));
    if (now & regs::kPeerStateDown) {
      shown_down_.push_back(i);
      continue;
    }
    sender_.ResetPeer(i);
    peer_state_shown_[i] = now;
    peer_state_changes_++;
    reset = true;
  }
  if (reset) TakeEvents();
}

void EmuNic::Publish(bool all_peer_state) {
  TakeDriverResets();
  uint8_t* b = bar0_->data();
  const model::NicCounters* parts[] = {&sender_.counters(), &receiver_.counters(), &own_};
  auto add = [](uint8_t* word, uint64_t& published, uint64_t now) {
    if (now == published) return;
    __atomic_fetch_add(reinterpret_cast<uint64_t*>(word), now - published, __ATOMIC_SEQ_CST);
    published = now;
  };
  for (int i = 0; i < regs::kCounterCount; ++i) {
    uint64_t sum = 0;
    for (const auto* c : parts) sum += c->base.v[i];
    add(b + regs::kOffCounters + 8 * i, published_.base.v[i], sum);
  }
  for (int i = 0; i < regs::kExtCounterCount; ++i) {
    uint64_t sum = 0;
    for (const auto* c : parts) sum += c->ext.v[i];
    add(b + regs::kOffExtCounters + 8 * i, published_.ext.v[i], sum);
  }
  // Up to 4095 table lookups: not for every frame, only when a stream's state moved.
  const uint64_t changes = peer_state_changes_ + sender_.counters()[regs::kPeersDown];
  if (!all_peer_state && changes == peer_state_published_) return;
  peer_state_published_ = changes;
  shown_down_.clear();
  for (uint32_t i = 1; i < caps_.pcid_entries; ++i) {
    // Stored only over the word as last shown: a driver's clear that came in
    // since TakeDriverResets is kept for the next call, never overwritten.
    uint32_t expected = peer_state_shown_[i];
    const uint32_t state = sender_.PeerState(static_cast<uint16_t>(i));
    auto* word = reinterpret_cast<uint32_t*>(b + regs::PeerStateOffset(i));
    if (__atomic_compare_exchange_n(word, &expected, state, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
      peer_state_shown_[i] = state;
    } else if (!(peer_state_shown_[i] & regs::kPeerStateDown) || (expected & regs::kPeerStateDown)) {
      // Not a clear of a DOWN this NIC showed (writes of other bits, or of
      // 1 over 0, change nothing on the device): the register reads the truth.
      StoreLe32(reinterpret_cast<uint8_t*>(word), state);
      peer_state_shown_[i] = state;
    }
    if (peer_state_shown_[i] & regs::kPeerStateDown) shown_down_.push_back(static_cast<uint16_t>(i));
  }
}

}  // namespace fibnic::ipnuma
