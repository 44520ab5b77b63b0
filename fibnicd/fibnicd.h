// fibnicd: one service wiring the sources (kernel, FRR over FPM) through the
// Fib and the pipeline to the device, with the REST/web server, systemd
// notification, signals (SIGHUP reload, SIGTERM stop) and a watchdog.
//
// Threads: the main thread runs the event loop (signals, heartbeat, sources);
// the pipeline thread owns the Fib and the device; the web thread serves the
// REST API and dashboard from the FibView (web/api/fib_view.h), so no request
// holds up a commit.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include "fibnicd/device_audit.h"
#include "fibnicd/device_open.h"
#include "fibnicd/fibnicd_config.h"
#include "fibnicd/fpm_offload_oracle.h"
#include "fibnicd/pipeline.h"
#include "common/sd_notifier.h"
#include "sources/api/api_source.h"
#include "sources/file/file_source.h"
#include "sources/source.h"
#include "hwif/fibnic_writer.h"
#include "web/api/fib_api.h"
#include "web/http/router.h"
#include "web/http/server.h"
#include "web/http/telemetry.h"

namespace fibnic {

class FpmSource;
class KernelSource;

struct FibnicdOptions {
  // Where the config came from: a file, or nullopt for the embedded default.
  std::optional<std::string> config_path;
  // --bar: the file backend's image, overriding device.path (non-root runs).
  std::string bar_path;
};

class Fibnicd {
 public:
  Fibnicd(FibnicdOptions options, FibnicdConfig config);
  ~Fibnicd();

  // Runs until SIGTERM/SIGINT; returns the process exit code.
  int Run();

  // One-line summary of the tables ("v4 12 routes: 10 offloaded, ..."), from the Fib's thread.
  std::string Summary(const Fib& fib, const PipelineMetrics& m);

 private:
  Status Start();
  // Builds the source registry from the config and starts it.
  Status StartSources();
  // The web server on its own thread and io_context.
  Status StartWeb();
  void StopWeb();
  void ObserveBatch(const BatchReport& b);
  // The readback audit (when configured); its thread starts once the device
  // holds the initial table.
  void CreateAudit();
  web::HealthReport Health() const;
  // Once every source's initial state is in (the kernel's first dump), the
  // table is compiled whole and synced; READY=1 follows.
  void WaitInitialDump();
  void FinishInitialSync();
  void WaitSignal();
  void Reload();
  void Heartbeat();
  void Stop(int exit_code);
  void SetPortMacs();
  StatusOr<FibnicdConfig> ReadConfig() const;

  FibnicdOptions options_;
  FibnicdConfig config_;
  boost::asio::io_context io_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer heartbeat_;
  std::chrono::milliseconds heartbeat_every_{5000};
  boost::asio::steady_timer initial_wait_{io_};
  SdNotifier notify_;
  OpenedDevice device_;
  std::unique_ptr<FibnicWriter> writer_;
  std::unique_ptr<Pipeline> pipeline_;
  std::unique_ptr<DeviceAudit> audit_;  // after the pipeline: stopped and destroyed first
  std::shared_ptr<web::FibView> view_;
  web::Telemetry telemetry_;
  // The FPM source's offload replies ask it; declared before the sources.
  std::unique_ptr<FibOffloadOracle> fpm_offload_;
  SourceRegistry sources_;
  FileSource* file_ = nullptr;      // in sources_; re-read on SIGHUP
  ApiSource* api_source_ = nullptr; // in sources_ when the web API is on
  FpmSource* fpm_ = nullptr;        // in sources_ when FPM is on
  KernelSource* kernel_ = nullptr;  // in sources_ when the kernel source is on
  // Declared before the server and the API: their timers and sockets belong
  // to it and must be destroyed while it still exists.
  boost::asio::io_context web_io_;
  std::unique_ptr<web::Router> router_;
  std::unique_ptr<web::FibApi> api_;
  std::unique_ptr<web::WebServer> web_;
  std::thread web_thread_;
  int exit_code_ = 0;
  bool stopping_ = false;
};

}  // namespace fibnic
