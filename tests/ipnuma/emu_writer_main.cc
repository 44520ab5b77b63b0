// A program on the host that writes through libipnuma, driven line by line
// by a test (tests/ipnuma/emu_namespace_test.py):
//   w OFFSET HEX   -> "ok" | "err ERRNO MESSAGE"
//   p OFFSET HEX   -> the same, posted (ipnuma_write_posted)
//   flush          -> "ok" | "err ERRNO MESSAGE" (ipnuma_flush)
//   r OFFSET LEN   -> "ok HEX" | "err ERRNO MESSAGE"
//   reset PCID     -> "ok" | "err ERRNO MESSAGE"
// OFFSET is a BAR2 offset; ERRNO the positive errno the call returned.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "ipnuma/client.h"

namespace {

std::vector<uint8_t> FromHex(const std::string& h) {
  std::vector<uint8_t> out(h.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<uint8_t>(std::stoul(h.substr(2 * i, 2), nullptr, 16));
  return out;
}

std::string ToHex(const std::vector<uint8_t>& b) {
  static const char* d = "0123456789abcdef";
  std::string s;
  for (uint8_t x : b) s += {d[x >> 4], d[x & 15]};
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: ipnuma_emu_writer PAGES_FILE [SOCKET]\n");
    return 2;
  }
  ipnuma_client* c = ipnuma_open(argv[1], argc == 3 ? argv[2] : nullptr);
  if (c == nullptr) {
    std::fprintf(stderr, "ipnuma_emu_writer: cannot open %s: %s\n", argv[1], std::strerror(errno));
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string op;
    uint64_t offset = 0;
    in >> op >> offset;
    int rc = 0;
    std::string data;
    if (op == "w" || op == "p") {
      std::string hex;
      in >> hex;
      const auto bytes = FromHex(hex);
      rc = op == "w" ? ipnuma_write(c, offset, bytes.data(), bytes.size())
                     : ipnuma_write_posted(c, offset, bytes.data(), bytes.size());
    } else if (op == "flush") {
      rc = ipnuma_flush(c);
    } else if (op == "r") {
      size_t len = 0;
      in >> len;
      std::vector<uint8_t> bytes(len);
      rc = ipnuma_read(c, offset, bytes.data(), len);
      if (rc == 0) data = " " + ToHex(bytes);
    } else if (op == "reset") {
      rc = ipnuma_reset_peer(c, static_cast<uint16_t>(offset));
    } else {
      rc = -EINVAL;
    }
    if (rc == 0) std::cout << "ok" << data << std::endl;
    else std::cout << "err " << -rc << " " << ipnuma_last_error(c) << std::endl;
  }
  ipnuma_close(c);
  return 0;
}
