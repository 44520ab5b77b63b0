// The routes an operator sets through the REST API (PUT/DELETE
// /api/v1/routes/static/...): the source `api`. They are RouteSource::kApi,
// apart from the route files' kStatic, so a REST DELETE never removes a file's
// route nor a reload of the files an API route. The web handlers use it as
// their RouteSink; it hands each change on to fibnicd's queue and counts.
#pragma once

#include <cstdint>
#include <unordered_set>

#include "rib/route.h"
#include "sources/source.h"

namespace fibnic {

class ApiSource : public Source, public RouteSink {
 public:
  explicit ApiSource(RouteSink& sink) : sink_(sink) {}

  const char* name() const override { return "api"; }
  // Routes arrive through the web server's handlers, which fibnicd starts and
  // stops; the source itself has nothing running.
  Status Start() override { return OkStatus(); }
  void Stop() override {}
  // Nothing to wait for: there are no API routes before the API is up.
  bool initial_sync_done() const override { return true; }
  nlohmann::json StatsJson() const override;  // routes (held now), upserts, deletes

  // Whatever source the caller names, the route is the API's.
  void UpsertRoute(const Route& route) override;
  void DeleteRoute(const Prefix& prefix, RouteSource source) override;

 private:
  RouteSink& sink_;
  std::unordered_set<Prefix> routes_;  // set through the API and not deleted
  uint64_t upserts_ = 0;
  uint64_t deletes_ = 0;
};

}  // namespace fibnic
