// What the web tests serve before (and besides) a full fibnicd: fibnicd's
// pipeline (a real Fib on its own strand) fed from a route file (or synthetic
// routes), pushed by the real FibnicWriter into an in-memory BAR0, with the
// independent oracle fed the same input. The Fib API runs on top of it
// through a FibView exactly as fibnicd mounts it, on the server's thread.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <atomic>
#include <chrono>

#include <boost/asio/io_context.hpp>

#include "fib/fib.h"
#include "fibnicd/pipeline.h"
#include "hwif/fibnic_writer.h"
#include "hwif/memory_bar.h"
#include "tests/oracle/reference_lpm.h"
#include "web/api/fib_api.h"
#include "web/http/router.h"
#include "web/http/telemetry.h"

namespace fibnic::web::testing {

class Harness {
 public:
  explicit Harness(FibConfig config = FibConfig());
  ~Harness();

  // Route and neighbour files (spec format), as static routes; lines that repeat
  // a prefix add ECMP paths. Commits and pushes.
  Status LoadRouteFiles(const std::string& routes, const std::string& neighbors);
  // v4 + v6 random routes over three gateways on ports 1..3 (one unresolved).
  Status LoadSynthetic(int v4, int v6, uint64_t seed);

  // Route changes that also reach the oracle; Commit() returns once they
  // are on the BAR (the pipeline's barrier).
  void Upsert(const Route& r);
  void Delete(const Prefix& p);
  Status Commit();

  // Mounts the Fib API (with static routes through the API) on router.
  Status Mount(boost::asio::io_context& io, Router& router, Telemetry* telemetry,
               std::chrono::milliseconds verify_interval = std::chrono::seconds(10));
  // Stops the API's timers (on the server thread) so its io_context can finish.
  void Unmount() { api_.reset(); }

  Pipeline& pipeline() { return *pipeline_; }
  // What the view is told of the strand: the pipeline's own answer, or
  // always busy (as in a routing daemon's burst that never ends).
  void SetStrandAlwaysBusy(bool busy) { always_busy_ = busy; }
  const std::shared_ptr<FibView>& view() const { return view_; }
  MemoryBar& bar() { return *bar_; }
  const oracle::ReferenceLpm& oracle() const { return oracle_; }
  // Distinct prefixes read per family (v4, v6) — counted from the input, not the Fib.
  const uint64_t* input_prefixes() const { return input_prefixes_; }
  const std::vector<Route>& routes() const { return routes_; }
  const std::vector<Neighbor>& neighbors() const { return neighbors_; }

 private:
  Status Start();
  void AddRouteLine(const Prefix& p, const NextHop& nh);

  FibConfig config_;
  std::unique_ptr<MemoryBar> bar_;
  std::unique_ptr<FibnicWriter> writer_;
  std::atomic<Telemetry*> telemetry_{nullptr};
  std::unique_ptr<Pipeline> pipeline_;  // after what its thread uses: stopped first
  std::atomic<bool> always_busy_{false};
  std::shared_ptr<FibView> view_;
  std::unique_ptr<FibApi> api_;
  oracle::ReferenceLpm oracle_;
  std::vector<Route> routes_;
  std::vector<Neighbor> neighbors_;
  uint64_t input_prefixes_[2] = {};
};

}  // namespace fibnic::web::testing
