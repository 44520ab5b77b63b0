#include "fibnicd/fibnicd.h"

#include <csignal>
#include <fstream>
#include <future>
#include <sstream>

#include "common/log.h"
#include "sources/fpm/fpm_source.h"
#include "sources/kernel/kernel_source.h"
#include "web/http/dashboard.h"

namespace fibnic {
namespace {

std::optional<MacAddr> InterfaceMac(const std::string& ifname) {
  std::ifstream in("/sys/class/net/" + ifname + "/address");
  std::string text;
  if (!(in >> text)) return std::nullopt;
  auto mac = MacAddr::Parse(text);
  if (!mac.ok()) return std::nullopt;
  return *mac;
}

PortNames PortNamesOf(const FibnicdConfig& c) {
  PortNames names;
  for (const auto& p : c.ports) names[p.interface] = p.port;
  return names;
}

BatchPolicy BatchingOf(const FibnicdConfig& c) {
  return BatchPolicy{c.policies.batch_delay, c.policies.batch_max};
}

}  // namespace

Fibnicd::Fibnicd(FibnicdOptions options, FibnicdConfig config)
    : options_(std::move(options)), config_(std::move(config)), signals_(io_), heartbeat_(io_) {}

Fibnicd::~Fibnicd() {
  if (audit_) audit_->Stop();
  StopWeb();
  if (pipeline_) pipeline_->Stop();
}

std::string Fibnicd::Summary(const Fib& fib, const PipelineMetrics& m) {
  // The web view's counts (on the strand, where this runs): made whole at
  // start-up, then recounted in steps within the view's cost bound when
  // found older than the last commit, so a heartbeat during a long churn
  // never holds up the routes (it may show older counts).
  const FibCounts c = view_->CountsOnStrand();
  std::ostringstream out;
  for (int f = 0; f < 2; ++f) {
    uint64_t total = c.routes[f][0] + c.routes[f][1] + c.routes[f][2];
    out << (f == 0 ? "v4 " : "; v6 ") << total << " routes (" << c.routes[f][0] << " offloaded, " << c.routes[f][1]
        << " partial, " << c.routes[f][2] - c.shadowed[f] << " punted, " << c.shadowed[f] << " shadowed)";
  }
  out << "; " << c.neighbors << " neighbors; slots " << c.slots_used << "/" << fib.config().caps.slots()
      << "; queue " << m.queue_depth << "; generation " << m.generation;
  if (m.push_errors > 0) out << "; push errors " << m.push_errors;
  return out.str();
}

StatusOr<FibnicdConfig> Fibnicd::ReadConfig() const {
  if (options_.config_path) return LoadFibnicdConfig(*options_.config_path);
  return DefaultFibnicdConfig();
}

void Fibnicd::SetPortMacs() {
  for (const auto& p : config_.ports) {
    std::optional<MacAddr> mac = p.mac ? p.mac : InterfaceMac(p.interface);
    if (!mac) {
      LogWarn("port " + std::to_string(p.port) + " (" + p.interface +
              "): interface not found and no ports[].mac configured; its source MAC stays unset");
      continue;
    }
    pipeline_->Mutate([port = p.port, mac = *mac](Fib& fib) { fib.SetPortMac(port, mac); });
  }
}

void Fibnicd::ObserveBatch(const BatchReport& b) {
  static web::CounterMetric* updates = telemetry_.Counter(web::kRouteUpdatesTotal, "Route and neighbour updates applied to the Fib");
  static web::CounterMetric* bytes = telemetry_.Counter(web::kBarBytesWrittenTotal, "Bytes written to BAR0");
  static web::CounterMetric* commits = telemetry_.Counter(web::kCommitsTotal, "Commits pushed to the device");
  static web::CounterMetric* errors = telemetry_.Counter("fibnic_push_errors_total", "Failed device pushes (each followed by a resync)");
  static web::HistogramMetric* batch = telemetry_.Histogram(
      "fibnic_batch_updates", "Updates per pushed batch", {1, 10, 100, 1000, 10000, 100000, 1000000});
  static web::HistogramMetric* push = telemetry_.Histogram(
      "fibnic_push_seconds", "Time to write one batch to the device", {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10});
  static web::HistogramMetric* commit = telemetry_.Histogram(
      "fibnic_commit_seconds", "Time to compile one batch (Fib::Commit)", {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10});
  static web::GaugeMetric* depth = telemetry_.Gauge("fibnic_queue_depth", "Updates waiting for the pipeline");
  updates->Add(b.updates);
  bytes->Add(4 * b.bus_writes);
  batch->Observe(static_cast<double>(b.updates));
  push->Observe(static_cast<double>(b.push_ns) * 1e-9);
  commit->Observe(static_cast<double>(b.commit_ns) * 1e-9);
  depth->Set(static_cast<double>(pipeline_->metrics().queue_depth));
  if (b.ok) {
    commits->Add();
  } else {
    errors->Add();
    telemetry_.Record(web::EventLevel::kError, "push", b.error);
  }
}

void Fibnicd::CreateAudit() {
  if (config_.audit.interval == std::chrono::nanoseconds(0)) return;
  AuditConfig ac;
  ac.interval = config_.audit.interval;
  ac.repair = config_.audit.repair;
  ac.max_events = config_.audit.max_events;
  // The BAR is only read here (32-bit volatile loads); the pipeline writes it.
  audit_ = std::make_unique<DeviceAudit>(*pipeline_, [bar = device_.bar.get()] { return ReadFibnic(*bar); }, ac,
                                         [this](bool warning, const std::string& m) {
                                           if (warning) LogWarn(m); else LogInfo(m);
                                           telemetry_.Record(warning ? web::EventLevel::kWarning : web::EventLevel::kInfo,
                                                             "device", m);
                                         });
}

web::HealthReport Fibnicd::Health() const {
  web::HealthReport h;
  const InstallLatency l = pipeline_->metrics().install_latency;
  h.install_latency.bounds_s.assign(InstallLatency::kBounds.begin(), InstallLatency::kBounds.end());
  h.install_latency.counts.assign(l.counts.begin(), l.counts.end());
  h.install_latency.sum_s = l.sum_s;
  h.install_latency.count = l.count;
  web::AuditReport& a = h.audit;
  a.enabled = config_.audit.interval != std::chrono::nanoseconds(0);
  a.repair = config_.audit.repair;
  a.interval_s = std::chrono::duration<double>(config_.audit.interval).count();
  if (audit_) {
    const AuditStats s = audit_->stats();
    a.runs = s.runs;
    a.inconclusive = s.inconclusive;
    a.errors = s.errors;
    a.drift_entries = s.drift_entries;
    a.drifted_total = s.drifted_total;
    a.repairs = s.repairs;
    if (s.runs > 0) a.last_run_unix = std::chrono::duration<double>(s.last_run.time_since_epoch()).count();
  }
  return h;
}

Status Fibnicd::StartWeb() {
  if (!config_.web.enabled) return OkStatus();
  web::WebContext ctx;
  ctx.view = view_;
  ctx.bar = device_.bar.get();
  ctx.device = config_.device.backend == DeviceBackend::kFile ? "file:" + device_.bar_path
                                                               : "pci:" + device_.description;
  ctx.telemetry = &telemetry_;
  ctx.static_sink = api_source_;
  ctx.request_commit = [this] { pipeline_->Kick(); };
  ctx.sources = [this] {
    // The sources live on the main loop: their stats are read there, never
    // from the web thread while a source updates them.
    auto stats = std::make_shared<std::promise<nlohmann::json>>();
    std::future<nlohmann::json> ready = stats->get_future();
    boost::asio::post(io_, [this, stats] { stats->set_value(sources_.StatsJson()); });
    nlohmann::json out = {{"error", "the sources' loop did not answer within 2 s"}};
    if (ready.wait_for(std::chrono::seconds(2)) == std::future_status::ready) {
      try {
        out = ready.get();
      } catch (const std::future_error&) {  // the loop stopped (shutdown) before it ran
        out = {{"error", "stopping"}};
      }
    }
    PipelineMetrics m = pipeline_->metrics();
    out["pipeline"] = {{"queue_depth", m.queue_depth},
                       {"queue_depth_max", m.queue_depth_max},
                       {"updates_received", m.updates_received},
                       {"updates_coalesced", m.updates_coalesced},
                       {"batches", m.batches},
                       {"batch_size_last", m.batch_size_last},
                       {"batch_size_max", m.batch_size_max},
                       {"push_ms_last", m.push_ns_last / 1e6},
                       {"push_ms_max", m.push_ns_max / 1e6},
                       {"latency_ms_last", m.latency_ns_last / 1e6},
                       {"latency_ms_max", m.latency_ns_max / 1e6},
                       {"push_errors", m.push_errors},
                       {"resyncs", m.resyncs},
                       {"tcam_choice_steps_deferred", m.best_steps_deferred},
                       {"tcam_choices_begun", m.choices_begun},
                       {"tcam_choices_paced", m.choices_paced},
                       {"safe_generation", m.safe_generation},
                       {"last_error", m.last_error}};
    return out;
  };
  ctx.health = [this] { return Health(); };
  router_ = std::make_unique<web::Router>();
  api_ = std::make_unique<web::FibApi>(web_io_, ctx);
  RETURN_IF_ERROR(api_->Register(*router_));
  web::AddDashboard(*router_);
  web::WebConfig wc;
  wc.listen_address = config_.web.listen.host.ToString();
  wc.port = config_.web.listen.port;
  wc.token = config_.web.token;
  wc.tls_cert_file = config_.web.tls_cert;
  wc.tls_key_file = config_.web.tls_key;
  wc.header_limit = config_.web.header_limit;
  wc.body_limit = config_.web.body_limit;
  wc.max_connections = config_.web.max_connections;
  wc.max_connections_per_client = config_.web.max_connections_per_client;
  wc.max_streams = config_.web.max_streams;
  wc.max_streams_per_client = config_.web.max_streams_per_client;
  wc.auth_failure_limit = config_.web.auth_failure_limit;
  wc.auth_failure_window = std::chrono::milliseconds(config_.web.auth_failure_window_ms);
  wc.allowed_hosts = config_.web.allowed_hosts;
  wc.read_timeout = std::chrono::milliseconds(config_.web.read_timeout_ms);
  wc.idle_timeout = std::chrono::milliseconds(config_.web.idle_timeout_ms);
  wc.write_timeout = std::chrono::milliseconds(config_.web.write_timeout_ms);
  RETURN_IF_ERROR(web::ValidateWebConfig(wc));
  ASSIGN_OR_RETURN(web_, web::WebServer::Start(web_io_, wc, *router_, &telemetry_));
  web_thread_ = std::thread([this] {
    auto work = boost::asio::make_work_guard(web_io_);
    web_io_.run();
  });
  std::string scheme = web_->tls() ? "https" : "http";
  std::string host = config_.web.listen.host.is_v4() ? wc.listen_address : "[" + wc.listen_address + "]";
  LogInfo("dashboard and REST API at " + scheme + "://" + host + ":" + std::to_string(web_->port()) + "/");
  return OkStatus();
}

void Fibnicd::StopWeb() {
  if (!web_thread_.joinable()) return;
  // On the web thread: the server closes its sockets, the API its timer.
  boost::asio::post(web_io_, [this] {
    web_->Stop();
    api_.reset();
    web_io_.stop();
  });
  web_thread_.join();
}

Status Fibnicd::StartSources() {
  if (config_.kernel.enabled) {
    KernelSourceConfig kc;
    kc.ports = PortNamesOf(config_);
    kc.tables = config_.kernel.tables;
    kc.distance = config_.kernel.distance;
    kc.log = [this](const std::string& m) {
      LogInfo("kernel: " + m);
      telemetry_.Record(web::EventLevel::kInfo, "source", "kernel: " + m);
    };
    kernel_ = &sources_.Add(std::make_unique<KernelSource>(io_, pipeline_->sink(), kc));
  }
  if (!config_.file.routes.empty() || !config_.file.neighbors.empty()) {
    file_ = &sources_.Add(std::make_unique<FileSource>(pipeline_->sink(), config_.file.routes, config_.file.neighbors,
                                                       config_.file.distance, device_.caps.ports));
  }
  if (config_.fpm.enabled) {
    FpmSourceConfig fc;
    fc.address = config_.fpm.listen.host.ToString();
    fc.port = config_.fpm.listen.port;
    // Offload state back to zebra (read by FRR 8.5 and later, dropped by 8.4),
    // for zebra's routes as the kernel source holds them (the config
    // refuses FPM without it).
    fpm_offload_ = std::make_unique<FibOffloadOracle>(*pipeline_);
    fc.offload = fpm_offload_.get();
    fc.routes = kernel_ ? kernel_->route_notes() : nullptr;
    fc.log = [this](const std::string& m) {
      LogInfo("fpm: " + m);
      telemetry_.Record(web::EventLevel::kInfo, "source", "fpm: " + m);
    };
    fpm_ = &sources_.Add(std::make_unique<FpmSource>(io_, fc));
  }
  if (config_.web.enabled) {
    api_source_ = &sources_.Add(std::make_unique<ApiSource>(pipeline_->sink()));
  }
  RETURN_IF_ERROR(sources_.StartAll());
  if (file_) {
    LogInfo("file source: " + std::to_string(file_->stats().routes) + " routes, " +
            std::to_string(file_->stats().neighbors) + " neighbors");
  }
  if (fpm_) LogInfo("FPM source listening on " + config_.fpm.listen.host.ToString() + ":" + std::to_string(fpm_->port()));
  return OkStatus();
}

Status Fibnicd::Start() {
  SetLogLevel(config_.log_level);
  LogInfo("fibnicd starting with config " + config_.source_name);
  std::string bar_path = options_.bar_path.empty() ? ResolveBarPath(config_.device) : options_.bar_path;
  ASSIGN_OR_RETURN(device_, OpenDevice(config_.device, bar_path));
  LogInfo("device: " + device_.description);

  writer_ = std::make_unique<FibnicWriter>(*device_.bar, PushOptions{config_.device.verify_writes});
  FibConfig fc = config_.MakeFibConfig();
  fc.caps = device_.caps;
  pipeline_ = std::make_unique<Pipeline>(fc, *writer_, BatchingOf(config_));
  pipeline_->SetBatchObserver([this](const BatchReport& b) { ObserveBatch(b); });
  web::FibView::Options view_options;
  view_options.post_after = [this](std::chrono::steady_clock::duration d, std::function<void()> fn) {
    pipeline_->PostAfter(d, std::move(fn));
  };
  view_options.strand_busy = [this] { return pipeline_->busy(); };
  view_ = web::FibView::Create([this](std::function<void()> fn) { boost::asio::post(pipeline_->io(), std::move(fn)); },
                               pipeline_->fib(), writer_.get(), view_options);
  pipeline_->SetCommitListener([view = view_](const Fib&, const DeviceWriter&) { view->Publish(); });
  pipeline_->Start();
  SetPortMacs();
  CreateAudit();
  RETURN_IF_ERROR(StartSources());
  RETURN_IF_ERROR(StartWeb().WithContext("web server on " + config_.web.listen.ToString()));

  WaitInitialDump();

  signals_.add(SIGHUP);
  signals_.add(SIGTERM);
  signals_.add(SIGINT);
  WaitSignal();
  if (auto wd = SdNotifier::WatchdogInterval()) {
    heartbeat_every_ = std::max(std::chrono::milliseconds(10),
                                std::chrono::duration_cast<std::chrono::milliseconds>(*wd) / 2);
  }
  Heartbeat();
  return OkStatus();
}

void Fibnicd::WaitInitialDump() {
  // The kernel source dumps asynchronously on this loop (the sources are
  // asked on the loop that owns them).
  if (!sources_.initial_sync_done()) {
    initial_wait_.expires_after(std::chrono::milliseconds(5));
    initial_wait_.async_wait([this](const boost::system::error_code& ec) {
      if (!ec) WaitInitialDump();
    });
    return;
  }
  FinishInitialSync();
}

void Fibnicd::FinishInitialSync() {
  // The initial table is compiled whole and synced in one go (a restart with
  // an unchanged table writes nothing); READY=1 once it is on the device.
  pipeline_->FinishInitialSync([this](Status st, const Fib& fib) {
    if (!st.ok()) {
      LogError("initial sync to the device failed: " + st.ToString());
      boost::asio::post(io_, [this] { Stop(1); });
      return;
    }
    const DeviceAdoption adopted = pipeline_->metrics().adopted;
    LogInfo("warm start: kept " + std::to_string(adopted.slots) + " next-hop slots, " +
            std::to_string(adopted.neighbors) + " NEIGH CAM entries and " + std::to_string(adopted.tcam6) +
            " TCAM6 entries as the device holds them");
    std::string summary = Summary(fib, pipeline_->metrics());
    if (audit_) audit_->Start();
    LogInfo("ready: " + summary);
    notify_.Ready("ready: " + summary);
  });
}

void Fibnicd::WaitSignal() {
  signals_.async_wait([this](const boost::system::error_code& ec, int sig) {
    if (ec) return;
    if (sig == SIGHUP) {
      Reload();
      WaitSignal();
      return;
    }
    LogInfo(std::string("received ") + (sig == SIGTERM ? "SIGTERM" : "SIGINT") + ", stopping");
    Stop(0);
  });
}

void Fibnicd::Reload() {
  notify_.Reloading();
  auto next = ReadConfig();
  if (!next.ok()) {
    LogError("reload rejected, keeping the running config: " + next.status().ToString());
    telemetry_.Record(web::EventLevel::kError, "config", "reload rejected: " + next.status().ToString());
    notify_.ReloadDone("reload rejected (see log); running config kept");
    return;
  }
  // The route files are re-read on every reload; a bad one changes nothing.
  std::string files;
  if (file_ && next->file == config_.file) {
    Status st = file_->Load();
    if (!st.ok()) {
      LogError("reload: route files rejected, keeping the loaded routes: " + st.ToString());
      telemetry_.Record(web::EventLevel::kError, "config", "route files rejected: " + st.ToString());
      notify_.ReloadDone("reload rejected (see log); running config kept");
      return;
    }
    files = "; route files re-read (" + std::to_string(file_->stats().routes) + " routes)";
    LogInfo("reload" + files.substr(1));
  }
  std::vector<std::string> changed = config_.ChangedSections(*next);
  if (changed.empty()) {
    LogInfo("reload: " + next->source_name + " unchanged");
    notify_.ReloadDone("reloaded, config unchanged" + files);
    return;
  }
  std::string applied, needs_restart;
  for (const std::string& section : changed) {
    if (section == "logging") {
      SetLogLevel(next->log_level);
      config_.log_level = next->log_level;
      applied += " logging";
    } else if (section == "policies" && next->policies.ecmp == config_.policies.ecmp &&
               next->policies.slot_hysteresis == config_.policies.slot_hysteresis &&
               next->policies.slot_hold == config_.policies.slot_hold &&
               next->policies.slot_pins == config_.policies.slot_pins) {
      // Batching is the pipeline's own; everything else in policies shapes the Fib.
      config_.policies = next->policies;
      pipeline_->SetBatchPolicy(BatchingOf(config_));
      applied += " policies";
    } else {
      needs_restart += " " + section;
    }
  }
  if (!applied.empty()) LogInfo("reload applied:" + applied);
  if (!needs_restart.empty())
    LogWarn("reload: changes to" + needs_restart +
            " take effect at the next restart (systemctl restart fibnicd); running with the old values");
  notify_.ReloadDone((needs_restart.empty() ? "reloaded" : "reloaded; restart needed for" + needs_restart) + files);
}

void Fibnicd::Heartbeat() {
  if (stopping_) return;
  // The watchdog is fed from the pipeline thread, reached through the event
  // loop: a stuck loop or a stuck device push both stop it.
  pipeline_->Post([this](const Fib& fib) {
    notify_.Watchdog();
    if (pipeline_->metrics().initial_sync_done) notify_.Status(Summary(fib, pipeline_->metrics()));
  });
  heartbeat_.expires_after(heartbeat_every_);
  heartbeat_.async_wait([this](const boost::system::error_code& ec) {
    if (!ec) Heartbeat();
  });
}

void Fibnicd::Stop(int exit_code) {
  if (stopping_) return;
  stopping_ = true;
  exit_code_ = exit_code;
  notify_.Stopping("stopping; the device keeps forwarding with its last tables");
  heartbeat_.cancel();
  initial_wait_.cancel();
  signals_.cancel();
  // Sources first, so nothing new arrives; then push what is queued and stop.
  // The device is left as it is: it keeps forwarding with its last tables.
  sources_.StopAll();
  if (audit_) audit_->Stop();
  StopWeb();
  pipeline_->Stop();
  PipelineMetrics m = pipeline_->metrics();
  LogInfo("stopped: " + std::to_string(m.batches) + " batches, " + std::to_string(m.bus_writes) +
          " device writes, generation " + std::to_string(m.generation));
  io_.stop();
}

int Fibnicd::Run() {
  Status st = Start();
  if (!st.ok()) {
    LogError("cannot start: " + st.ToString());
    return 1;
  }
  io_.run();
  return exit_code_;
}

}  // namespace fibnic
