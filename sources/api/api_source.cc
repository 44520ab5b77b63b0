#include "sources/api/api_source.h"

namespace fibnic {

nlohmann::json ApiSource::StatsJson() const {
  return {{"routes", routes_.size()}, {"upserts", upserts_}, {"deletes", deletes_}};
}

void ApiSource::UpsertRoute(const Route& route) {
  Route r = route;
  r.source = RouteSource::kApi;
  routes_.insert(r.prefix);
  ++upserts_;
  sink_.UpsertRoute(r);
}

void ApiSource::DeleteRoute(const Prefix& prefix, RouteSource) {
  routes_.erase(prefix);
  ++deletes_;
  sink_.DeleteRoute(prefix, RouteSource::kApi);
}

}  // namespace fibnic
