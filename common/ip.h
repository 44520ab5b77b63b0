// IP addresses, prefixes and MAC addresses shared by every part of fibnic.
// One type serves both families so the RIB, the sources and the REST API need
// no templates; the compilers take the raw integers (v4() / v6()) on hot paths.
#pragma once

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace fibnic {

__extension__ typedef unsigned __int128 U128;

enum class Family : uint8_t { kV4 = 4, kV6 = 6 };

inline const char* FamilyName(Family f) { return f == Family::kV4 ? "ipv4" : "ipv6"; }
inline int FamilyBits(Family f) { return f == Family::kV4 ? 32 : 128; }

class IpAddr {
 public:
  IpAddr() = default;
  static IpAddr V4(uint32_t host_order) { return IpAddr(Family::kV4, host_order); }
  static IpAddr V6(U128 host_order) { return IpAddr(Family::kV6, host_order); }
  // From 4 or 16 bytes in network order.
  static IpAddr FromBytes(Family f, const uint8_t* bytes);
  static StatusOr<IpAddr> Parse(std::string_view text);

  Family family() const { return family_; }
  bool is_v4() const { return family_ == Family::kV4; }
  uint32_t v4() const { return static_cast<uint32_t>(value_); }
  U128 v6() const { return value_; }
  // First 64 bits of an IPv6 address (what the TCAM matches).
  uint64_t v6_hi() const { return static_cast<uint64_t>(value_ >> 64); }
  // Network-order bytes; 4 or 16 of them are meaningful.
  std::array<uint8_t, 16> bytes() const;
  // 16 bytes, IPv4 as ::ffff:a.b.c.d (the NEIGH CAM format).
  std::array<uint8_t, 16> mapped16() const;
  std::string ToString() const;

  auto operator<=>(const IpAddr&) const = default;
  bool operator==(const IpAddr&) const = default;

 private:
  IpAddr(Family f, U128 v) : family_(f), value_(v) {}
  Family family_ = Family::kV4;
  U128 value_ = 0;
};

// A canonical prefix: host bits are always zero.
class Prefix {
 public:
  Prefix() = default;
  // Masks host bits. len must be <= the family's width (checked by Make).
  static StatusOr<Prefix> Make(IpAddr addr, int len);
  static Prefix V4(uint32_t addr, int len);
  static Prefix V6(U128 addr, int len);
  // "10.0.0.0/8", "2001:db8::/32"; a bare address is a host prefix. Host bits
  // that are set are an error (strict), like FRR's "inconsistent address/mask".
  static StatusOr<Prefix> Parse(std::string_view text);

  const IpAddr& addr() const { return addr_; }
  int len() const { return len_; }
  Family family() const { return addr_.family(); }
  bool Contains(const IpAddr& a) const;
  bool Contains(const Prefix& p) const { return p.len_ >= len_ && Contains(p.addr_); }
  IpAddr Last() const;  // highest address inside
  std::string ToString() const;

  auto operator<=>(const Prefix&) const = default;
  bool operator==(const Prefix&) const = default;

 private:
  IpAddr addr_;
  uint8_t len_ = 0;
};

struct U128Hash {
  size_t operator()(U128 v) const noexcept {
    return static_cast<uint64_t>(v) ^ (static_cast<uint64_t>(v >> 64) * 0x9E3779B97F4A7C15ull);
  }
};

uint32_t MaskV4(int len);
U128 MaskV6(int len);

struct MacAddr {
  std::array<uint8_t, 6> b{};
  static StatusOr<MacAddr> Parse(std::string_view text);  // aa:bb:cc:dd:ee:ff
  std::string ToString() const;
  bool IsZero() const { return b == std::array<uint8_t, 6>{}; }
  auto operator<=>(const MacAddr&) const = default;
  bool operator==(const MacAddr&) const = default;
};

// A DNS host name as an operator writes it in a config (letters, digits, '.',
// '-'; not starting with '.' or '-'; at most 253 characters).
bool IsHostName(std::string_view name);

}  // namespace fibnic

template <>
struct std::hash<fibnic::IpAddr> {
  size_t operator()(const fibnic::IpAddr& a) const noexcept {
    auto v = a.v6();
    uint64_t h = static_cast<uint64_t>(v) ^ (static_cast<uint64_t>(v >> 64) * 0x9E3779B97F4A7C15ull);
    return h ^ static_cast<uint8_t>(a.family());
  }
};

template <>
struct std::hash<fibnic::Prefix> {
  size_t operator()(const fibnic::Prefix& p) const noexcept {
    return std::hash<fibnic::IpAddr>()(p.addr()) * 31 + static_cast<size_t>(p.len());
  }
};
