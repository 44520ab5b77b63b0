#include "ipnuma/arp_table.h"

#include <fstream>
#include <sstream>

namespace fibnic::ipnuma {

StatusOr<std::map<uint32_t, MacAddr>> ReadArpTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return IoError(path + ": cannot read");
  std::map<uint32_t, MacAddr> out;
  std::string line;
  std::getline(in, line);  // header
  constexpr unsigned kAtfCom = 0x2;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string ip, hw_type, flags, mac;
    if (!(ls >> ip >> hw_type >> flags >> mac)) continue;
    auto addr = IpAddr::Parse(ip);
    auto m = MacAddr::Parse(mac);
    unsigned f = 0;
    try {
      f = static_cast<unsigned>(std::stoul(flags, nullptr, 16));
    } catch (const std::exception&) {
      continue;
    }
    if (!addr.ok() || !addr->is_v4() || !m.ok() || !(f & kAtfCom) || m->IsZero()) continue;
    out[addr->v4()] = *m;
  }
  return out;
}

}  // namespace fibnic::ipnuma
