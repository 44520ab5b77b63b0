#include "fpga/bench/traffic.h"

#include "fpga/model/test_frames.h"

namespace fibnic::fpga {

TrafficGenerator::TrafficGenerator(const DeviceImage& img, std::mt19937& rng) : img_(img), rng_(rng) {
  // Reservoir-sample up to 256 /24s for each code value present in SRAM4.
  slash24_by_code_.resize(size_t{1} << img.caps.code_bits);
  std::vector<uint32_t> seen(slash24_by_code_.size(), 0);
  for (uint32_t s = 0; s < (1u << 24); ++s) {
    const uint8_t c = img.CodeOf24(s);
    auto& v = slash24_by_code_[c];
    if (v.size() < 256) {
      v.push_back(s);
    } else if (rng_() % (seen[c] + 1) < 256) {
      v[rng_() % 256] = s;
    }
    ++seen[c];
  }
  for (const auto& n : img.neigh) {
    if (!n.valid()) continue;
    const bool v4 = n.addr[0] == 0 && n.addr[10] == 0xff && n.addr[11] == 0xff;
    if (v4) neigh_v4_.push_back(IpAddr::FromBytes(Family::kV4, n.addr.data() + 12));
    else neigh_v6_.push_back(IpAddr::FromBytes(Family::kV6, n.addr.data()));
  }
}

IpAddr TrafficGenerator::PickV4() {
  const int k = static_cast<int>(rng_() % 100);
  if (k < 15 && !neigh_v4_.empty()) return neigh_v4_[rng_() % neigh_v4_.size()];
  if (k < 85) {
    const auto& v = slash24_by_code_[rng_() % slash24_by_code_.size()];
    if (!v.empty()) return IpAddr::V4((v[rng_() % v.size()] << 8) | (rng_() & 0xff));
  }
  return IpAddr::V4(rng_());
}

IpAddr TrafficGenerator::PickV6() {
  const int k = static_cast<int>(rng_() % 100);
  if (k < 25 && !neigh_v6_.empty()) return neigh_v6_[rng_() % neigh_v6_.size()];
  if (k < 90) {
    const auto& e = img_.tcam[rng_() % img_.tcam.size()];
    const uint64_t hi = e.value | ((uint64_t{rng_()} << 32 | rng_()) & ~e.mask);
    return IpAddr::V6((U128{hi} << 64) | (uint64_t{rng_()} << 32 | rng_()));
  }
  return IpAddr::V6((U128{uint64_t{rng_()} << 32 | rng_()} << 64) | rng_());
}

size_t TrafficGenerator::PickSize(size_t min) {
  const int k = static_cast<int>(rng_() % 100);
  if (k < 30) return std::max<size_t>(64, min);
  if (k < 40) return 1518;
  return std::max<size_t>(min, 64 + rng_() % (1518 - 64 + 1));
}

TestFrame TrafficGenerator::Next() {
  TestFrame t;
  t.port = static_cast<uint8_t>(rng_() % img_.caps.ports);
  const MacAddr own = img_.port_macs[t.port];
  const uint32_t seed = ++seq_;
  const int kind = static_cast<int>(rng_() % 100);
  auto pct = [&](int p) { return static_cast<int>(rng_() % 100) < p; };

  if (kind < 4) {  // ARP, to broadcast or to us
    t.bytes = BuildEtherFrame(pct(50) ? MacAddr{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}} : own, 0x0806, 64, seed);
    return t;
  }
  if (kind < 7) {  // VLAN-tagged, LLDP, unknown
    static constexpr uint16_t kTypes[] = {0x8100, 0x88cc, 0x1234, 0x0801, 0x86dc};
    t.bytes = BuildEtherFrame(own, kTypes[rng_() % 5], PickSize(64), seed);
    return t;
  }
  FrameSpec s;
  s.dst_mac = own;
  s.payload_seed = seed;
  t.ipv6 = kind >= 62;
  if (t.ipv6) {
    s.src = IpAddr::V6((U128{0x20010db8ffff0000ull} << 64) | seed);
    s.dst = PickV6();
    s.protocol = pct(80) ? 17 : (pct(50) ? 58 : 0);
    if (s.protocol == 58) s.icmp6_type = static_cast<uint8_t>(pct(60) ? 133 + rng_() % 5 : 128 + rng_() % 2);
  } else {
    s.src = IpAddr::V4(0xc0000200u | (seed & 0xff));
    s.dst = PickV4();
    s.protocol = pct(80) ? 17 : 6;
    if (pct(5)) s.ipv4_option_words = static_cast<uint8_t>(1 + rng_() % 10);
    s.bad_ip_checksum = pct(4);
  }
  s.size = PickSize(t.ipv6 ? 64 : 64 + 4u * s.ipv4_option_words);
  static constexpr uint8_t kTtls[] = {0, 1, 2, 3, 255};
  s.ttl = pct(75) ? 64 : kTtls[rng_() % 5];
  s.bad_fcs = pct(4);
  const int l2 = static_cast<int>(rng_() % 100);
  if (l2 < 3) s.dst_mac = MacAddr{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
  else if (l2 < 5) s.dst_mac = t.ipv6 ? MacAddr{{0x33, 0x33, 0, 0, 0, 1}} : MacAddr{{0x01, 0, 0x5e, 0, 0, 1}};
  else if (l2 < 9) s.dst_mac = img_.port_macs[(t.port + 1 + rng_() % 3) % img_.caps.ports];
  t.bytes = BuildIpFrame(s);
  if (pct(2)) t.bytes.resize(1 + rng_() % 63);  // runt: cut anywhere in the headers
  return t;
}

}  // namespace fibnic::fpga
