// The FPM source's offload replies to zebra (sources/fpm/fpm_offload.h) get
// their states from the Fib: asked on the source's loop, answered on the
// pipeline thread once the routes asked about are on the device (or their
// push failed).
#pragma once

#include <vector>

#include "fibnicd/pipeline.h"
#include "sources/fpm/fpm_reply.h"

namespace fibnic {

// What zebra is told about each of its routes — the kernel source's route
// for the prefix, as zebra installed it in the kernel: offloaded when the
// FIBNIC forwards all of it; trapped when it punts any of it (the host
// forwards that), when another source's route for the prefix wins, or it is
// not the FIBNIC's to forward at all (to-host); failed when !on_device; none
// when the Fib holds no kernel route for it (deleted meanwhile).
std::vector<FpmOffload> FpmOffloadOf(const Fib& fib, const std::vector<Prefix>& prefixes, bool on_device);

class FibOffloadOracle : public FpmOffloadOracle {
 public:
  explicit FibOffloadOracle(Pipeline& pipeline) : pipeline_(pipeline) {}
  void Ask(std::vector<Prefix> prefixes, std::function<void(std::vector<FpmOffload>)> answer) override;
  uint64_t commits() const override { return pipeline_.metrics().batches; }

 private:
  Pipeline& pipeline_;
};

}  // namespace fibnic
