// What a service hands the Fib REST API: the objects the handlers read. The
// daemon fills it once at start-up; every pointer must outlive the server.
// Handlers run on the web server's own thread: they reach the Fib and the
// device tables only through the FibView (snapshots, the Fib's strand, the
// writer's shadow), so no request holds up a commit.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rib/route.h"
#include "hwif/bar.h"
#include "web/api/fib_view.h"
#include "web/api/health_report.h"
#include "web/http/telemetry.h"

namespace fibnic::web {

struct WebContext {
  std::shared_ptr<FibView> view;  // required
  // The device's BAR0, for what only the device knows: VERSION, port
  // counters, a lookup's hardware answer (a few registers and the small
  // tables, never the SRAM). null = hardware columns are null.
  Bar* bar = nullptr;
  std::string device;             // how the operator names it: "file:/var/lib/fibnic/bar0.img", "pci:0000:03:00.0"
  Telemetry* telemetry = nullptr; // events + counters (the rates come from kRouteUpdatesTotal, kBarBytesWrittenTotal)
  // /api/v1/status "sources" and /metrics fibnic_source_stat: {name: stats
  // object} — fibnicd's source registry (and its pipeline's counters).
  std::function<nlohmann::json()> sources;
  // /metrics: the route-install latency histogram and the readback audit
  // (unset: those families are not exported).
  std::function<HealthReport()> health;

  // Static routes through the API (PUT/DELETE /api/v1/routes/static/...,
  // bearer token required). Both set: those routes are mounted; the sink
  // gets the change, then request_commit() lets the pipeline push it.
  RouteSink* static_sink = nullptr;  // fibnicd: the `api` source
  std::function<void()> request_commit;

  // GET /api/v1/status?verify=1 reads the whole device back (on the Fib's
  // strand): at most once per this interval, 429 otherwise.
  std::chrono::milliseconds verify_interval{std::chrono::seconds(10)};
};

}  // namespace fibnic::web
