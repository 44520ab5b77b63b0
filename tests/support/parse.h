// Shorthands for the addresses tests write by hand: a parse that cannot fail
// on a literal, so a typo aborts the test at once rather than testing nothing.
#pragma once

#include <cstdint>
#include <string_view>

#include "common/ip.h"

namespace fibnic::testing {

inline Prefix P(std::string_view s) { return *Prefix::Parse(s); }
inline IpAddr A(std::string_view s) { return *IpAddr::Parse(s); }
// An IPv4 address as the device's registers hold it (host order).
inline uint32_t Ip(std::string_view s) { return IpAddr::Parse(s).value().v4(); }
inline MacAddr Mac(const char* s) { return *MacAddr::Parse(s); }
// A locally administered MAC told apart by its last byte: 02:00:00:00:00:last.
inline MacAddr Mac(uint8_t last) { return MacAddr{{0x02, 0, 0, 0, 0, last}}; }

}  // namespace fibnic::testing
