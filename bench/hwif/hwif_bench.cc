// hwif bench: what pushing tables through the file backend costs, against
// the physical minimum (the bytes whose value actually changes).
//   - full push: a cold Sync of a full-table-like 4 MiB SRAM image into a new
//     BAR file, timed against a plain memcpy of the same bytes into the map;
//   - incremental batches: one route change per batch at several prefix
//     lengths, plus a next-hop MAC change: bus writes and bytes per change;
//   - warm restart: Sync of an unchanged table (readback + diff, no writes).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>

#include "hwif/fibnic_device.h"
#include "hwif/fibnic_pusher.h"

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;
double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

void SetCode(DeviceImage& img, uint32_t slash24, uint8_t code) {
  const uint32_t a = slash24 >> 2, s = slash24 & 3;
  img.sram[a] = static_cast<uint8_t>((img.sram[a] & ~(3 << (2 * s))) | (code << (2 * s)));
}

// Runs of /24s with one code each, lengths spread like a routing table's
// (many /24s, some /16-sized blocks), about a third of the space unrouted.
DeviceImage FullTableLike(std::mt19937& rng) {
  DeviceImage img(regs::Caps::Model2Bit());
  for (uint8_t s = 1; s <= 3; ++s) {
    img.nexthop[s].dst_mac.b = {0x02, 0, 0, 0, 0, s};
    img.nexthop[s].port = s;
    img.nexthop[s].flags = regs::kNexthopValid;
  }
  uint32_t at = 0;
  while (at < (1u << 24)) {
    const uint32_t len = std::min<uint32_t>((1u << 24) - at, 1u << (rng() % 9));
    const uint8_t code = (rng() % 3 == 0) ? 0 : static_cast<uint8_t>(1 + rng() % 3);
    for (uint32_t i = 0; i < len; ++i) SetCode(img, at + i, code);
    at += len;
  }
  return img;
}

// Table data writes only: the one GENERATION write per batch is listed apart.
void PrintRow(const char* what, const PushStats& s, uint64_t changes, double ms) {
  const double per = changes ? 1.0 / static_cast<double>(changes) : 1.0;
  const uint64_t data_writes = s.bus_writes - s.batches;
  std::printf("%-28s %10.1f %12.1f %12.1f %8.2f %10.1f\n", what, static_cast<double>(data_writes) * per,
              static_cast<double>(4 * data_writes) * per, static_cast<double>(s.changed_bytes) * per,
              s.changed_bytes ? static_cast<double>(4 * data_writes) / static_cast<double>(s.changed_bytes) : 0.0,
              ms * 1000.0 * per);
}

int Run() {
  std::mt19937 rng(20240301);
  const auto caps = regs::Caps::Model2Bit();
  const std::string dir = std::filesystem::temp_directory_path() / ("hwif-bench-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/fibnic.bar";

  const DeviceImage table = FullTableLike(rng);
  std::printf("hwif bench — file backend, model %s\n\n", DescribeModel(caps).c_str());
  std::printf("%-28s %10s %12s %12s %8s %10s\n", "per change", "bus wr", "bytes wr", "changed B", "ratio",
              "us");

  auto bar = OpenFibnicFile(path, caps);
  if (!bar.ok()) {
    std::fprintf(stderr, "%s\n", bar.status().ToString().c_str());
    return 1;
  }
  FibnicPusher pusher(**bar);
  auto t0 = Clock::now();
  Status st = pusher.Sync(table);
  const double full_ms = Ms(Clock::now() - t0);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  PrintRow("full push (cold Sync)", pusher.last(), 1, full_ms);

  // Peer: the same SRAM bytes memcpy'd into a fresh BAR file's mapping (the
  // same page faults, no ordering, no diff, no readback).
  double memcpy_ms = 0;
  {
    auto peer = OpenFibnicFile(dir + "/peer.bar", caps);
    if (!peer.ok()) {
      std::fprintf(stderr, "%s\n", peer.status().ToString().c_str());
      return 1;
    }
    t0 = Clock::now();
    std::memcpy(const_cast<uint8_t*>((*peer)->data()) + regs::kOffSram4, table.sram.data(), table.sram.size());
    (void)(*peer)->Flush();
    memcpy_ms = Ms(Clock::now() - t0);
  }

  // Incremental: one route (an aligned prefix of the given length) moves to
  // another next-hop per batch.
  DeviceImage now = table;
  for (int len : {24, 22, 20, 16}) {
    PushStats sum;
    const int batches = 200;
    auto start = Clock::now();
    for (int b = 0; b < batches; ++b) {
      const uint32_t n24 = 1u << (24 - len);
      const uint32_t first = (static_cast<uint32_t>(rng()) & 0xFFFFFFu) & ~(n24 - 1);
      // A real change: the first /24 takes a code it does not have.
      const uint8_t code = static_cast<uint8_t>(1 + (now.CodeOf24(first) + rng() % 2) % 3);
      DeviceDelta d;
      for (uint32_t a = first >> 2; a <= (first + n24 - 1) >> 2; ++a) d.sram_before.push_back(now.sram[a]);
      for (uint32_t i = 0; i < n24; ++i) SetCode(now, first + i, code);
      for (uint32_t a = first >> 2; a <= (first + n24 - 1) >> 2; ++a) {
        d.sram_words.push_back(a);
        d.sram_values.push_back(now.sram[a]);
      }
      if (Status s = pusher.Push({d}, now); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      sum.Add(pusher.last());
    }
    const double ms = Ms(Clock::now() - start);
    PrintRow(("route change /" + std::to_string(len)).c_str(), sum, batches, ms);
  }
  {
    PushStats sum;
    const int batches = 200;
    auto start = Clock::now();
    for (int b = 0; b < batches; ++b) {
      const uint32_t slot = 1 + b % 3;
      now.nexthop[slot].dst_mac.b[5] = static_cast<uint8_t>(rng());
      now.nexthop[slot].dst_mac.b[0] = static_cast<uint8_t>(2 + 4 * (rng() % 60));
      DeviceDelta d;
      d.nexthop_activate.push_back({slot, now.nexthop[slot]});
      if (Status s = pusher.Push({d}, now); !s.ok()) {
        std::fprintf(stderr, "%s\n", s.ToString().c_str());
        return 1;
      }
      sum.Add(pusher.last());
    }
    PrintRow("next-hop MAC change", sum, batches, Ms(Clock::now() - start));
  }

  FibnicPusher restarted(**bar);
  t0 = Clock::now();
  st = restarted.Sync(now);
  const double warm_ms = Ms(Clock::now() - t0);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.ToString().c_str());
    return 1;
  }
  PrintRow("warm restart, same table", restarted.last(), 1, warm_ms);

  std::printf("\nratio = table bytes written / table bytes that change (the physical minimum: each bus\n"
              "write is 4 bytes, so one changed SRAM byte costs 4); every batch adds one GENERATION write\n");
  std::printf("full push %.1f ms vs memcpy+msync of the SRAM %.1f ms: %.2fx\n", full_ms, memcpy_ms,
              memcpy_ms > 0 ? full_ms / memcpy_ms : 0.0);
  std::printf("warm restart with an unchanged table: %llu bus writes, %.1f ms (readback + diff)\n",
              static_cast<unsigned long long>(restarted.last().bus_writes), warm_ms);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace fibnic

int main() { return fibnic::Run(); }
