// emu_xdp_bar_tool: the XDP-mode test's hands on a BAR map pinned in a bpffs
// (hwif/bpf_bar.h), through the same backend fibnicd uses, and its reference:
// the frame model (fpga/model RunPipelineModel, the full model with the FCS
// appended) on the live BAR bytes.
//
//   load IMAGE PIN         create the BAR map at PIN (OpenFibnicFile) and
//                          write IMAGE into it as fibnicd writes: 32-bit words
//   poke PIN OFFSET HEX    write bytes at OFFSET (32-bit words, ascending)
//   counters PIN           per port: the eight PORT_COUNTERS and DROP_COUNTERS
//   peek PIN OFFSET LEN    LEN bytes at OFFSET, in hex
//   model PIN              stdin "PORT HEX" frames (no FCS) -> stdout one line
//                          each: "wire K REASON HEX", "host K REASON HEX" or
//                          "none K REASON" (REASON: fpga::Reason's number)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "device/fibnic_image_codec.h"
#include "device/fibnic_regs.h"
#include "fpga/model/frame_model.h"
#include "fpga/model/inet_checksum.h"
#include "hwif/bpf_bar.h"
#include "hwif/fibnic_device.h"

namespace {

using namespace fibnic;

int Fail(const std::string& why) {
  std::fprintf(stderr, "emu_xdp_bar_tool: %s\n", why.c_str());
  return 1;
}

std::vector<uint8_t> FromHex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::string ToHex(const uint8_t* p, size_t n) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    s += d[p[i] >> 4];
    s += d[p[i] & 15];
  }
  return s;
}

int Load(const std::string& image_path, const std::string& pin) {
  std::ifstream in(image_path, std::ios::binary);
  std::vector<uint8_t> image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto header = DecodeBarHeader(image.data(), image.size());
  if (!header.ok()) return Fail(header.status().ToString());
  auto bar = OpenFibnicFile(pin, header->caps);
  if (!bar.ok()) return Fail(bar.status().ToString());
  // Tables first, the CSR block (CONTROL: forwarding on) last.
  const uint32_t tables = regs::kOffPortMac;
  if (Status st = (*bar)->Write(tables, image.data() + tables, image.size() - tables); !st.ok()) return Fail(st.ToString());
  if (Status st = (*bar)->Write(0, image.data(), tables); !st.ok()) return Fail(st.ToString());
  return 0;
}

int Poke(const std::string& pin, const std::string& offset, const std::string& hex) {
  auto bar = BpfBar::OpenAnySize(pin);
  if (!bar.ok()) return Fail(bar.status().ToString());
  const auto bytes = FromHex(hex);
  Status st = (*bar)->Write(std::stoull(offset, nullptr, 0), bytes.data(), bytes.size());
  return st.ok() ? 0 : Fail(st.ToString());
}

int Peek(const std::string& pin, const std::string& offset, const std::string& len) {
  auto bar = BpfBar::OpenAnySize(pin);
  if (!bar.ok()) return Fail(bar.status().ToString());
  std::vector<uint8_t> bytes(std::stoul(len));
  Status st = (*bar)->Read(std::stoull(offset, nullptr, 0), bytes.data(), bytes.size());
  if (!st.ok()) return Fail(st.ToString());
  std::printf("%s\n", ToHex(bytes.data(), bytes.size()).c_str());
  return 0;
}

int Counters(const std::string& pin) {
  auto bar = BpfBar::OpenAnySize(pin);
  if (!bar.ok()) return Fail(bar.status().ToString());
  const uint8_t ports = (*bar)->data()[regs::kOffCaps0 + 2];
  for (uint32_t p = 0; p < ports; ++p) {
    std::printf("%u", p);
    for (int i = 0; i <= regs::kPortCounterCount; ++i) {
      const uint32_t off = i < regs::kPortCounterCount ? regs::PortCountersOffset(p) + 8 * i : regs::DropCounterOffset(p);
      uint64_t v = 0;
      if (Status st = (*bar)->Read(off, &v, 8); !st.ok()) return Fail(st.ToString());
      std::printf(" %llu", static_cast<unsigned long long>(v));
    }
    std::printf("\n");
  }
  return 0;
}

int Model(const std::string& pin) {
  auto bar = BpfBar::OpenAnySize(pin);
  if (!bar.ok()) return Fail(bar.status().ToString());
  const std::span<const uint8_t> bytes((*bar)->data(), (*bar)->size());
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream ls(line);
    int port = -1;
    std::string hex;
    if (!(ls >> port >> hex)) continue;
    auto frame = FromHex(hex);
    const uint32_t fcs = fpga::Crc32(frame.data(), frame.size());
    for (int i = 0; i < 4; ++i) frame.push_back(static_cast<uint8_t>(fcs >> (8 * i)));
    const auto r = fpga::RunPipelineModel(bytes, static_cast<uint8_t>(port), frame);
    const int why = static_cast<int>(r.reason);
    const std::string out = ToHex(r.frame.data(), r.frame.size() - 4);
    if (r.dropped()) std::printf("none %d %d\n", port, why);
    else if (r.forward()) std::printf("wire %u %d %s\n", r.egress_port, why, out.c_str());
    else std::printf("host %d %d %s\n", port, why, out.c_str());
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 3 && a[0] == "load") return Load(a[1], a[2]);
  if (a.size() == 4 && a[0] == "poke") return Poke(a[1], a[2], a[3]);
  if (a.size() == 4 && a[0] == "peek") return Peek(a[1], a[2], a[3]);
  if (a.size() == 2 && a[0] == "counters") return Counters(a[1]);
  if (a.size() == 2 && a[0] == "model") return Model(a[1]);
  std::fprintf(stderr, "usage: emu_xdp_bar_tool load IMAGE PIN | poke PIN OFFSET HEX | peek PIN OFFSET LEN | counters PIN | model PIN\n");
  return 2;
}
