#include "hwif/probe.h"

#include <cstdio>

#include "hwif/bar_words.h"

namespace fibnic {

std::string Hex32(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%08x", v);
  return buf;
}

Status ExpectRegister(Bar& bar, const std::string& what, uint32_t offset, uint32_t expected, uint32_t mask) {
  auto v = bar.Read32(offset);
  if (!v.ok()) return v.status().WithContext("reading " + what + " at " + HexOffset(offset));
  if ((*v & mask) == expected) return OkStatus();
  std::string msg = what + " at " + HexOffset(offset) + ": expected " + Hex32(expected) + ", found " +
                    Hex32(*v & mask);
  if (*v == 0xFFFFFFFFu) msg += " (all ones: the device is not responding — memory decoding off, link down or removed)";
  if (*v == 0) msg += " (zero: an empty file or a device that was never initialised)";
  return FailedPrecondition(msg);
}

}  // namespace fibnic
