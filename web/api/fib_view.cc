#include "web/api/fib_view.h"

namespace fibnic::web {

using Clock = std::chrono::steady_clock;

FibView::FibView(Post post, const Fib& fib, DeviceWriter* writer, Options options)
    : post_(std::move(post)),
      fib_(&fib),
      writer_(writer),
      config_(fib.config()),
      options_(options),
      snapshot_(std::make_shared<const FibSnapshot>()) {}

std::shared_ptr<FibView> FibView::Create(Post post, const Fib& fib, DeviceWriter* writer, Options options) {
  return std::shared_ptr<FibView>(new FibView(std::move(post), fib, writer, options));
}

std::shared_ptr<const FibSnapshot> FibView::snapshot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

void FibView::Swap(std::shared_ptr<const FibSnapshot> next) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(next);
}

void FibView::Publish() {
  auto next = std::make_shared<FibSnapshot>(*snapshot());
  next->commits = fib_->commits();
  if (writer_) {
    next->generation = writer_->generation();
    next->device_in_sync = writer_->in_sync();
    next->control = writer_->shadow().control;
  }
  Swap(std::move(next));
  ScheduleCounts();
}

void FibView::ScheduleCounts() {
  if (!options_.post_after) return;
  std::chrono::steady_clock::duration wait;
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Until a web reader first asks there is no one to keep them for: no
    // recounts (the heartbeat asks for its own, CountsOnStrand).
    if (counts_pending_ || !followed_ || !snapshot_->counts) return;
    counts_pending_ = true;
    wait = counts_cost_.Wait(options_.cost_factor);
  }
  // Posted, not run here: the commit listener returns at once and the batch
  // that is waiting goes first. One recount covers every commit before it.
  options_.post_after(wait, [self = shared_from_this()] { self->RefreshCounts(); });
}

void FibView::RefreshCounts() {
  bool first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = !snapshot_->counts;
    if (!pass_ && !first && options_.strand_busy && options_.strand_busy()) {
      const auto wait = counts_cost_.Wait(options_.busy_cost_factor);
      if (wait > Clock::duration::zero()) {
        // Still pending: the later run recounts for every commit until then.
        // It looks again soon, as the burst may be one batch (a single
        // change makes the strand busy for a moment).
        if (options_.post_after) {
          options_.post_after(std::min<Clock::duration>(wait, options_.busy_recheck),
                              [self = shared_from_this()] { self->RefreshCounts(); });
        } else {
          counts_pending_ = false;
        }
        return;
      }
    }
    counts_running_ = true;
  }
  counts_cv_.notify_all();
  const auto t0 = Clock::now();
  Fib::CountsProgress progress = Fib::CountsProgress::kDone;
  std::optional<FibCounts> counts;  // set: a pass finished
  const auto before = snapshot();
  if (!before->counts || before->counts_commits != fib_->commits()) {
    if (!pass_) {
      pass_ = fib_->StartCounts();
      pass_spent_ = Clock::duration::zero();
    }
    counts.emplace();
    progress = fib_->CountStep(*pass_, first ? Clock::time_point::max() : t0 + options_.count_step, &*counts);
  }
  pass_spent_ += Clock::now() - t0;
  if (progress == Fib::CountsProgress::kMore) {
    // Behind whatever waits on the strand now: a batch goes first.
    post_([self = shared_from_this()] { self->RefreshCounts(); });
    return;
  }
  if (progress == Fib::CountsProgress::kDone) {
    auto next = std::make_shared<FibSnapshot>(*before);
    if (counts) {
      next->counts = *counts;
      next->counts_commits = fib_->commits();
      next->counts_at = Clock::now();
    }
    next->commits = fib_->commits();
    Swap(std::move(next));
  }
  pass_.reset();
  {
    std::lock_guard<std::mutex> lock(mu_);
    counts_cost_ = {Clock::now(), pass_spent_};
    counts_pending_ = false;
    counts_running_ = false;
  }
  counts_cv_.notify_all();
  // A voided pass: the change that voided it is counted by the next, within the cost bound.
  if (progress == Fib::CountsProgress::kVoid) ScheduleCounts();
}

FibCounts FibView::CountsOnStrand() {
  if (!snapshot()->counts) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      counts_pending_ = true;
    }
    pass_.reset();  // the first counts are made whole, here
    RefreshCounts();
    return *snapshot()->counts;
  }
  const auto snap = snapshot();
  std::lock_guard<std::mutex> lock(mu_);
  if (snap->counts_commits != fib_->commits() && !counts_pending_ && counts_cost_.Due(options_.cost_factor)) {
    counts_pending_ = true;  // one recount, in steps, for the next call
    post_([self = shared_from_this()] { self->RefreshCounts(); });
  }
  return *snap->counts;
}

StatusOr<std::shared_ptr<const FibSnapshot>> FibView::SnapshotWithCounts() {
  auto snap = snapshot();
  std::unique_lock<std::mutex> lock(mu_);
  followed_ = true;
  if (!snap->counts) {
    // The very first counts: wait for a recount — the one a commit scheduled,
    // or ours — to start within the strand timeout, then for it to finish.
    if (!counts_pending_) {
      counts_pending_ = true;
      post_([self = shared_from_this()] { self->RefreshCounts(); });
    }
    if (!counts_cv_.wait_for(lock, options_.strand_timeout,
                             [this] { return snapshot_->counts.has_value() || counts_running_; })) {
      return Unavailable("the Fib's strand is busy: no counts within " +
                         std::to_string(options_.strand_timeout.count()) + " ms; try again");
    }
    counts_cv_.wait(lock, [this] { return snapshot_->counts.has_value(); });  // started: bounded by Counts()
    return snapshot_;
  }
  if (snap->counts_commits == snap->commits) return snap;
  if (!counts_pending_ && counts_cost_.Due(options_.cost_factor)) {
    counts_pending_ = true;
    post_([self = shared_from_this()] { self->RefreshCounts(); });
  }
  return snap;
}

StatusOr<std::shared_ptr<const SramCopy>> FibView::Sram() {
  const auto snap = snapshot();
  {
    std::lock_guard<std::mutex> lock(mu_);
    const bool current = sram_ && sram_->generation == snap->generation && sram_->commits == snap->commits;
    if (sram_ && (current || !sram_cost_.Due(options_.cost_factor))) return sram_;
  }
  ASSIGN_OR_RETURN(auto copy, OnStrand([this](const Fib& fib) {
    const auto t0 = Clock::now();
    auto c = std::make_shared<SramCopy>();
    // The writer's shadow is the image it last pushed: the device's while it
    // is in sync, and only the Fib's intent after a failed push.
    const bool written = writer_ && writer_->in_sync();
    const DeviceImage& img = written ? writer_->shadow() : fib.image();
    c->source = written ? "device" : "image";
    c->code_bits = img.caps.code_bits;
    c->bytes = img.sram;
    c->generation = writer_ ? writer_->generation() : 0;
    c->commits = fib.commits();
    std::lock_guard<std::mutex> lock(mu_);
    sram_cost_ = {Clock::now(), Clock::now() - t0};
    return std::shared_ptr<const SramCopy>(std::move(c));
  }));
  std::lock_guard<std::mutex> lock(mu_);
  sram_ = copy;
  return copy;
}

StatusOr<VerifyReport> FibView::Verify() {
  if (!writer_) return FailedPrecondition("no device to verify");
  ASSIGN_OR_RETURN(auto report, OnStrandFor([this](const Fib& fib) { return writer_->Verify(fib.image()); },
                                            options_.verify_timeout));
  return report;
}

}  // namespace fibnic::web
