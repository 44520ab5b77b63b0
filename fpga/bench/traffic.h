// The frames the bench streams, chosen from the device image so that every
// code, TCAM entry and neighbour gets traffic: IPv4/IPv6 of 64..1518 bytes,
// TTL 0/1/2, IPv4 options, bad checksums and FCS, ARP, NDP, broadcast,
// multicast, unknown ethertypes, wrong destination MAC, runts.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "device/fibnic_image.h"

namespace fibnic::fpga {

struct TestFrame {
  uint8_t port = 0;
  std::vector<uint8_t> bytes;
  bool ipv6 = false;
};

class TrafficGenerator {
 public:
  TrafficGenerator(const DeviceImage& img, std::mt19937& rng);
  TestFrame Next();

 private:
  IpAddr PickV4();
  IpAddr PickV6();
  size_t PickSize(size_t min);

  const DeviceImage& img_;
  std::mt19937& rng_;
  std::vector<std::vector<uint32_t>> slash24_by_code_;  // sampled /24s per SRAM code
  std::vector<IpAddr> neigh_v4_, neigh_v6_;
  uint32_t seq_ = 0;
};

}  // namespace fibnic::fpga
