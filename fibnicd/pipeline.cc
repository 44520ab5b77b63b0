#include "fibnicd/pipeline.h"

#include <algorithm>
#include <limits>

#include "common/log.h"

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
}

void Apply(Fib& fib, const PendingUpdate& u) {
  switch (u.kind) {
    case PendingUpdate::Kind::kUpsertRoute: fib.UpsertRoute(u.route); break;
    case PendingUpdate::Kind::kDeleteRoute: fib.DeleteRoute(u.route.prefix, u.route.source); break;
    case PendingUpdate::Kind::kUpsertNeighbor: fib.UpsertNeighbor(u.neighbor); break;
    case PendingUpdate::Kind::kDeleteNeighbor: fib.DeleteNeighbor(u.neighbor.addr, u.neighbor.port); break;
  }
}

bool AllEmpty(const std::vector<DeviceDelta>& deltas) {
  return std::all_of(deltas.begin(), deltas.end(), [](const DeviceDelta& d) { return d.empty(); });
}

// How long to wait before retrying a device that failed.
constexpr auto kResyncRetry = std::chrono::seconds(1);

}  // namespace

void InstallLatency::Observe(double seconds) {
  ++counts[static_cast<size_t>(std::lower_bound(kBounds.begin(), kBounds.end(), seconds) - kBounds.begin())];
  sum_s += seconds;
  ++count;
}

Pipeline::Pipeline(const FibConfig& fib_config, DeviceWriter& device, BatchPolicy batching)
    : fib_(std::make_unique<Fib>(fib_config)),
      device_(device),
      queue_([this] { Wake(); }),
      work_(boost::asio::make_work_guard(io_)),
      timer_(io_),
      idle_timer_(io_),
      review_timer_(io_),
      choice_timer_(io_),
      batching_(batching) {
  queue_.set_wake_threshold(batching_.max);
}

Pipeline::~Pipeline() { Stop(); }

void Pipeline::Start() {
  thread_ = std::thread([this] { io_.run(); });
}

void Pipeline::Wake() {
  if (wake_posted_.exchange(true)) return;
  boost::asio::post(io_, [this] {
    wake_posted_ = false;
    Schedule();
  });
}

void Pipeline::Schedule() {
  if (stopped_) return;
  auto oldest = queue_.OldestArrival();
  if (!oldest) {
    CheckBarriers();
    return;
  }
  if (queue_.depth() >= batching_.max || Clock::now() - *oldest >= batching_.delay) {
    RunBatch();
    return;
  }
  if (timer_armed_) return;
  timer_armed_ = true;
  timer_.expires_at(*oldest + std::chrono::duration_cast<Clock::duration>(batching_.delay));
  timer_.async_wait([this](const boost::system::error_code& ec) {
    timer_armed_ = false;
    if (!ec) Schedule();
  });
}

void Pipeline::RunBatch() {
  UpdateBatch batch = queue_.Take(initial_ ? std::numeric_limits<size_t>::max() : batching_.max);
  {
    PendingUpdate u;  // one decoded update at a time, its paths' storage reused
    for (size_t i = 0; i < batch.updates.size(); ++i) {
      batch.updates.Decode(i, u);
      Apply(*fib_, u);
    }
  }
  {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    m_.updates_applied += batch.updates.size();
  }
  // Before the initial sync nothing is pushed: the table is compiled once, whole.
  if (!initial_ && !batch.updates.empty()) {
    batch_updates_ = batch.updates.size();
    last_batch_ = Clock::now();
    Status st = PushCommit();
    std::lock_guard<std::mutex> lock(metrics_mu_);
    m_.batch_size_last = batch.updates.size();
    m_.batch_size_max = std::max(m_.batch_size_max, m_.batch_size_last);
    if (st.ok()) {
      const auto pushed = Clock::now();
      m_.latency_ns_last = std::chrono::duration_cast<std::chrono::nanoseconds>(pushed - batch.oldest).count();
      m_.latency_ns_max = std::max(m_.latency_ns_max, m_.latency_ns_last);
      for (size_t i = 0; i < batch.updates.size(); ++i) {
        m_.install_latency.Observe(std::chrono::duration<double>(pushed - batch.updates.first_arrival(i)).count());
      }
    }
  }
  CheckBarriers();
  if (queue_.depth() > 0) {
    boost::asio::post(io_, [this] { Schedule(); });
  } else if (!initial_) {
    batch = UpdateBatch{};
    fib_->TrimAfterChurn();  // the churn's garbage (queue, batches, deltas) back to the system
    // And once the stream has stayed quiet (re-armed by each batch that
    // empties the queue): the rest.
    idle_timer_.expires_after(kIdleTrim);
    idle_timer_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec && !stopped_ && queue_.depth() == 0) fib_->TrimWhenIdle();
    });
  }
}

Status Pipeline::PushCommit() {
  auto t0 = Clock::now();
  const bool resync = need_resync_;
  // The safe part goes out before the IPv6 TCAM's entries are chosen (the
  // costly part of a commit): a batch's changes reach the device one entry
  // choice sooner (Fib::CommitSafe).
  std::vector<DeviceDelta> deltas = resync ? fib_->Commit() : fib_->CommitSafe();
  int64_t commit_ns = NsSince(t0);
  auto t1 = Clock::now();
  uint64_t writes_before = device_.bus_writes();
  Status pushed;
  if (resync) {
    pushed = device_.Sync(fib_->image());
  } else if (!AllEmpty(deltas)) {
    pushed = device_.Push(deltas, fib_->image());
  }
  int64_t push_ns = NsSince(t1);
  // A safe part that wrote nothing leaves it: the device was right already.
  if (pushed.ok() && (resync || !AllEmpty(deltas))) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    m_.safe_generation = device_.generation();
  }
  // After a failed push too: the Fib completes its commit, a resync follows.
  if (!resync) pushed = StepBest(pushed, commit_ns, push_ns);
  return Pushed(pushed, resync, writes_before, commit_ns, push_ns);
}

// One step of the entry choice, and its push once it finishes. A step that
// stops at its deadline leaves the rest for ContinueBest(), so that batches
// waiting meanwhile go out (safe) between steps instead of behind the choice.
Status Pipeline::StepBest(Status pushed, int64_t& commit_ns, int64_t& push_ns, bool paced) {
  const bool begins = !fib_->choosing() && fib_->best_pending();
  if (begins && paced && !ChoiceMayBegin()) return pushed;  // held back: choice_timer_ begins it
  const auto t0 = Clock::now();
  // A choice beginning now is for every update applied so far.
  if (!fib_->choosing()) choice_seq_ = queue_.OldestSeq();
  if (begins) {
    choice_began_ = t0;
    std::lock_guard<std::mutex> lock(metrics_mu_);
    ++m_.choices_begun;
    if (choice_held_) ++m_.choices_paced;
    choice_held_ = false;
  }
  std::vector<DeviceDelta> deltas = fib_->CommitBest(t0 + kBestStep);
  commit_ns += NsSince(t0);
  if (!fib_->choosing()) chosen_seq_ = choice_seq_;
  const auto t1 = Clock::now();
  if (pushed.ok() && !AllEmpty(deltas)) pushed = device_.Push(deltas, fib_->image());
  push_ns += NsSince(t1);
  if (fib_->choosing()) {
    std::lock_guard<std::mutex> lock(metrics_mu_);
    ++m_.best_steps_deferred;
  }
  // Unfinished, or changes that came during it wait for the next choice.
  if (fib_->best_pending() && !continue_posted_) {
    continue_posted_ = true;
    boost::asio::post(io_, [this] { ContinueBest(); });
  }
  return pushed;
}

// The next step of the entry choice; handlers queued meanwhile (a batch, an
// API question) ran before it.
void Pipeline::ContinueBest(bool paced) {
  continue_posted_ = false;
  if (stopped_ || !fib_->best_pending()) return;
  if (paced && !fib_->choosing() && !ChoiceMayBegin()) return;
  int64_t commit_ns = 0, push_ns = 0;
  const uint64_t writes_before = device_.bus_writes();
  // A device awaiting a resync gets the whole image from the retry; the
  // choice still goes on, to release the barriers it covers.
  const bool failing = need_resync_;
  Status pushed =
      StepBest(failing ? FailedPrecondition("device awaits a resync") : OkStatus(), commit_ns, push_ns, paced);
  if (fib_->choosing()) return;
  if (!failing) (void)Pushed(pushed, false, writes_before, commit_ns, push_ns);
  CheckBarriers();
}

bool Pipeline::ChoiceMayBegin() {
  const auto now = Clock::now();
  const auto paced = choice_began_ + kChoicePace, idle = last_batch_ + kChoiceIdle;
  if (now >= paced || now >= idle) return true;
  choice_held_ = true;
  if (!choice_timer_armed_) {
    choice_timer_armed_ = true;
    // Asks again at the sooner of the two; a batch meanwhile moves idle later.
    choice_timer_.expires_at(std::min(paced, idle));
    choice_timer_.async_wait([this](const boost::system::error_code& ec) {
      choice_timer_armed_ = false;
      if (!ec) ContinueBest();
    });
  }
  return false;
}

Status Pipeline::Pushed(Status pushed, bool resync, uint64_t writes_before, int64_t commit_ns, int64_t push_ns) {
  if (observer_) {
    observer_(BatchReport{batch_updates_, device_.bus_writes() - writes_before, commit_ns, push_ns, pushed.ok(),
                          pushed.ok() ? std::string() : pushed.ToString()});
  }
  batch_updates_ = 0;
  ArmSlotReview();
  if (commit_listener_) commit_listener_(*fib_, device_);
  std::lock_guard<std::mutex> lock(metrics_mu_);
  m_.commit_ns_last = commit_ns;
  m_.commit_ns_max = std::max(m_.commit_ns_max, commit_ns);
  m_.commit_ns_total += commit_ns;
  m_.push_ns_last = push_ns;
  m_.push_ns_max = std::max(m_.push_ns_max, push_ns);
  m_.push_ns_total += push_ns;
  ++m_.batches;
  RecordDeviceLocked();
  if (!pushed.ok()) {
    ++m_.push_errors;
    m_.last_error = pushed.ToString();
    if (!need_resync_) LogError("device push failed; will resync the whole image: " + m_.last_error);
    need_resync_ = true;
    // Retry even if no further update arrives.
    auto retry = std::make_shared<boost::asio::steady_timer>(io_, kResyncRetry);
    retry->async_wait([this, retry](const boost::system::error_code& ec) {
      // Barriers waiting for the device are released by a successful resync,
      // not only by the next batch (which may never come).
      if (!ec && need_resync_ && !stopped_ && PushCommit().ok()) CheckBarriers();
    });
    return pushed;
  }
  if (resync) {
    ++m_.resyncs;
    LogInfo("device resynchronised");
  }
  need_resync_ = false;
  return OkStatus();
}

void Pipeline::ArmSlotReview() {
  const auto at = fib_->NextSlotReview();
  if (!at || (review_at_ && *review_at_ <= *at)) return;
  review_at_ = at;
  review_timer_.expires_at(*at);
  review_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;  // re-armed earlier, or stopped
    review_at_.reset();
    if (stopped_ || initial_) return;
    if (queue_.depth() > 0) {
      Schedule();  // the batch's commit reviews the slots
    } else {
      (void)PushCommit();  // a failed push arms its own resync
    }
    ArmSlotReview();
  });
}

void Pipeline::RecordDeviceLocked() {
  m_.bus_writes = device_.bus_writes();
  m_.changed_bytes = device_.changed_bytes();
  m_.generation = device_.generation();
}

void Pipeline::FinishInitialSync(std::function<void(Status, const Fib&)> done) {
  boost::asio::post(io_, [this, done = std::move(done)] {
    uint64_t applied_before = metrics().updates_applied;
    RunBatch();  // initial_: takes everything queued so far, applies, no push
    initial_ = false;
    // Only numbering is taken over; an unreadable device fails the Sync below.
    DeviceAdoption adopted;
    auto held = device_.ReadBack();
    if (held.ok()) adopted = fib_->AdoptDevice(held->image);
    auto t0 = Clock::now();
    fib_->CommitWhole();
    int64_t commit_ns = NsSince(t0);
    auto t1 = Clock::now();
    uint64_t writes_before = device_.bus_writes();
    Status synced = device_.Sync(fib_->image(), held.ok() ? &*held : nullptr);
    if (observer_) {
      observer_(BatchReport{metrics().updates_applied - applied_before, device_.bus_writes() - writes_before,
                            commit_ns, NsSince(t1), synced.ok(), synced.ok() ? std::string() : synced.ToString()});
    }
    {
      std::lock_guard<std::mutex> lock(metrics_mu_);
      m_.commit_ns_last = commit_ns;
      m_.commit_ns_total += commit_ns;
      m_.push_ns_last = NsSince(t1);
      m_.push_ns_total += m_.push_ns_last;
      ++m_.batches;
      RecordDeviceLocked();
      m_.adopted = adopted;
      if (synced.ok()) {
        m_.initial_sync_done = true;
      } else {
        ++m_.push_errors;
        m_.last_error = synced.ToString();
        need_resync_ = true;
      }
    }
    ArmSlotReview();
    if (commit_listener_) commit_listener_(*fib_, device_);
    done(synced, *fib_);
    CheckBarriers();
    if (queue_.depth() > 0) Schedule();
  });
}

void Pipeline::Barrier(std::function<void()> done) {
  uint64_t seq = queue_.NextSeq();
  boost::asio::post(io_, [this, seq, done = std::move(done)]() mutable {
    barriers_.push_back({seq, std::move(done), nullptr});
    CheckBarriers();
  });
}

void Pipeline::AfterCommit(std::function<void(bool, const Fib&)> done) {
  uint64_t seq = queue_.NextSeq();
  boost::asio::post(io_, [this, seq, done = std::move(done)]() mutable {
    barriers_.push_back({seq, nullptr, std::move(done)});
    CheckBarriers();
  });
}

void Pipeline::CheckBarriers() {
  if (initial_ || barriers_.empty()) return;
  // While the device is failing only AfterCommit waits are released (as failed).
  const bool failing = need_resync_;
  // A barrier's waiter reads the Fib's offload states: the updates before it
  // must be applied and, with IPv6 changes waiting for the TCAM's entry
  // choice, in a finished choice.
  uint64_t oldest = queue_.OldestSeq();
  if (fib_->best_pending()) oldest = std::min(oldest, chosen_seq_);
  std::vector<BarrierWait> ready;
  auto it = std::partition(barriers_.begin(), barriers_.end(), [&](const BarrierWait& b) {
    return b.seq > oldest || (failing && !b.after_commit);
  });
  std::move(it, barriers_.end(), std::back_inserter(ready));
  barriers_.erase(it, barriers_.end());
  for (auto& b : ready) {
    if (b.after_commit) {
      b.after_commit(!failing, *fib_);
    } else {
      b.done();
    }
  }
}

void Pipeline::SetBatchPolicy(BatchPolicy batching) {
  boost::asio::post(io_, [this, batching] {
    batching_ = batching;
    queue_.set_wake_threshold(batching_.max);
    Schedule();
  });
}

void Pipeline::Post(std::function<void(const Fib&)> fn) {
  boost::asio::post(io_, [this, fn = std::move(fn)] { fn(*fib_); });
}

void Pipeline::PostAfter(Clock::duration delay, std::function<void()> fn) {
  auto timer = std::make_shared<boost::asio::steady_timer>(io_, delay);
  timer->async_wait([timer, fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec) fn();
  });
}

Status Pipeline::RepairDevice(const FibnicReadback& held) {
  Status st = device_.Sync(fib_->image(), &held);
  if (commit_listener_) commit_listener_(*fib_, device_);
  std::lock_guard<std::mutex> lock(metrics_mu_);
  RecordDeviceLocked();
  if (!st.ok()) {
    ++m_.push_errors;
    m_.last_error = st.ToString();
    need_resync_ = true;  // the next batch re-Syncs
  }
  return st;
}

void Pipeline::Mutate(const std::function<void(Fib&)>& fn) {
  std::promise<void> done;
  boost::asio::post(io_, [&] {
    fn(*fib_);
    if (!initial_) PushCommit().ok();  // failures are counted and retried there
    done.set_value();
  });
  done.get_future().wait();
}

void Pipeline::Stop() {
  if (!thread_.joinable()) return;
  boost::asio::post(io_, [this] {
    // What the sources handed in before the stop still goes out, with the
    // TCAM's best entries (a restart then finds them held).
    while (!initial_ && queue_.depth() > 0) RunBatch();
    while (!initial_ && fib_->best_pending() && !need_resync_) ContinueBest(/*paced=*/false);
    stopped_ = true;
    timer_.cancel();
    idle_timer_.cancel();
    review_timer_.cancel();
    choice_timer_.cancel();
    work_.reset();
    io_.stop();
  });
  thread_.join();
}

PipelineMetrics Pipeline::metrics() const {
  std::lock_guard<std::mutex> lock(metrics_mu_);
  PipelineMetrics out = m_;
  out.updates_received = queue_.received();
  out.updates_coalesced = queue_.coalesced();
  out.queue_depth = queue_.depth();
  out.queue_depth_max = queue_.max_depth();

  return out;
}

}  // namespace fibnic
