// What a service hands the Fib REST API: the objects the handlers read. The
// daemon fills it once at start-up; every pointer must outlive the server.
// Handlers run on the io_context thread that also drives the pipeline, so
// they read the Fib and the BAR without locks.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fib/fib.h"
#include "rib/route.h"
#include "hwif/bar.h"
#include "web/http/telemetry.h"

namespace fibnic::web {

struct WebContext {
  Fib* fib = nullptr;             // required
  Bar* bar = nullptr;             // the device's BAR0; null = hardware columns are null
  std::string device;             // how the operator names it: "file:/var/lib/fibnic/bar0.img", "pci:0000:03:00.0"
  Telemetry* telemetry = nullptr; // events + counters (the rates come from kRouteUpdatesTotal, kBarBytesWrittenTotal)
  // /api/v1/status "sources" and /metrics fibnic_source_stat: {name: stats
  // object} — fibnicd's source registry (and its pipeline's counters).
  std::function<nlohmann::json()> sources;

  // Static routes through the API (PUT/DELETE /api/v1/routes/static/...,
  // bearer token required). Both set: those routes are mounted; the sink
  // gets the change, then request_commit() lets the pipeline push it.
  RouteSink* static_sink = nullptr;  // fibnicd: the `api` source
  std::function<void()> request_commit;
};

}  // namespace fibnic::web
