// A number as error messages and logs print addresses, offsets and masks:
// "0x" and lowercase hex digits.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace fibnic {

inline std::string Hex(uint64_t v) {
  char b[24];
  std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace fibnic
