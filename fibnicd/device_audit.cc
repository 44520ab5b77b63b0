#include "fibnicd/device_audit.h"

#include <optional>
#include <type_traits>

namespace fibnic {
namespace {

using Clock = std::chrono::steady_clock;

// How long a pass waits for the strand (a full-table compile at start-up
// holds it for seconds) before giving up on that pass.
constexpr auto kStrandWait = std::chrono::seconds(60);

struct ShadowCopy {
  DeviceImage shadow;
  uint32_t generation = 0;
  bool in_sync = false;
};

struct Confirmation {
  bool overlapped = true;  // a push (or a failed one) came between the copy and now
  bool repaired = false;
  Status repair;
};

}  // namespace

namespace {

// Runs fn on the pipeline's strand and waits for its result; nullopt when the
// strand did not take it within kStrandWait or stop() became true (fn then
// never runs: it may not outlive the caller's stack).
template <typename F>
auto OnStrand(Pipeline& pipeline, F fn, const std::function<bool()>& stop)
    -> std::optional<std::invoke_result_t<F&>> {
  using R = std::invoke_result_t<F&>;
  struct Call {
    std::mutex mu;
    std::condition_variable cv;
    bool abandoned = false, running = false, done = false;
    std::optional<R> result;
  };
  auto call = std::make_shared<Call>();
  pipeline.Post([call, &fn](const Fib&) {
    {
      std::lock_guard<std::mutex> lock(call->mu);
      if (call->abandoned) return;
      call->running = true;
    }
    std::optional<R> r(fn());
    std::lock_guard<std::mutex> lock(call->mu);
    call->result = std::move(r);
    call->done = true;
    call->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(call->mu);
  const auto deadline = Clock::now() + kStrandWait;
  while (!call->done && !call->running && Clock::now() < deadline && !stop()) {
    call->cv.wait_for(lock, std::chrono::milliseconds(100));
  }
  if (!call->done && !call->running) {
    call->abandoned = true;
    return std::nullopt;
  }
  call->cv.wait(lock, [&] { return call->done; });  // started: bounded by fn itself
  return std::move(call->result);
}

}  // namespace

DeviceAudit::DeviceAudit(Pipeline& pipeline, ReadDevice read, AuditConfig config, Event event)
    : pipeline_(pipeline),
      read_(std::move(read)),
      config_(config),
      event_(std::move(event)) {}

DeviceAudit::~DeviceAudit() { Stop(); }

void DeviceAudit::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (stop_ || thread_.joinable()) return;
  thread_ = std::thread([this] { Loop(); });
}

void DeviceAudit::Stop() {
  std::thread t;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    t = std::move(thread_);
  }
  cv_.notify_all();
  if (t.joinable()) t.join();
}

AuditStats DeviceAudit::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  return stats_;
}

void DeviceAudit::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, config_.interval, [this] { return stop_; })) {
    lock.unlock();
    RunPass();
    lock.lock();
  }
}

void DeviceAudit::RunPass() {
  for (int attempt = 0; attempt <= config_.retries; ++attempt) {
    if (Attempt()) return;
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, config_.retry_delay, [this] { return stop_; })) return;
  }
  std::lock_guard<std::mutex> lock(stats_mu_);
  ++stats_.inconclusive;
}

bool DeviceAudit::Attempt() {
  const std::function<bool()> stopping = [this] {
    std::lock_guard<std::mutex> lock(mu_);
    return stop_;
  };
  Pipeline* p = &pipeline_;
  // 1. On the strand: what the writer last put on the device (a copy).
  auto copy = OnStrand(pipeline_, [p] {
    const DeviceWriter& d = p->device();
    return ShadowCopy{d.shadow(), d.generation(), d.in_sync()};
  }, stopping);
  if (!copy) return stopping();  // strand busy for a minute: try again shortly
  if (!copy->in_sync) return false;  // a failed push: the pipeline resyncs first
  // 2. Off the strand: read the device and compare.
  auto held = read_();
  if (!held.ok()) {
    {
      std::lock_guard<std::mutex> lock(stats_mu_);
      ++stats_.errors;
    }
    event_(true, "audit: cannot read the device back: " + held.status().ToString());
    return true;
  }
  const VerifyReport report = CompareImages(copy->shadow, held->image, held->generation);
  // 3. On the strand: no push since the copy (a push always bumps the
  // writer's GENERATION), so the read saw exactly what was written, and the
  // differences are drift. Repair while the device is still as read.
  const bool repair = config_.repair && !report.in_sync();
  const FibnicReadback* read_back = &*held;
  auto confirmed = OnStrand(pipeline_, [p, gen = copy->generation, repair, read_back] {
    Confirmation c;
    const DeviceWriter& d = p->device();
    c.overlapped = d.generation() != gen || !d.in_sync();
    if (!c.overlapped && repair) {
      c.repair = p->RepairDevice(*read_back);
      c.repaired = true;
    }
    return c;
  }, stopping);
  if (!confirmed) return stopping();
  if (confirmed->overlapped) return false;

  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    AuditStats& s = stats_;
    ++s.runs;
    s.drift_entries = report.drift_total;
    s.drifted_total += report.drift_total;
    s.repairs += confirmed->repaired && confirmed->repair.ok();
    s.last_run = std::chrono::system_clock::now();
  }
  if (report.in_sync()) return true;
  const std::string gen = " (device generation " + std::to_string(held->generation) + ")";
  size_t told = 0;
  for (const DeviceDrift& d : report.drift) {
    if (told == config_.max_events) break;
    event_(true, "audit: device " + d.table + "[" + std::to_string(d.index) +
                     "] differs from what fibnicd wrote" + gen);
    ++told;
  }
  std::string summary = "audit: " + std::to_string(report.drift_total) + " device entries drifted";
  if (report.drift_total > told) summary += " (" + std::to_string(report.drift_total - told) + " not listed)";
  if (!confirmed->repaired) {
    summary += "; repair is off (audit.repair)";
  } else if (confirmed->repair.ok()) {
    summary += "; rewritten through the writer";
  } else {
    summary += "; repair failed, the pipeline resyncs: " + confirmed->repair.ToString();
  }
  event_(true, summary);
  return true;
}

}  // namespace fibnic
