// kdiff_bar BAR_FILE — the hardware side of the kernel differential harness
// (kdiff.py): answers, from the BAR image file fibnicd's file backend writes,
// what the FIBNIC would do with destinations, decoded with HwLookup exactly as
// the device contract describes the hardware. A long-running co-process: one
// request per stdin line, one answer line per request, flushed.
//   "gen"              → the GENERATION register
//   "ADDR ADDR ..."    → per address "f,PORT,MAC" (forward), "d" (dropped in
//                        the card: a VALID|DROP entry) or "p" (punt),
//                        "?" for a line that is not an address
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "common/ip.h"
#include "common/mapped_region.h"
#include "device/fibnic_image_codec.h"
#include "device/fibnic_lookup.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: kdiff_bar BAR_FILE\n");
    return 2;
  }
  // Shared mapping of the file or of the BAR map on a bpffs: fibnicd's
  // writes are seen as they happen.
  auto view = fibnic::MappedRegion::Open(argv[1]);
  if (!view.ok()) {
    std::fprintf(stderr, "kdiff_bar: cannot open BAR image: %s\n", view.status().ToString().c_str());
    return 1;
  }
  const size_t size = view->size();
  const uint8_t* bar = view->data();
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
