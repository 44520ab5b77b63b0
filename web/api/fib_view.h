// What the Fib REST API reads, so that no web request touches the Fib or the
// device from the web thread, and none can stall a commit:
//  - a status snapshot (commits, GENERATION, CONTROL, counts) that the Fib's
//    owner publishes after each commit and readers take without waiting;
//  - the Fib itself only on its strand: OnStrand posts a closure there and
//    waits a bounded time (Unavailable → 503 when the strand is busy longer);
//  - the device tables from the writer's shadow (what was written), copied
//    on the strand; the live device only through Verify.
//
// Fib::Counts() passes over every /24 cell and every IPv6 route (50-100 ms
// on a full table) and the SRAM copy moves 4-8 MiB. The recount runs on the
// strand in steps of a few ms (Fib::CountStep), each posted behind whatever
// waits there, so a batch that arrives meanwhile waits one step, not a pass;
// a change between steps voids the pass. A pass starts at most once per
// commit, and never sooner than 20x the strand time of the previous one
// (≤ 5% of the strand); in between, readers get the previous counts with
// their age. While a routing daemon's burst is under way
// (Options::strand_busy: updates waiting, or a batch moments ago) a pass
// waits 100x instead (≤ 1%), or until the burst is over: in a burst every
// bit of the strand is owed to the routes, and a pass started there would
// be voided anyway. Once a web reader (status, /metrics) has first asked
// for counts, they follow every commit by themselves
// (Publish schedules the recount, delayed by that bound when needed), so a
// status asked after a quiet spell is true — not the counts of the previous
// request; the SRAM copy is made only when a client asks. The very first
// counts are made in one go: a reader waits for them.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/cost_bound.h"
#include "common/status.h"
#include "fib/fib.h"
#include "hwif/device_writer.h"

namespace fibnic::web {

struct FibSnapshot {
  uint64_t commits = 0;      // Fib::commits() when published
  uint32_t generation = 0;   // GENERATION as last written
  bool device_in_sync = false;
  uint32_t control = 0;      // CONTROL as last written
  std::optional<FibCounts> counts;  // as of counts_commits; none until a client first asked
  uint64_t counts_commits = 0;
  std::chrono::steady_clock::time_point counts_at;
};

// The IPv4 SRAM a picture shows: the writer's shadow (what the device holds),
// or the compiled image without a device.
struct SramCopy {
  std::string source;  // "device" or "image"
  int code_bits = 2;
  uint32_t generation = 0;
  uint64_t commits = 0;
  std::vector<uint8_t> bytes;
};

class FibView : public std::enable_shared_from_this<FibView> {
 public:
  // Runs a closure on the Fib's strand (the pipeline's io_context).
  using Post = std::function<void(std::function<void()>)>;
  // Runs a closure on the Fib's strand after a delay (a timer on it).
  using PostAfter = std::function<void(std::chrono::steady_clock::duration, std::function<void()>)>;
  struct Options {
    // Set: the counts are recounted after every commit (within the cost
    // bound). Unset: only when a status or /metrics request finds them old.
    PostAfter post_after;
    std::chrono::milliseconds strand_timeout{2000};   // a query's wait for the strand (then 503)
    std::chrono::milliseconds verify_timeout{30000};  // a verify reads the whole device on the strand
    double cost_factor = 20;                          // see the file comment
    // Set: whether a burst of updates is under way (called on the strand);
    // while it is, recounts wait busy_cost_factor x their cost instead.
    std::function<bool()> strand_busy;
    double busy_cost_factor = 100;
    std::chrono::milliseconds busy_recheck{100};  // a waiting recount looks again whether the burst is over
    std::chrono::microseconds count_step{5000};  // a recount step's length on the strand
  };

  // fib and writer (null = no device) are touched only on the strand and
  // must outlive every closure posted there.
  static std::shared_ptr<FibView> Create(Post post, const Fib& fib, DeviceWriter* writer, Options options);
  static std::shared_ptr<FibView> Create(Post post, const Fib& fib, DeviceWriter* writer) {
    return Create(std::move(post), fib, writer, Options{});
  }

  // On the strand, after every commit (cheap: no pass over the tables; the
  // recount it schedules runs later on the strand, within the cost bound).
  void Publish();

  // Any thread. The latest snapshot; never waits.
  std::shared_ptr<const FibSnapshot> snapshot() const;
  // The latest snapshot with counts: asks the strand for fresh counts when a
  // commit happened since and the cost bound allows, without waiting for
  // them — except the very first time, when there are none yet.
  StatusOr<std::shared_ptr<const FibSnapshot>> SnapshotWithCounts();
  // The SRAM as of the latest commit (within the cost bound).
  StatusOr<std::shared_ptr<const SramCopy>> Sram();
  // On the strand only (fibnicd's heartbeat): the latest counts, made now
  // (in one go) when there are none yet; when they are older than the last
  // commit, one recount is started (in steps, within the cost bound) for a
  // later call. Unlike a web reader's first ask, it does not make the counts
  // follow every commit: no one may be reading them.
  FibCounts CountsOnStrand();
  // Reads the device back and compares it with the compiled image (on the strand).
  StatusOr<VerifyReport> Verify();
  bool has_device() const { return writer_ != nullptr; }
  // For closures run through OnStrand only (the writer is the strand's).
  const DeviceWriter* writer() const { return writer_; }
  const FibConfig& config() const { return config_; }

  // Runs fn(fib) on the strand and returns its result; Unavailable if the
  // strand did not get to it within the timeout (fn then never runs). fn may
  // hold references to the caller's stack: once it has started, OnStrand
  // waits for it to finish.
  template <typename F>
  auto OnStrand(F fn) -> StatusOr<std::invoke_result_t<F&, const Fib&>> {
    return OnStrandFor(std::move(fn), options_.strand_timeout);
  }
  template <typename F>
  auto OnStrandFor(F fn, std::chrono::milliseconds timeout) -> StatusOr<std::invoke_result_t<F&, const Fib&>>;

 private:
  FibView(Post post, const Fib& fib, DeviceWriter* writer, Options options);
  void Swap(std::shared_ptr<const FibSnapshot> next);
  void RefreshCounts();  // on the strand: one step of a recount (all of it the first time)
  void ScheduleCounts();  // on the strand: a recount now or when the cost bound allows

  Post post_;
  const Fib* fib_;
  DeviceWriter* writer_;
  const FibConfig config_;
  Options options_;

  mutable std::mutex mu_;
  std::shared_ptr<const FibSnapshot> snapshot_;
  bool counts_pending_ = false;  // a recount is posted or running
  bool followed_ = false;        // a web reader asked: recounts follow the commits
  bool counts_running_ = false;  // it has started on the strand
  std::condition_variable counts_cv_;
  CostBound counts_cost_;
  Fib::CountsPassPtr pass_;  // the recount under way (the strand's)
  std::chrono::steady_clock::duration pass_spent_{0};  // its steps' time so far
  std::shared_ptr<const SramCopy> sram_;
  CostBound sram_cost_;
};

template <typename F>
auto FibView::OnStrandFor(F fn, std::chrono::milliseconds timeout) -> StatusOr<std::invoke_result_t<F&, const Fib&>> {
  using R = std::invoke_result_t<F&, const Fib&>;
  enum class State { kQueued, kRunning, kDone, kAbandoned };
  struct Call {
    std::mutex mu;
    std::condition_variable cv;
    State state = State::kQueued;
    std::optional<R> result;
  };
  auto call = std::make_shared<Call>();
  post_([call, &fn, fib = fib_] {
    {
      std::lock_guard<std::mutex> lock(call->mu);
      if (call->state == State::kAbandoned) return;  // fn's owner is gone
      call->state = State::kRunning;
    }
    std::optional<R> r(fn(*fib));
    std::lock_guard<std::mutex> lock(call->mu);
    call->result = std::move(r);
    call->state = State::kDone;
    call->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(call->mu);
  call->cv.wait_for(lock, timeout, [&] { return call->state == State::kDone; });
  if (call->state == State::kQueued) {
    call->state = State::kAbandoned;
    return Unavailable("the Fib's strand is busy: no answer within " + std::to_string(timeout.count()) +
                       " ms; try again");
  }
  call->cv.wait(lock, [&] { return call->state == State::kDone; });  // started: bounded by fn itself
  return std::move(*call->result);
}

}  // namespace fibnic::web
