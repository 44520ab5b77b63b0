// Netlink messages built or recorded as bytes, copied to 4-byte-aligned
// storage: the product's parsers read nlmsghdr and its attributes in place,
// as they arrive from a socket's buffer.
#pragma once

#include <linux/netlink.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace fibnic::testing {

inline std::vector<uint32_t> Aligned(std::span<const uint8_t> bytes) {
  std::vector<uint32_t> out((bytes.size() + 3) / 4);
  if (!bytes.empty()) std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}
inline const nlmsghdr* Header(const std::vector<uint32_t>& aligned) {
  return reinterpret_cast<const nlmsghdr*>(aligned.data());
}
inline nlmsghdr* Header(std::vector<uint32_t>& aligned) { return reinterpret_cast<nlmsghdr*>(aligned.data()); }

}  // namespace fibnic::testing
