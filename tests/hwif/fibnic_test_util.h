// Helpers for hwif tests: images with a few routes set by hand (SmallImage), devices made
// from them, and the per-write safety check (every intermediate BAR forwards
// each probe address as the old state, the new state, or punts).
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "device/fibnic_image.h"
#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"
#include "hwif/memory_bar.h"
#include "tests/support/device_image.h"
#include "tests/support/parse.h"

namespace fibnic::testing_util {

using fibnic::testing::A;
using fibnic::testing::Mac;
using fibnic::testing::SetCode;

// What a lookup does, reduced to what matters for misforwarding.
struct Answer {
  bool forward = false;
  MacAddr mac;
  uint8_t port = 0;
  bool operator==(const Answer&) const = default;
  std::string ToString() const {
    return forward ? "forward " + mac.ToString() + " port " + std::to_string(port) : "punt";
  }
};

inline Answer Look(const uint8_t* bar, size_t size, const IpAddr& dst) {
  const HwDecision d = HwLookup(bar, size, dst);
  return d.forward ? Answer{true, d.dst_mac, d.port} : Answer{};
}

inline regs::NexthopEntry Nh(const char* mac, uint8_t port, bool connected = false) {
  regs::NexthopEntry e;
  e.dst_mac = Mac(mac);
  e.port = port;
  e.flags = regs::kNexthopValid | (connected ? regs::kNexthopConnected : 0);
  return e;
}

inline regs::NeighEntry Neigh(const IpAddr& addr, const char* mac, uint8_t port) {
  regs::NeighEntry e;
  e.addr = addr.mapped16();
  e.mac = Mac(mac);
  e.port = port;
  e.flags = regs::kNeighValid;
  return e;
}

inline regs::Tcam6Entry Tcam(const char* prefix, uint8_t code) {
  const Prefix p = *Prefix::Parse(prefix);
  regs::Tcam6Entry e;
  e.value = p.addr().v6_hi();
  e.mask = p.len() == 0 ? 0 : ~uint64_t{0} << (64 - std::min(p.len(), 64));
  e.code = code;
  e.flags = regs::kTcamValid;
  return e;
}

constexpr uint32_t k10_0_0 = 0x0A0000;  // 10.0.0.0/24 as /24 index

// A small 2-bit image: port 0's MAC, next-hops 1 and 2 (on ports 0 and 1),
// and 10.0.0.0/18 (64 /24s) on next-hop 1.
inline DeviceImage SmallImage() {
  DeviceImage img;
  img.port_macs[0] = Mac("0e:00:00:00:00:00");
  img.nexthop[1] = Nh("02:00:00:00:00:01", 0);
  img.nexthop[2] = Nh("02:00:00:00:00:02", 1);
  for (uint32_t i = 0; i < 64; ++i) SetCode(img, k10_0_0 + i, 1);
  return img;
}

inline std::unique_ptr<MemoryBar> MakeDevice(const DeviceImage& img, uint32_t generation = 0) {
  return std::make_unique<MemoryBar>(EncodeBar(img, generation));
}

// The SRAM word values of an image, as a DeviceDelta carries them.
inline uint16_t SramWordValue(const DeviceImage& img, uint32_t a) {
  if (img.caps.code_bits == 4) return static_cast<uint16_t>(img.sram[2 * a] | (img.sram[2 * a + 1] << 8));
  return img.sram[a];
}

// Checks one intermediate BAR: each probe's answer must be punt or one of
// the answers in allowed[i]. Returns a failure description, or nullopt.
inline std::optional<std::string> CheckProbes(const uint8_t* bar, size_t size, const std::vector<IpAddr>& probes,
                                              const std::vector<std::vector<Answer>>& allowed) {
  for (size_t i = 0; i < probes.size(); ++i) {
    const Answer got = Look(bar, size, probes[i]);
    if (!got.forward) continue;
    bool ok = false;
    for (const auto& a : allowed[i]) ok = ok || a == got;
    if (!ok) {
      std::string want;
      for (const auto& a : allowed[i]) want += (want.empty() ? "" : " | ") + a.ToString();
      return probes[i].ToString() + ": " + got.ToString() + " (allowed: punt" + (want.empty() ? "" : " | " + want) +
             ")";
    }
  }
  return std::nullopt;
}

}  // namespace fibnic::testing_util
