// kdiff_bar BAR_FILE — the hardware side of the kernel differential harness
// (kdiff.py): answers, from the BAR image file fibnicd's file backend writes,
// what the FIBNIC would do with destinations, decoded with HwLookup exactly as
// the device contract describes the hardware. A long-running co-process: one
// request per stdin line, one answer line per request, flushed.
//   "gen"              → the GENERATION register
//   "ADDR ADDR ..."    → per address "f,PORT,MAC" (forward), "d" (dropped in
//                        the card: a VALID|DROP entry) or "p" (punt),
//                        "?" for a line that is not an address
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "common/ip.h"
#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kdiff_bar BAR_FILE\n");
    return 2;
  }
  const int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) {
    std::fprintf(stderr, "kdiff_bar: cannot open BAR image '%s'\n", argv[1]);
    return 1;
  }
  const size_t size = static_cast<size_t>(st.st_size);
  // Shared mapping: fibnicd's writes are seen as they happen.
  void* map = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    std::fprintf(stderr, "kdiff_bar: cannot map '%s'\n", argv[1]);
    return 1;
  }
  const auto* bar = static_cast<const uint8_t*>(map);
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "gen") {
      auto h = fibnic::DecodeBarHeader(bar, size);
      std::cout << (h.ok() ? std::to_string(h->generation) : "?") << '\n' << std::flush;
      continue;
    }
    std::istringstream words(line);
    std::string word;
    std::string out;
    while (words >> word) {
      if (!out.empty()) out += ' ';
      auto addr = fibnic::IpAddr::Parse(word);
      if (!addr.ok()) {
        out += '?';
        continue;
      }
      const fibnic::HwDecision d = fibnic::HwLookup(bar, size, *addr);
      out += d.forward ? "f," + std::to_string(d.port) + "," + d.dst_mac.ToString() : std::string(d.drop ? "d" : "p");
    }
    std::cout << out << '\n' << std::flush;
  }
  return 0;
}
