// The update pipeline: sources → UpdateQueue → Fib (own thread, the Fib's only
// strand) → batched Commit() → DeviceWriter (hwif/device_writer.h).
//
// Batching: a batch is cut when its oldest update has waited batch_delay, or
// when batch_max updates are pending, whichever comes first; while a batch is
// compiled and pushed, new updates keep coalescing in the queue, so a full
// table converges in few large batches and a lone change goes out after at
// most batch_delay plus one compile and push. Each commit is pushed in two
// steps: what makes the device safe for the batch (Fib::CommitSafe), then the
// IPv6 TCAM's best entries, whose choice is the costly part (CommitBest). The
// choice runs in steps of kBestStep; between steps the thread's other work
// runs (a batch handed in meanwhile goes out safe; its IPv6 changes wait for
// the next choice), so a change waits for one step, not a whole choice.
// During a burst a new choice begins no sooner than kChoicePace after the last
// one began, and at once when no batch has come for kChoiceIdle: a choice's
// cost is mostly fixed, so choices of a few changes each (a thread that gets
// the CPU whenever it asks cuts small batches) cost about ten times more per
// change than one that covers a burst's tenth of a second. Meanwhile the
// device stays safe: each batch's CommitSafe punts what its changes make wrong.
// Sources never wait for the device: the queue only takes a lock.
//
// Start-up: until FinishInitialSync() the pipeline only applies updates to the
// Fib (no pushes); then it reads the device back, lets the Fib adopt the
// device's slot numbering and CAM placement, compiles once and Sync()s the
// device — a restart with an unchanged table writes nothing. After a failed push the device's
// state is unknown, so the next batch re-Syncs instead of pushing deltas.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

#include "hwif/device_writer.h"
#include "fibnicd/update_queue.h"
#include "fib/fib.h"

namespace fibnic {

struct BatchPolicy {
  std::chrono::nanoseconds delay = std::chrono::milliseconds(1);
  uint32_t max = 100000;
};

// Route-install latency: from an update entering the queue (a key's first
// pending arrival, so a coalesced update counts from its oldest value) to its
// batch's push completing. Every update of a pushed batch is one observation;
// the initial sync's updates are not (they wait for the first dump by design),
// nor are those of a failed push (the resync that installs them is counted in
// resyncs). Bounds in seconds; counts per bucket, the last one above them all.
struct InstallLatency {
  // Fine around a single update's 1-2 ms, coarse up to a full table's tens of seconds.
  static constexpr std::array<double, 21> kBounds = {0.00025, 0.0005, 0.00075, 0.001, 0.0015, 0.002, 0.003,
                                                    0.005,   0.0075, 0.01,    0.02,  0.05,   0.1,   0.2,
                                                    0.5,     1,      2,       5,     10,     30,    60};
  std::array<uint64_t, kBounds.size() + 1> counts{};
  double sum_s = 0;
  uint64_t count = 0;
  void Observe(double seconds);
};

// Back-pressure and timing, for /metrics, the status line and fibnicctl.
struct PipelineMetrics {
  uint64_t updates_received = 0;   // handed in by sources
  uint64_t updates_coalesced = 0;  // replaced a pending update of the same key
  uint64_t updates_applied = 0;    // given to the Fib
  size_t queue_depth = 0;          // pending now
  size_t queue_depth_max = 0;
  uint64_t batches = 0;            // commits pushed (or synced)
  uint64_t batch_size_last = 0;
  uint64_t batch_size_max = 0;
  int64_t commit_ns_last = 0, commit_ns_max = 0, commit_ns_total = 0;
  int64_t push_ns_last = 0, push_ns_max = 0, push_ns_total = 0;
  // From the oldest update of a batch arriving to the batch being on the device.
  int64_t latency_ns_last = 0, latency_ns_max = 0;
  InstallLatency install_latency;
  uint64_t bus_writes = 0;       // 32-bit device writes since start
  uint64_t changed_bytes = 0;    // device bytes whose value changed
  uint32_t generation = 0;
  // GENERATION after the last push that made the device right for its batch
  // (the safe part, or a resync); later pushes only chose better IPv6
  // entries ("Safe first, best after"). A bench tells the two apart by it.
  uint32_t safe_generation = 0;
  uint64_t push_errors = 0;
  uint64_t resyncs = 0;            // full Syncs after a failed push
  // Steps of the IPv6 TCAM's entry choice that stopped at their deadline, so
  // waiting batches went out (safe) before the choice went on.
  uint64_t best_steps_deferred = 0;
  // Entry choices begun, and how many of them were held back (kChoicePace).
  uint64_t choices_begun = 0;
  uint64_t choices_paced = 0;
  bool initial_sync_done = false;
  DeviceAdoption adopted;          // what the initial compile took over from the device
  std::string last_error;
};

// One pushed batch, for telemetry (called on the pipeline thread).
struct BatchReport {
  uint64_t updates = 0;
  uint64_t bus_writes = 0;  // this batch's 32-bit writes
  int64_t commit_ns = 0;
  int64_t push_ns = 0;
  bool ok = true;
  std::string error;
};

class Pipeline {
 public:
  Pipeline(const FibConfig& fib_config, DeviceWriter& device, BatchPolicy batching);
  ~Pipeline();  // Stop()
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  // Where sources send their updates (thread-safe).
  RibSink& sink() { return queue_; }

  // Set before Start().
  void SetBatchObserver(std::function<void(const BatchReport&)> observer) { observer_ = std::move(observer); }
  // Called on the pipeline thread after every commit (pushed, synced or
  // failed), with the Fib and the writer as they now are: where readers'
  // snapshots are published (web/api/fib_view.h).
  void SetCommitListener(std::function<void(const Fib&, const DeviceWriter&)> listener) {
    commit_listener_ = std::move(listener);
  }
  void Start();
  // The pipeline thread's event loop: the Fib's strand. Readers post here
  // (web/api/fib_view.h) and never hold it long.
  boost::asio::io_context& io() { return io_; }
  // The Fib and the writer themselves: only for code running on the pipeline thread.
  Fib& fib() { return *fib_; }
  DeviceWriter& device() { return device_; }
  // Something was handed to sink() out of band: look at the queue now.
  void Kick() { Wake(); }
  // Applies everything queued so far, compiles, syncs the device and calls
  // done (on the pipeline thread) with the result. Later batches are pushed.
  void FinishInitialSync(std::function<void(Status, const Fib&)> done);
  // Calls done (on the pipeline thread) once every update queued before this
  // call is on the device.
  void Barrier(std::function<void()> done);
  // The same, but also called — with on_device false — once a push of
  // those updates failed (a Barrier waits for the device to recover):
  // done(on_device, fib) on the pipeline thread (offload replies to zebra).
  void AfterCommit(std::function<void(bool on_device, const Fib&)> done);
  void SetBatchPolicy(BatchPolicy batching);
  // Pushes what is still queued, then stops the thread. The device keeps its
  // tables. Idempotent.
  void Stop();

  // Runs fn(fib) on the pipeline thread and returns its result (for queries
  // from other threads; never call from the pipeline thread itself).
  template <typename F>
  auto Query(F&& fn) -> decltype(fn(std::declval<const Fib&>())) {
    using R = decltype(fn(std::declval<const Fib&>()));
    std::packaged_task<R()> task([&] { return fn(static_cast<const Fib&>(*fib_)); });
    auto fut = task.get_future();
    boost::asio::post(io_, [&task] { task(); });
    return fut.get();
  }
  // Runs fn(fib) on the pipeline thread later, without waiting (heartbeats:
  // that it runs at all shows the thread is alive).
  void Post(std::function<void(const Fib&)> fn);
  // Runs fn on the pipeline thread once delay has passed (a timer on the
  // strand; dropped if the pipeline stops first).
  void PostAfter(std::chrono::steady_clock::duration delay, std::function<void()> fn);
  // Runs fn(fib) on the pipeline thread with write access (port MACs), waits.
  void Mutate(const std::function<void(Fib&)>& fn);

  // Pipeline thread only (the readback audit's repair, fibnicd/device_audit.h):
  // makes the device hold the compiled image again by a Sync from held — a
  // readback no push has overlapped, so only the drifted entries are
  // written, in the writer's safe order — and publishes it like a commit.
  Status RepairDevice(const FibnicReadback& held);

  PipelineMetrics metrics() const;
  // A routing daemon's burst is under way (on the strand, as every caller
  // is): updates wait to be taken, or a batch went out less than kBurstGap
  // ago. Whole-table jobs on
  // the strand (the status recount) then hold back
  // (web::FibView::Options::strand_busy): the queue drains between the
  // sources' reads many times a second in a burst, and a recount begun in
  // such a gap held the burst's next updates for its whole run (100-300 ms
  // for a full table on a loaded host: withdrawn prefixes still forwarded
  // that long in bench/frr).
  bool busy() const { return queue_.depth() > 0 || std::chrono::steady_clock::now() - last_batch_ < kBurstGap; }

 private:
  void Wake();           // from the queue: something arrived
  void Schedule();       // on the thread: run now or arm the timer
  void RunBatch();       // on the thread
  void CheckBarriers();  // on the thread
  Status PushCommit();   // on the thread
  Status StepBest(Status pushed, int64_t& commit_ns, int64_t& push_ns, bool paced = true);
  void ContinueBest(bool paced = true);
  Status Pushed(Status pushed, bool resync, uint64_t writes_before, int64_t commit_ns, int64_t push_ns);
  void RecordDeviceLocked();  // device counters into m_ (metrics_mu_ held)

  std::unique_ptr<Fib> fib_;
  DeviceWriter& device_;
  UpdateQueue queue_;
  boost::asio::io_context io_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work_;
  boost::asio::steady_timer timer_;
  // Armed (again) when a batch leaves the queue empty: when it fires with the
  // queue still empty, the heap's rest is trimmed (Fib::TrimWhenIdle).
  boost::asio::steady_timer idle_timer_;
  static constexpr std::chrono::seconds kIdleTrim{2};
  // Armed for the Fib's next slot review (a held weight lapsing): a commit
  // then, even with no update waiting, so a slot kept through a routing
  // daemon's restart goes to whoever waits for it once the hold is over.
  boost::asio::steady_timer review_timer_;
  std::optional<std::chrono::steady_clock::time_point> review_at_;
  void ArmSlotReview();
  std::thread thread_;
  std::atomic<bool> wake_posted_{false};
  bool timer_armed_ = false;
  bool initial_ = true;
  bool need_resync_ = false;
  bool stopped_ = false;
  // The entry choice runs in steps of kBestStep (Fib::CommitBest with a
  // deadline). choice_seq_: the queue's oldest sequence number when the
  // choice under way began (the updates before it are in it); chosen_seq_:
  // the same for the last finished choice, which barriers wait for.
  static constexpr std::chrono::milliseconds kBestStep{10};
  uint64_t choice_seq_ = 0, chosen_seq_ = 0;
  bool continue_posted_ = false;
  // Pacing (see the top of this file): when the last choice began, when the
  // last batch was pushed, and the timer that begins a held-back choice.
  static constexpr std::chrono::milliseconds kChoicePace{100};
  static constexpr std::chrono::milliseconds kChoiceIdle{5};
  std::chrono::steady_clock::time_point choice_began_{}, last_batch_{};
  // A pause shorter than this is within a burst (zebra's and BIRD's pauses
  // between their batches).
  static constexpr std::chrono::milliseconds kBurstGap{100};
  boost::asio::steady_timer choice_timer_;
  bool choice_timer_armed_ = false;
  bool choice_held_ = false;  // the next choice to begin was held back
  // Whether a new choice may begin now; if not, arms choice_timer_ to ask again.
  bool ChoiceMayBegin();
  BatchPolicy batching_;
  struct BarrierWait {
    uint64_t seq;
    std::function<void()> done;
    std::function<void(bool, const Fib&)> after_commit;  // instead of done (AfterCommit)
  };
  std::vector<BarrierWait> barriers_;
  std::function<void(const BatchReport&)> observer_;
  std::function<void(const Fib&, const DeviceWriter&)> commit_listener_;
  uint64_t batch_updates_ = 0;  // updates of the batch being pushed (for the observer)

  mutable std::mutex metrics_mu_;
  PipelineMetrics m_;
};

}  // namespace fibnic
