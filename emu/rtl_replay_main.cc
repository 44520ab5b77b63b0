// emu_rtl_replay: the emulator and the RTL on the same frames. Each frame of
// a frame file (as fibnic-emu receives them: ingress port + bytes without
// FCS) goes through fibnic-emu's Forwarder and, with its FCS, through the
// Verilated fibnic_top loaded with the same BAR0 image; the exit (host or
// wire port), the punt reason, the bytes that leave and finally every
// PORT_COUNTERS value must agree.
//
//   emu_rtl_replay --image BAR.img --frames FILE [--port-mac K=MAC ...]
//   (--port-mac writes PORT_MAC[K] into the image first: fibnicd's job in the lab)
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "emu/forwarder.h"
#include "fpga/bench/sim_device.h"
#include "fpga/model/inet_checksum.h"
#include FIBNIC_VTOP_HEADER

namespace fibnic::emu {
namespace {

using Device = fpga::SimDevice<FIBNIC_VTOP>;

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr, "emu_rtl_replay: %s\nusage: emu_rtl_replay --image BAR.img --frames FILE [--port-mac K=MAC ...]\n",
               why.c_str());
  std::exit(2);
}

struct Frame {
  uint8_t port;
  std::vector<uint8_t> bytes;
  int line;
};

std::vector<Frame> ReadFrames(const std::string& path) {
  std::ifstream in(path);
  if (!in) Usage("cannot open frame file " + path);
  std::vector<Frame> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    int port = -1;
    std::string hex;
    if (!(ls >> port >> hex) || port < 0 || port > 3 || hex.size() % 2 != 0 || hex.size() < 28)
      Usage(path + ":" + std::to_string(n) + ": expected 'PORT HEX' (port 0..3, a whole frame)");
    Frame f{static_cast<uint8_t>(port), {}, n};
    for (size_t i = 0; i < hex.size(); i += 2) f.bytes.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    out.push_back(std::move(f));
  }
  return out;
}

void SetPortMac(std::vector<uint8_t>& bar, const std::string& arg) {
  unsigned k, m[6];
  if (std::sscanf(arg.c_str(), "%u=%x:%x:%x:%x:%x:%x", &k, &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 7 || k > 3)
    Usage("--port-mac '" + arg + "': expected K=aa:bb:cc:dd:ee:ff");
  for (int i = 0; i < 6; ++i) bar[regs::PortMacOffset(k) + i] = static_cast<uint8_t>(m[i]);
}

std::string Hex(std::span<const uint8_t> b) {
  std::string s;
  char buf[4];
  for (uint8_t x : b) {
    std::snprintf(buf, sizeof buf, "%02x", x);
    s += buf;
  }
  return s;
}

int Run(int argc, char** argv) {
  std::string image, frames_path;
  std::vector<std::string> macs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) Usage("missing value after " + a);
    if (a == "--image") image = argv[++i];
    else if (a == "--frames") frames_path = argv[++i];
    else if (a == "--port-mac") macs.push_back(argv[++i]);
    else Usage("unknown argument " + a);
  }
  if (image.empty() || frames_path.empty()) Usage("--image and --frames are required");
  std::ifstream in(image, std::ios::binary);
  if (!in) Usage("cannot open image " + image);
  std::vector<uint8_t> bar(std::istreambuf_iterator<char>(in), {});
  const regs::Caps caps = FIBNIC_CODE_BITS == 4 ? regs::Caps::Model4Bit() : regs::Caps::Model2Bit();
  if (bar.size() != caps.bar_bytes()) Usage(image + " is not a " + std::to_string(FIBNIC_CODE_BITS) + "-bit-code BAR0 image");
  for (const auto& m : macs) SetPortMac(bar, m);
  const std::vector<Frame> frames = ReadFrames(frames_path);

  // The host's part of the BAR, as the bench loads it; counters start at 0.
  Device dev;
  dev.Load(bar, 0, regs::kOffPortCounters);
  dev.Load(bar, regs::kOffNexthop, regs::NexthopOffset(caps.nexthop_entries));
  dev.Load(bar, regs::kOffTcam6, regs::Tcam6Offset(caps.tcam_entries));
  dev.Load(bar, regs::kOffNeigh, regs::NeighOffset(caps.neigh_entries));
  dev.Load(bar, regs::kOffSram4, static_cast<uint32_t>(caps.bar_bytes()));

  Forwarder fwd(bar, caps.ports);
  std::vector<Verdict> verdicts;
  std::vector<std::vector<uint8_t>> emu_out;
  for (const Frame& f : frames) {
    std::vector<uint8_t> bytes = f.bytes;  // the forwarder rewrites a frame in place
    const Verdict v = fwd.FromWire(f.port, bytes);
    verdicts.push_back(v);
    emu_out.emplace_back(v.frame.begin(), v.frame.end());
    std::vector<uint8_t> wire = f.bytes;  // the RTL sees the frame as on the wire: with its FCS
    const uint32_t fcs = fpga::Crc32(wire.data(), wire.size());
    for (int i = 0; i < 4; ++i) wire.push_back(static_cast<uint8_t>(fcs >> (8 * i)));
    dev.Send(f.port, wire, 12);
  }
  dev.Idle(200);

  // A frame the card drops leaves nothing: the RTL's output is the
  // emulator's frames that left, in order.
  std::vector<size_t> left;
  for (size_t i = 0; i < frames.size(); ++i) {
    if (verdicts[i].exit != Exit::kNone) left.push_back(i);
  }
  int bad = 0;
  const auto& got = dev.tx();
  if (got.size() != left.size()) {
    std::printf("MISMATCH: the RTL put out %zu frames, the emulator %zu (of %zu in)\n", got.size(), left.size(),
                frames.size());
    ++bad;
  }
  int forwarded = 0;
  for (size_t k = 0; k < left.size() && k < got.size(); ++k) {
    const size_t i = left[k];
    const auto& rtl = got[k].bytes;
    const Verdict& v = verdicts[i];
    const bool rtl_host = rtl.size() > 0 && rtl[0] == fpga::kTagHost;
    const bool same_exit = rtl.size() >= fpga::kTagBytes + 4 && rtl_host == (v.exit == Exit::kHost) &&
                           (rtl_host || rtl[0] == v.port) && rtl[1] == static_cast<uint8_t>(v.reason);
    const std::span<const uint8_t> rtl_frame =
        rtl.size() >= fpga::kTagBytes + 4 ? std::span<const uint8_t>(rtl).subspan(fpga::kTagBytes, rtl.size() - fpga::kTagBytes - 4)
                                          : std::span<const uint8_t>();
    const bool same_bytes = std::equal(rtl_frame.begin(), rtl_frame.end(), emu_out[i].begin(), emu_out[i].end());
    forwarded += v.exit == Exit::kWire;
    if ((!same_exit || !same_bytes) && ++bad <= 10)
      std::printf("MISMATCH %s:%d (port %u): emu %s %u reason %s, RTL tag %s\n  emu %s\n  RTL %s\n", frames_path.c_str(),
                  frames[i].line, frames[i].port, v.exit == Exit::kHost ? "host" : "wire", v.port,
                  fpga::ReasonName(v.reason), Hex(std::span<const uint8_t>(rtl).first(std::min<size_t>(8, rtl.size()))).c_str(),
                  Hex(emu_out[i]).c_str(), Hex(rtl_frame).c_str());
  }
  for (uint32_t p = 0; p < caps.ports; ++p) {
    const auto want = fwd.counters()[p].values();
    for (int c = 0; c < regs::kPortCounterCount; ++c) {
      const uint32_t a = regs::PortCountersOffset(p) + 8 * c;
      const uint64_t v = dev.Read32(a) | (uint64_t{dev.Read32(a + 4)} << 32);
      if (v != want[c] && ++bad <= 20)
        std::printf("COUNTER MISMATCH port %u %s: RTL %llu, emu %llu\n", p, regs::kPortCounterNames[c],
                    static_cast<unsigned long long>(v), static_cast<unsigned long long>(want[c]));
    }
    const uint32_t a = regs::DropCounterOffset(p);
    const uint64_t v = dev.Read32(a) | (uint64_t{dev.Read32(a + 4)} << 32);
    if (v != fwd.counters()[p].drop_route && ++bad <= 20)
      std::printf("COUNTER MISMATCH port %u drop_route: RTL %llu, emu %llu\n", p, static_cast<unsigned long long>(v),
                  static_cast<unsigned long long>(fwd.counters()[p].drop_route));
  }
  std::printf("%zu frames (%d forwarded, %zu dropped, %zu punted): emulator and RTL %s\n", frames.size(), forwarded,
              frames.size() - left.size(), left.size() - forwarded,
              bad ? "DIFFER" : "agree on exit, reason, bytes and counters");
  return bad ? 1 : 0;
}

}  // namespace
}  // namespace fibnic::emu

int main(int argc, char** argv) { return fibnic::emu::Run(argc, argv); }
