#include "emu/forwarder.h"

#include <bit>
#include <cstring>

#include "device/fibnic_regs.h"
#include "fpga/model/inet_checksum.h"

namespace fibnic::emu {

namespace {
constexpr size_t kFcsBytes = 4;
// PORT_COUNTERS are little-endian u64s: stored as native words below.
static_assert(std::endian::native == std::endian::little);
}  // namespace

Forwarder::Forwarder(std::span<const uint8_t> bar, int ports) : bar_(bar), counters_(ports) {}

Verdict Forwarder::FromWire(uint8_t port, std::span<uint8_t> frame) {
  fpga::PipelineResult r;
  if (frame.size() >= fpga::kInPlaceMinBytes) {
    r = fpga::RunPipelineInPlace(bar_, port, frame);
  } else {
    with_fcs_.assign(frame.begin(), frame.end());
    const uint32_t fcs = fpga::Crc32(frame.data(), frame.size());
    for (size_t i = 0; i < kFcsBytes; ++i) with_fcs_.push_back(static_cast<uint8_t>(fcs >> (8 * i)));
    r = fpga::RunPipelineModel(bar_, port, with_fcs_);
    if (r.forward()) std::memcpy(frame.data(), r.frame.data(), frame.size());  // the rewrite, its FCS stripped
  }
  const size_t wire_bytes = frame.size() + kFcsBytes;

  PortCounters& in = counters_[port];
  in.rx += 1;
  in.rx_bytes += wire_bytes;
  Verdict v;
  v.reason = r.reason;
  v.frame = frame;
  if (r.forward()) {
    in.forwarded += 1;
    PortCounters& out = counters_[r.egress_port];
    out.tx += 1;
    out.tx_bytes += wire_bytes;
    v.exit = Exit::kWire;
    v.port = r.egress_port;
  } else if (r.dropped()) {
    in.drop_route += 1;
    v.exit = Exit::kNone;
    v.port = port;
  } else {
    in.punted += 1;
    if (r.reason == fpga::Reason::kTtl) in.drop_ttl += 1;
    v.exit = Exit::kHost;
    v.port = port;
  }
  return v;
}

Verdict Forwarder::FromHost(uint8_t port, std::span<const uint8_t> frame) const {
  Verdict v;
  v.exit = Exit::kWire;
  v.port = port;
  v.frame = frame;
  return v;
}

void Forwarder::CountFifoDrops(uint8_t port, uint64_t n) { counters_[port].drop_fifo += n; }

void PublishCounters(uint8_t* bar, const std::vector<PortCounters>& counters) {
  uint32_t caps2 = 0;
  std::memcpy(&caps2, bar + regs::kOffCaps2, 4);
  const bool drop = regs::Caps::Decode(0, 0, caps2).drop;
  auto store = [bar](uint32_t offset, uint64_t v) {
    auto* word = reinterpret_cast<uint64_t*>(bar + offset);
    __atomic_store_n(word, v, __ATOMIC_RELAXED);  // little-endian host, as the contract lays it out
  };
  for (size_t p = 0; p < counters.size(); ++p) {
    const auto port = static_cast<uint32_t>(p);
    const auto values = counters[p].values();
    for (int i = 0; i < regs::kPortCounterCount; ++i) store(regs::PortCountersOffset(port) + 8 * i, values[i]);
    if (drop) store(regs::DropCounterOffset(port), counters[p].drop_route);
  }
}

}  // namespace fibnic::emu
