// The benchmark peer: DPDK's rte_fib (DIR24_8), the reference software FIB,
// behind a tiny C++ face so the bench never touches DPDK types.
#pragma once

#include <cstdint>
#include <string>

struct rte_fib;

namespace fibnic::bench {

class RteFibPeer {
 public:
  // Starts the EAL once (no hugepages, no PCI, core 0) and creates the FIB.
  static bool InitEal(std::string* error);
  explicit RteFibPeer(uint32_t max_routes);
  ~RteFibPeer();
  bool ok() const { return fib_ != nullptr; }
  int Add(uint32_t addr, uint8_t depth, uint64_t nh);
  int Delete(uint32_t addr, uint8_t depth);

 private:
  ::rte_fib* fib_ = nullptr;
};

}  // namespace fibnic::bench
