#include "bench/fib/rte_fib_peer.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_fib.h>

#include <vector>

namespace fibnic::bench {

bool RteFibPeer::InitEal(std::string* error) {
  std::vector<std::string> args = {"fib-bench", "--no-huge", "--no-pci", "--no-shconf", "-l", "0", "-m", "1024",
                                   "--log-level=lib.eal:error", "--no-telemetry"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
    *error = std::string("rte_eal_init: ") + rte_strerror(rte_errno);
    return false;
  }
  return true;
}

RteFibPeer::RteFibPeer(uint32_t max_routes) {
  rte_fib_conf conf{};
  conf.type = RTE_FIB_DIR24_8;
  conf.default_nh = 0;
  conf.max_routes = static_cast<int>(max_routes);
  conf.rib_ext_sz = 0;
  // 2-byte next-hops: the smallest size whose tbl8 index reaches the real
  // table's ~1000 /24s with longer routes (1-byte allows 128 tbl8 groups).
  conf.dir24_8.nh_sz = RTE_FIB_DIR24_8_2B;
  conf.dir24_8.num_tbl8 = 1 << 14;
  fib_ = rte_fib_create("fib_bench", -1, &conf);
}

RteFibPeer::~RteFibPeer() { rte_fib_free(fib_); }

int RteFibPeer::Add(uint32_t addr, uint8_t depth, uint64_t nh) { return rte_fib_add(fib_, addr, depth, nh); }
int RteFibPeer::Delete(uint32_t addr, uint8_t depth) { return rte_fib_delete(fib_, addr, depth); }


}  // namespace fibnic::bench
