#include "fpga/bench/random_image.h"

namespace fibnic::fpga {
namespace {

void SetCode(DeviceImage& img, uint32_t slash24, uint8_t code) {
  const int bits = img.caps.code_bits;
  const uint32_t per_byte = 8 / bits;
  uint8_t& b = img.sram[slash24 / per_byte];
  const int sh = bits * static_cast<int>(slash24 % per_byte);
  const uint8_t mask = static_cast<uint8_t>(((1 << bits) - 1) << sh);
  b = static_cast<uint8_t>((b & ~mask) | ((code << sh) & mask));
}

}  // namespace

DeviceImage RandomImage(const regs::Caps& caps, const RandomImageOptions& opt, std::mt19937& rng) {
  DeviceImage img(caps);
  img.control = opt.control;
  auto pct = [&](int p) { return static_cast<int>(rng() % 100) < p; };
  for (auto& m : img.port_macs) {
    m = MacAddr{{0x02, 0xfb, 0, 0, 0, 0}};
    for (int i = 2; i < 6; ++i) m.b[i] = static_cast<uint8_t>(rng());
  }

  std::vector<uint8_t> connected_codes;
  for (int c = 1; c < caps.nexthop_entries; ++c) {
    auto& nh = img.nexthop[c];
    for (auto& b : nh.dst_mac.b) b = static_cast<uint8_t>(rng());
    nh.dst_mac.b[0] &= 0xfe;
    nh.port = static_cast<uint8_t>(pct(5) ? 4 + rng() % 4 : rng() % caps.ports);
    const int kind = static_cast<int>(rng() % 100);
    // A DROP entry keeps its random port and MAC: the device must not read them.
    nh.flags = kind < 55   ? regs::kNexthopValid
               : kind < 65 ? (regs::kNexthopValid | regs::kNexthopDrop)
               : kind < 85 ? (regs::kNexthopValid | regs::kNexthopConnected)
                           : (pct(50) ? regs::kNexthopConnected : pct(50) ? regs::kNexthopDrop : 0);
    if (nh.connected()) connected_codes.push_back(static_cast<uint8_t>(c));
  }
  if (connected_codes.empty()) {
    img.nexthop[1].flags = regs::kNexthopValid | regs::kNexthopConnected;
    connected_codes.push_back(1);
  }

  std::uniform_real_distribution<double> u(0, 1);
  for (auto& b : img.sram) b = u(rng) < opt.sram_fill ? static_cast<uint8_t>(rng()) : 0;

  // TCAM: nested prefixes under 2001:db8::/32 plus a few odd masks.
  for (uint32_t i = 0; i < caps.tcam_entries; ++i) {
    auto& e = img.tcam[i];
    const int len = std::vector<int>{16, 32, 40, 48, 56, 64}[rng() % 6];
    const uint64_t mask = len == 64 ? ~0ull : ~((1ull << (64 - len)) - 1);
    uint64_t v = 0x20010db800000000ull | (uint64_t{rng() % 4} << 16) | (uint64_t{rng() % 4} << 8);
    if (pct(10)) v = (uint64_t{rng()} << 32) | rng();
    e.mask = pct(5) ? ((uint64_t{rng()} << 32) | rng()) : mask;
    e.value = v & e.mask;
    e.code = static_cast<uint8_t>(pct(5) ? rng() % 256 : rng() % caps.nexthop_entries);
    e.flags = pct(85) ? regs::kTcamValid : 0;
  }

  // Neighbours: half IPv4, half IPv6; some duplicates with another MAC.
  for (uint32_t i = 0; i < caps.neigh_entries; ++i) {
    auto& n = img.neigh[i];
    IpAddr a;
    if (i > 0 && pct(5)) {
      a = IpAddr::FromBytes(img.neigh[i - 1].addr[0] == 0 ? Family::kV4 : Family::kV6,
                            img.neigh[i - 1].addr[0] == 0 ? img.neigh[i - 1].addr.data() + 12
                                                          : img.neigh[i - 1].addr.data());
    } else if (i % 2 == 0) {
      a = IpAddr::V4(0x0a000000u | (rng() & 0x00ffffffu));
      if (pct(70)) SetCode(img, a.v4() >> 8, connected_codes[rng() % connected_codes.size()]);
    } else {
      const uint64_t hi = 0x20010db800000000ull | (uint64_t{rng() % 4} << 16) | (uint64_t{rng() % 4} << 8);
      a = IpAddr::V6((U128{hi} << 64) | rng());
    }
    n.addr = a.mapped16();
    for (auto& b : n.mac.b) b = static_cast<uint8_t>(rng());
    n.mac.b[0] &= 0xfe;
    n.port = static_cast<uint8_t>(pct(3) ? 4 + rng() % 4 : rng() % caps.ports);
    n.flags = pct(85) ? regs::kNeighValid : 0;
  }
  // Route some IPv6 neighbours' /64s to connected codes (lowest TCAM entries win).
  for (uint32_t i = 0; i < 4 && i < caps.tcam_entries; ++i) {
    const auto& n = img.neigh[2 * i + 1];
    uint64_t hi = 0;
    for (int k = 0; k < 8; ++k) hi = (hi << 8) | n.addr[k];
    img.tcam[i] = {hi, ~0ull, connected_codes[rng() % connected_codes.size()], regs::kTcamValid};
  }
  return img;
}

}  // namespace fibnic::fpga
