// Verilator bench: loads a BAR0 image (a fibnic-compile output or random
// tables) into the RTL over the host bus, reads the register block and the
// tables back, streams frames through the pipeline and compares every output
// frame, tag and port with the C++ reference model (a frame the model drops
// must not come out), then the port and drop counters.
// Prints a latency table (first byte in -> first byte out, in clocks).
//
//   fibnic_fpga_bench{2,4} (--image BAR.img | --random [--sram-fill F] [--control C])
//       [--frames N] [--seed S] [--gap G] [--expect-v4 62] [--expect-v6 74]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>

#include "fpga/bench/random_image.h"
#include "fpga/bench/sim_device.h"
#include "fpga/bench/traffic.h"
#include "fpga/model/frame_model.h"
#include "device/fibnic_image_codec.h"
#include FIBNIC_VTOP_HEADER

namespace fibnic::fpga {
namespace {

using Device = SimDevice<FIBNIC_VTOP>;

struct Options {
  std::string image;
  bool random = false;
  double sram_fill = 1.0;
  uint32_t control = regs::kControlV4Enable | regs::kControlV6Enable;
  int frames = 2000;
  uint32_t seed = 0;
  bool seed_set = false;
  int gap = 12;
  int expect_v4 = 62;
  int expect_v6 = 74;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr, "fibnic_fpga_bench: %s\n", why);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Usage(("missing value after " + a).c_str());
      return argv[++i];
    };
    if (a == "--image") o.image = value();
    else if (a == "--random") o.random = true;
    else if (a == "--sram-fill") o.sram_fill = std::atof(value());
    else if (a == "--control") o.control = static_cast<uint32_t>(std::strtoul(value(), nullptr, 0));
    else if (a == "--frames") o.frames = std::atoi(value());
    else if (a == "--seed") o.seed = static_cast<uint32_t>(std::strtoul(value(), nullptr, 0)), o.seed_set = true;
    else if (a == "--gap") o.gap = std::atoi(value());
    else if (a == "--expect-v4") o.expect_v4 = std::atoi(value());
    else if (a == "--expect-v6") o.expect_v6 = std::atoi(value());
    else Usage(("unknown argument " + a).c_str());
  }
  if (o.random == !o.image.empty()) Usage("give exactly one of --image FILE and --random");
  if (o.frames <= 0 || o.gap < 12) Usage("--frames must be > 0 and --gap >= 12 (the Ethernet minimum)");
  return o;
}

uint32_t Le32(const std::vector<uint8_t>& b, uint32_t a) {
  return b[a] | (b[a + 1] << 8) | (b[a + 2] << 16) | (uint32_t{b[a + 3]} << 24);
}

// The device's CAPS: what this Verilated model was built with.
regs::Caps ModelCaps() { return FIBNIC_CODE_BITS == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit(); }

// Writes what the host owns, then reads everything back: constants against
// device/fibnic_regs.h, tables against the image.
int LoadAndVerify(Device& dev, const std::vector<uint8_t>& bar, const regs::Caps& caps, std::mt19937& rng) {
  dev.Load(bar, 0, 0x1000);
  dev.Load(bar, regs::kOffNexthop, regs::NexthopOffset(caps.nexthop_entries));
  dev.Load(bar, regs::kOffTcam6, regs::Tcam6Offset(caps.tcam_entries));
  dev.Load(bar, regs::kOffNeigh, regs::NeighOffset(caps.neigh_entries));
  dev.Load(bar, regs::kOffSram4, static_cast<uint32_t>(caps.bar_bytes()));

  int bad = 0;
  auto expect = [&](const char* what, uint32_t addr, uint32_t want) {
    const uint32_t got = dev.Read32(addr);
    if (got != want) {
      if (++bad <= 10) std::printf("READBACK MISMATCH %s @0x%06x: device 0x%08x, expected 0x%08x\n", what, addr, got, want);
    }
  };
  expect("ID", regs::kOffId, regs::kId);
  expect("VERSION", regs::kOffVersion, regs::kVersion);
  expect("CAPS0", regs::kOffCaps0, caps.caps0());
  expect("CAPS1", regs::kOffCaps1, caps.caps1());
  expect("CAPS2", regs::kOffCaps2, caps.caps2());
  expect("CONTROL", regs::kOffControl, Le32(bar, regs::kOffControl));
  expect("GENERATION", regs::kOffGeneration, Le32(bar, regs::kOffGeneration));
  for (uint32_t p = 0; p < caps.ports; ++p)
    for (uint32_t w = 0; w < 8; w += 4) expect("PORT_MAC", regs::PortMacOffset(p) + w, Le32(bar, regs::PortMacOffset(p) + w));
  for (uint32_t i = 0; i < caps.nexthop_entries; ++i)
    for (uint32_t w = 0; w < regs::kNexthopStride; w += 4) expect("NEXTHOP", regs::NexthopOffset(i) + w, Le32(bar, regs::NexthopOffset(i) + w));
  for (uint32_t i = 0; i < caps.tcam_entries; ++i)
    for (uint32_t w = 0; w < regs::kTcam6Stride; w += 4) expect("TCAM6", regs::Tcam6Offset(i) + w, Le32(bar, regs::Tcam6Offset(i) + w));
  for (uint32_t i = 0; i < caps.neigh_entries; ++i)
    for (uint32_t w = 0; w < regs::kNeighStride; w += 4) expect("NEIGH", regs::NeighOffset(i) + w, Le32(bar, regs::NeighOffset(i) + w));
  const uint32_t sram_words = static_cast<uint32_t>(caps.sram_bytes() / 4);
  for (int n = 0; n < 4096; ++n) {
    const uint32_t a = regs::kOffSram4 + 4 * (rng() % sram_words);
    expect("SRAM4", a, Le32(bar, a));
  }
  expect("SRAM4 last", static_cast<uint32_t>(caps.bar_bytes() - 4), Le32(bar, static_cast<uint32_t>(caps.bar_bytes() - 4)));
  return bad;
}

std::string Hex(const std::vector<uint8_t>& b, size_t from, size_t n) {
  std::string s;
  char buf[4];
  for (size_t i = from; i < b.size() && i < from + n; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", b[i]);
    s += buf;
  }
  return s;
}

const char* ClassOf(const std::vector<uint8_t>& f) {
  if (f.size() < 64) return "runt";
  const uint16_t t = static_cast<uint16_t>((f[12] << 8) | f[13]);
  return t == 0x0800 ? "ipv4" : t == 0x86dd ? "ipv6" : "other";
}

const char* SizeBucket(size_t n) {
  if (n < 64) return "<64";
  if (n == 64) return "64";
  if (n < 128) return "65-127";
  if (n < 512) return "128-511";
  if (n < 1024) return "512-1023";
  if (n < 1518) return "1024-1517";
  return "1518";
}

struct LatencyCell {
  uint64_t min = ~0ull, max = 0, count = 0;
  void Add(uint64_t v) {
    min = std::min(min, v);
    max = std::max(max, v);
    ++count;
  }
};

int Run(const Options& opt) {
  std::mt19937 rng(opt.seed);
  const regs::Caps caps = ModelCaps();
  std::vector<uint8_t> bar;
  if (opt.random) {
    RandomImageOptions ro;
    ro.sram_fill = opt.sram_fill;
    ro.control = opt.control;
    bar = EncodeBar(RandomImage(caps, ro, rng), opt.seed);
  } else {
    std::ifstream in(opt.image, std::ios::binary);
    if (!in) Usage(("cannot open image " + opt.image).c_str());
    bar.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto img = DecodeBar(bar.data(), bar.size());
  if (!img.ok()) {
    std::fprintf(stderr, "fibnic_fpga_bench: %s: %s\n", opt.random ? "random image" : opt.image.c_str(),
                 img.status().ToString().c_str());
    return 2;
  }
  if (!(img->caps == caps)) {
    std::fprintf(stderr, "fibnic_fpga_bench: image CAPS (code bits %d) differ from this RTL build (code bits %d)\n",
                 img->caps.code_bits, caps.code_bits);
    return 2;
  }

  Device dev;
  const int readback_bad = LoadAndVerify(dev, bar, caps, rng);
  std::printf("loaded %zu-byte BAR0 image (%d-bit codes) in %llu clocks; readback mismatches: %d\n", bar.size(),
              caps.code_bits, static_cast<unsigned long long>(dev.cycle()), readback_bad);

  // Stream the frames; the model decides each one independently.
  TrafficGenerator gen(*img, rng);
  std::vector<PipelineResult> want;
  std::vector<uint64_t> sent_at;
  std::vector<TestFrame> frames;
  const uint64_t start_cycle = dev.cycle();
  for (int i = 0; i < opt.frames; ++i) {
    TestFrame f = gen.Next();
    want.push_back(RunPipelineModel(bar, f.port, f.bytes));
    sent_at.push_back(dev.Send(f.port, f.bytes, opt.gap));
    frames.push_back(std::move(f));
  }
  dev.Idle(200);
  const uint64_t stream_cycles = dev.cycle() - start_cycle;

  auto& got = dev.tx();
  int mismatches = 0;
  std::map<std::string, int> reasons;
  std::map<std::pair<std::string, std::string>, LatencyCell> latency;
  std::map<std::string, LatencyCell> latency_by_class;
  // A frame the model drops leaves nothing: the device's output is the
  // model's frames that left, in order.
  size_t leaving = 0;
  for (const auto& w : want) leaving += !w.dropped();
  if (got.size() != leaving) {
    std::printf("MISMATCH: %zu frames out, %zu expected (%zu dropped)\n", got.size(), leaving, want.size() - leaving);
    ++mismatches;
  }
  uint64_t exp_cnt[4][8] = {};
  uint64_t exp_drop[4] = {};
  size_t k = 0;  // the device's output frame of the next frame that leaves
  for (size_t i = 0; i < want.size(); ++i) {
    const auto& w = want[i];
    ++reasons[ReasonName(w.reason)];
    // Expected counters, from the model's decisions.
    const size_t len = frames[i].bytes.size();
    if (frames[i].port < 4) {
      exp_cnt[frames[i].port][0] += 1;
      exp_cnt[frames[i].port][6] += len;
      if (w.dropped()) {
        exp_drop[frames[i].port] += 1;
      } else {
        exp_cnt[frames[i].port][w.forward() ? 1 : 2] += 1;
      }
      if (w.reason == Reason::kTtl) exp_cnt[frames[i].port][3] += 1;
    }
    if (w.forward() && w.egress_port < 4) {
      exp_cnt[w.egress_port][5] += 1;
      exp_cnt[w.egress_port][7] += len;
    }
    if (w.dropped() || k >= got.size()) continue;
    const auto& out = got[k++];
    const auto tag = w.Tag();
    std::vector<uint8_t> expect_bytes(tag.begin(), tag.end());
    expect_bytes.insert(expect_bytes.end(), w.frame.begin(), w.frame.end());
    if (out.bytes != expect_bytes) {
      if (++mismatches <= 10) {
        size_t at = 0;
        while (at < out.bytes.size() && at < expect_bytes.size() && out.bytes[at] == expect_bytes[at]) ++at;
        std::printf("MISMATCH frame %zu (port %u, %zu bytes, model: %s): first difference at output byte %zu\n"
                    "  device %s\n  model  %s\n",
                    i, frames[i].port, frames[i].bytes.size(), ReasonName(w.reason), at,
                    Hex(out.bytes, at > 8 ? at - 8 : 0, 24).c_str(), Hex(expect_bytes, at > 8 ? at - 8 : 0, 24).c_str());
      }
    }
    const uint64_t lat = out.sof_cycle - sent_at[i];
    const char* cls = ClassOf(frames[i].bytes);
    latency[{cls, SizeBucket(frames[i].bytes.size())}].Add(lat);
    latency_by_class[cls].Add(lat);
  }
  int counter_bad = 0;
  for (uint32_t p = 0; p < caps.ports; ++p)
    for (int c = 0; c < regs::kPortCounterCount; ++c) {
      const uint32_t a = regs::PortCountersOffset(p) + 8 * c;
      const uint64_t v = dev.Read32(a) | (uint64_t{dev.Read32(a + 4)} << 32);
      if (v != exp_cnt[p][c] && ++counter_bad <= 10)
        std::printf("COUNTER MISMATCH port %u %s: device %llu, model %llu\n", p, regs::kPortCounterNames[c],
                    static_cast<unsigned long long>(v), static_cast<unsigned long long>(exp_cnt[p][c]));
    }
  for (uint32_t p = 0; p < caps.ports && p < 4; ++p) {
    const uint32_t a = regs::DropCounterOffset(p);
    const uint64_t v = dev.Read32(a) | (uint64_t{dev.Read32(a + 4)} << 32);
    if (v != exp_drop[p] && ++counter_bad <= 10)
      std::printf("COUNTER MISMATCH port %u drop_route: device %llu, model %llu\n", p, static_cast<unsigned long long>(v),
                  static_cast<unsigned long long>(exp_drop[p]));
  }

  std::printf("\nframes %d over %llu clocks; decisions:", opt.frames, static_cast<unsigned long long>(stream_cycles));
  for (const auto& [r, n] : reasons) std::printf(" %s=%d", r.c_str(), n);
  std::printf("\n\nlatency, first byte in -> first byte out (clocks of 8 ns at 125 MHz):\n");
  std::printf("  %-6s %-10s %7s %5s %5s\n", "class", "size", "frames", "min", "max");
  for (const auto& [k, cell] : latency)
    std::printf("  %-6s %-10s %7llu %5llu %5llu\n", k.first.c_str(), k.second.c_str(),
                static_cast<unsigned long long>(cell.count), static_cast<unsigned long long>(cell.min),
                static_cast<unsigned long long>(cell.max));
  int latency_bad = 0;
  for (const auto& [cls, cell] : latency_by_class) {
    if (cls == "runt") continue;
    const uint64_t want_lat = cls == "ipv6" ? opt.expect_v6 : opt.expect_v4;
    if (cell.min != want_lat || cell.max != want_lat) {
      std::printf("LATENCY %s: %llu..%llu clocks, expected constant %llu\n", cls.c_str(),
                  static_cast<unsigned long long>(cell.min), static_cast<unsigned long long>(cell.max),
                  static_cast<unsigned long long>(want_lat));
      ++latency_bad;
    }
  }
  std::printf("\nseed %u: %d frame mismatches, %d readback mismatches, %d counter mismatches, %d latency errors\n",
              opt.seed, mismatches, readback_bad, counter_bad, latency_bad);
  return (mismatches || readback_bad || counter_bad || latency_bad) ? 1 : 0;
}

}  // namespace
}  // namespace fibnic::fpga

int main(int argc, char** argv) {
  auto opt = fibnic::fpga::ParseArgs(argc, argv);
  if (!opt.seed_set) opt.seed = std::random_device{}();
  std::printf("fibnic_fpga_bench seed %u\n", opt.seed);
  return fibnic::fpga::Run(opt);
}
