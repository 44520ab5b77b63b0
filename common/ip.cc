#include "common/ip.h"

#include <arpa/inet.h>

#include <charconv>
#include <cstdio>

namespace fibnic {

IpAddr IpAddr::FromBytes(Family f, const uint8_t* bytes) {
  U128 v = 0;
  const int n = f == Family::kV4 ? 4 : 16;
  for (int i = 0; i < n; ++i) v = (v << 8) | bytes[i];
  return IpAddr(f, v);
}

StatusOr<IpAddr> IpAddr::Parse(std::string_view text) {
  std::string s(text);
  uint8_t buf[16];
  if (s.find(':') == std::string::npos) {
    if (inet_pton(AF_INET, s.c_str(), buf) == 1) return FromBytes(Family::kV4, buf);
  } else if (inet_pton(AF_INET6, s.c_str(), buf) == 1) {
    return FromBytes(Family::kV6, buf);
  }
  return InvalidArgument("bad IP address '" + s + "'");
}

std::array<uint8_t, 16> IpAddr::bytes() const {
  std::array<uint8_t, 16> out{};
  const int n = is_v4() ? 4 : 16;
  U128 v = value_;
  for (int i = n - 1; i >= 0; --i) {
    out[i] = static_cast<uint8_t>(v);
    v >>= 8;
  }
  return out;
}

std::array<uint8_t, 16> IpAddr::mapped16() const {
  if (!is_v4()) return bytes();
  std::array<uint8_t, 16> out{};
  out[10] = out[11] = 0xff;
  auto b = bytes();
  for (int i = 0; i < 4; ++i) out[12 + i] = b[i];
  return out;
}

std::string IpAddr::ToString() const {
  char buf[INET6_ADDRSTRLEN];
  auto b = bytes();
  inet_ntop(is_v4() ? AF_INET : AF_INET6, b.data(), buf, sizeof buf);
  return buf;
}

uint32_t MaskV4(int len) { return len == 0 ? 0 : ~uint32_t{0} << (32 - len); }
U128 MaskV6(int len) { return len == 0 ? U128{0} : ~U128{0} << (128 - len); }

StatusOr<Prefix> Prefix::Make(IpAddr addr, int len) {
  if (len < 0 || len > FamilyBits(addr.family())) {
    return InvalidArgument("prefix length " + std::to_string(len) + " out of range for " +
                           FamilyName(addr.family()));
  }
  return addr.is_v4() ? V4(addr.v4(), len) : V6(addr.v6(), len);
}

Prefix Prefix::V4(uint32_t addr, int len) {
  Prefix p;
  p.addr_ = IpAddr::V4(addr & MaskV4(len));
  p.len_ = static_cast<uint8_t>(len);
  return p;
}

Prefix Prefix::V6(U128 addr, int len) {
  Prefix p;
  p.addr_ = IpAddr::V6(addr & MaskV6(len));
  p.len_ = static_cast<uint8_t>(len);
  return p;
}

StatusOr<Prefix> Prefix::Parse(std::string_view text) {
  auto slash = text.find('/');
  auto addr = IpAddr::Parse(text.substr(0, slash));
  if (!addr.ok()) return InvalidArgument("bad prefix '" + std::string(text) + "': " + addr.status().message());
  int bits = FamilyBits(addr->family());
  int len = bits;
  if (slash != std::string_view::npos) {
    auto lt = text.substr(slash + 1);
    auto [ptr, ec] = std::from_chars(lt.data(), lt.data() + lt.size(), len);
    if (ec != std::errc() || ptr != lt.data() + lt.size() || lt.empty() || len < 0 || len > bits) {
      return InvalidArgument("bad prefix '" + std::string(text) + "': length must be 0.." + std::to_string(bits));
    }
  }
  auto p = Make(*addr, len);
  if (!p.ok()) return p.status();
  if (p->addr() != *addr) {
    return InvalidArgument("bad prefix '" + std::string(text) + "': host bits set (did you mean " +
                           p->ToString() + "?)");
  }
  return p;
}

bool Prefix::Contains(const IpAddr& a) const {
  if (a.family() != family()) return false;
  if (a.is_v4()) return (a.v4() & MaskV4(len_)) == addr_.v4();
  return (a.v6() & MaskV6(len_)) == addr_.v6();
}

IpAddr Prefix::Last() const {
  if (addr_.is_v4()) return IpAddr::V4(addr_.v4() | ~MaskV4(len_));
  return IpAddr::V6(addr_.v6() | ~MaskV6(len_));
}

std::string Prefix::ToString() const { return addr_.ToString() + "/" + std::to_string(len_); }

StatusOr<MacAddr> MacAddr::Parse(std::string_view text) {
  MacAddr m;
  unsigned v[6];
  char tail;
  std::string s(text);
  if (std::sscanf(s.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &tail) != 6 ||
      s.size() != 17) {
    return InvalidArgument("bad MAC address '" + s + "' (want aa:bb:cc:dd:ee:ff)");
  }
  for (int i = 0; i < 6; ++i) m.b[i] = static_cast<uint8_t>(v[i]);
  return m;
}

std::string MacAddr::ToString() const {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5]);
  return buf;
}

bool IsHostName(std::string_view name) {
  return !name.empty() && name.size() <= 253 && name.front() != '.' && name.front() != '-' &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") ==
             std::string_view::npos;
}

}  // namespace fibnic
