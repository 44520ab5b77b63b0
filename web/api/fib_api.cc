#include "web/api/fib_api.h"

#include <algorithm>
#include <ctime>

#include "web/http/assets.h"
#include "web/api/fib_api_impl.h"
#include "web/api/fib_json.h"

namespace fibnic::web {

using nlohmann::json;

namespace {

int64_t UnixMs(std::chrono::system_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}

std::string IsoTime(std::chrono::system_clock::time_point t) {
  const std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json EventJson(const Event& e) {
  return {{"seq", e.seq},
          {"time", IsoTime(e.time)},
          {"unix_ms", UnixMs(e.time)},
          {"level", EventLevelName(e.level)},
          {"category", e.category},
          {"message", e.message}};
}

// The live feed: a status snapshot each second and every new event.
class LiveStream : public EventStream {
 public:
  LiveStream(std::weak_ptr<FibApi::Impl> api, uint64_t since) : api_(std::move(api)), seq_(since) {}
  std::string Poll() override {
    auto api = api_.lock();
    if (!api) return "";
    std::string out;
    if (api->ctx.telemetry) {
      for (const Event& e : api->ctx.telemetry->EventsSince(seq_, 200)) {
        out += "id: " + std::to_string(e.seq) + "\nevent: log\ndata: " + EventJson(e).dump() + "\n\n";
        seq_ = e.seq;
      }
    }
    auto status = api->StatusJson();
    if (status.ok()) out += "event: status\ndata: " + status->dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
    return out;
  }

 private:
  std::weak_ptr<FibApi::Impl> api_;
  uint64_t seq_;
};

}  // namespace

FibApi::Impl::Impl(boost::asio::io_context& io, WebContext c) : ctx(std::move(c)), view(*ctx.view), timer(io) {
  if (ctx.bar) {
    device = std::make_unique<DeviceView>(*ctx.bar);
    header0 = device->Header();
  }
}

void FibApi::Impl::StartSampler() {
  Sample();
  timer.expires_after(std::chrono::seconds(1));
  timer.async_wait([weak = weak_from_this()](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self) return;
    self->StartSampler();
  });
}

void FibApi::Impl::Sample() {
  uint64_t routes = 0, bytes = 0, commits = 0;
  if (ctx.telemetry) {
    routes = ctx.telemetry->CounterValue(kRouteUpdatesTotal);
    bytes = ctx.telemetry->CounterValue(kBarBytesWrittenTotal);
    commits = ctx.telemetry->CounterValue(kCommitsTotal);
  }
  rates.Sample(UnixMs(std::chrono::system_clock::now()), routes, bytes, commits);
}

StatusOr<json> FibApi::Impl::StatusJson() {
  ASSIGN_OR_RETURN(std::shared_ptr<const FibSnapshot> snap, view.SnapshotWithCounts());
  const FibCounts& c = *snap->counts;
  const regs::Caps& caps = view.config().caps;
  json routes = json::object();
  for (int f = 0; f < 2; ++f) {
    json fam = json::object();
    uint64_t total = 0;
    for (auto s : {OffloadState::kOffloaded, OffloadState::kPartial, OffloadState::kPunted}) {
      fam[OffloadStateName(s)] = c.routes[f][static_cast<int>(s)];
      total += c.routes[f][static_cast<int>(s)];
    }
    // A shadowed route's state is punt, yet none of its traffic
    // punts (more-specifics answer all of it): counted apart, not as punted.
    fam["punted"] = c.routes[f][static_cast<int>(OffloadState::kPunted)] - c.shadowed[f];
    fam["shadowed"] = c.shadowed[f];
    fam["total"] = total;
    routes[f == 0 ? "ipv4" : "ipv6"] = std::move(fam);
  }
  json dev = {{"name", ctx.device}, {"present", ctx.bar != nullptr}};
  if (device) {
    // What the writer put there (published after each commit); only the
    // read-only header came from the device, once.
    if (header0.ok()) {
      dev["caps"] = ToJson(header0->caps);
      dev["version"] = std::to_string(header0->version >> 16) + "." + std::to_string(header0->version & 0xFFFF);
      dev["generation"] = snap->generation;
      dev["control"] = {{"ipv4", (snap->control & regs::kControlV4Enable) != 0},
                        {"ipv6", (snap->control & regs::kControlV6Enable) != 0}};
    } else {
      dev["error"] = header0.status().ToString();
    }
  }
  const RatePoint r = rates.Recent(5);
  json sources = ctx.sources ? ctx.sources() : json::object();
  const auto uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return json{{"version", FIBNIC_VERSION},
          {"started_at", IsoTime(started_wall)},
          {"uptime_s", uptime},
          {"device", std::move(dev)},
          {"caps", ToJson(caps)},
          {"routes", std::move(routes)},
          {"candidates", c.candidates},
          {"neighbors", c.neighbors},
          {"slots", {{"used", c.slots_used}, {"total", caps.slots()}}},
          {"commits", snap->commits},
          {"counts_commits", c.commits},
          {"counts_age_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - snap->counts_at).count()},
          {"rates", {{"routes_per_s", r.routes_per_s}, {"bar_bytes_per_s", r.bar_bytes_per_s}, {"commits_per_s", r.commits_per_s}}},
          {"sources", std::move(sources)},
          {"events", {{"last_seq", ctx.telemetry ? ctx.telemetry->last_seq() : 0}}}};
}

StatusOr<json> FibApi::Impl::VerifyJson() {
  if (!view.has_device()) return FailedPrecondition("query parameter 'verify': there is no device to verify");
  const auto now = std::chrono::steady_clock::now();
  if (last_verify && now - *last_verify < ctx.verify_interval) {
    const auto wait = std::chrono::duration_cast<std::chrono::seconds>(ctx.verify_interval - (now - *last_verify)) +
                      std::chrono::seconds(1);
    return ResourceExhausted("verify=1 reads the whole device: at most once every " +
                             std::to_string(ctx.verify_interval.count()) + " ms; try again in " +
                             std::to_string(wait.count()) + " s");
  }
  last_verify = now;
  ASSIGN_OR_RETURN(VerifyReport v, view.Verify());
  json drift = json::array();
  for (const DeviceDrift& d : v.drift) drift.push_back({{"table", d.table}, {"index", d.index}});
  return json{{"generation", v.generation},
              {"in_sync", v.in_sync()},
              {"drift_total", v.drift_total},
              {"drift", std::move(drift)}};
}

StatusOr<HttpReply> FibApi::Impl::GetStatus(const HttpRequest& r) {
  ASSIGN_OR_RETURN(uint64_t verify, QueryUint(r, "verify", 0, 0, 1));
  ASSIGN_OR_RETURN(json status, StatusJson());
  if (verify) {
    auto v = VerifyJson();
    if (!v.ok() && v.status().code() == StatusCode::kResourceExhausted) {
      HttpReply rep = ErrorReply(429, v.status().message());
      rep.headers.emplace_back("Retry-After", std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                                                  ctx.verify_interval).count() + 1));
      return rep;
    }
    if (!v.ok()) return v.status();
    status["verify"] = std::move(*v);
  }
  return JsonReply(status);
}

StatusOr<HttpReply> FibApi::Impl::GetEvents(const HttpRequest& r) {
  ASSIGN_OR_RETURN(uint64_t since, QueryUint(r, "since", 0, 0, UINT64_MAX));
  ASSIGN_OR_RETURN(uint64_t limit, QueryUint(r, "limit", 100, 1, 1000));
  EventLevel level = EventLevel::kDebug;
  if (auto l = QueryString(r, "level"); l && !ParseEventLevel(*l, &level)) {
    return InvalidArgument("query parameter 'level': '" + *l + "' is not one of debug, info, warning, error");
  }
  json events = json::array();
  uint64_t last = 0;
  if (ctx.telemetry) {
    // Newest `limit` events after `since`: page from the tail when no cursor is given.
    uint64_t from = since;
    const uint64_t tail = ctx.telemetry->last_seq();
    if (!r.query.count("since") && tail > limit) from = tail - limit;
    for (const Event& e : ctx.telemetry->EventsSince(from, limit, level)) events.push_back(EventJson(e));
    last = tail;
  }
  return JsonReply({{"events", std::move(events)}, {"last_seq", last}});
}

StatusOr<HttpReply> FibApi::Impl::GetRates(const HttpRequest&) {
  json pts = json::array();
  for (const auto& p : rates.points()) {
    pts.push_back({{"unix_ms", p.unix_ms},
                   {"routes_per_s", p.routes_per_s},
                   {"bar_bytes_per_s", p.bar_bytes_per_s},
                   {"commits_per_s", p.commits_per_s}});
  }
  return JsonReply({{"interval_s", 1}, {"points", std::move(pts)}});
}

StatusOr<HttpReply> FibApi::Impl::GetStream(const HttpRequest& r) {
  const uint64_t last = ctx.telemetry ? ctx.telemetry->last_seq() : 0;
  ASSIGN_OR_RETURN(uint64_t since, QueryUint(r, "since", last, 0, UINT64_MAX));
  HttpReply rep;
  rep.stream = std::make_shared<LiveStream>(weak_from_this(), since);
  return rep;
}

FibApi::FibApi(boost::asio::io_context& io, WebContext ctx) {
  if (ctx.view) impl_ = std::make_shared<Impl>(io, std::move(ctx));
}
FibApi::~FibApi() {
  if (impl_) impl_->timer.cancel();
}

Status FibApi::Register(Router& router) {
  if (!impl_) return FailedPrecondition("web API: context has no Fib view");
  const std::string_view text = EmbeddedFile("openapi.json");
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.contains("paths")) return Internal("web API: embedded openapi.json does not parse");
  router.MergeDocument(doc);

  using Method = StatusOr<HttpReply> (Impl::*)(const HttpRequest&);
  struct Entry {
    const char* method;
    const char* pattern;
    Method fn;
  };
  std::vector<Entry> entries = {
      {"GET", "/api/v1/status", &Impl::GetStatus},
      {"GET", "/api/v1/routes", &Impl::GetRoutes},
      {"GET", "/api/v1/routes/{address}/{length}", &Impl::GetRoute},
      {"GET", "/api/v1/lookup/{address}", &Impl::GetLookup},
      {"GET", "/api/v1/nexthops", &Impl::GetNexthops},
      {"GET", "/api/v1/neighbors", &Impl::GetNeighbors},
      {"GET", "/api/v1/tcam", &Impl::GetTcam},
      {"GET", "/api/v1/sram", &Impl::GetSram},
      {"GET", "/api/v1/sram/map", &Impl::GetSramMap},
      {"GET", "/api/v1/events", &Impl::GetEvents},
      {"GET", "/api/v1/rates", &Impl::GetRates},
      {"GET", "/api/v1/stream", &Impl::GetStream},
      {"GET", "/metrics", &Impl::GetMetrics},
  };
  const bool statics = impl_->ctx.static_sink && impl_->ctx.request_commit;
  if (statics) {
    entries.push_back({"PUT", "/api/v1/routes/static/{address}/{length}", &Impl::PutStaticRoute});
    entries.push_back({"DELETE", "/api/v1/routes/static/{address}/{length}", &Impl::DeleteStaticRoute});
  }
  for (const auto& e : entries) {
    std::string m = e.method;
    std::transform(m.begin(), m.end(), m.begin(), ::tolower);
    const auto& paths = doc["paths"];
    if (!paths.contains(e.pattern) || !paths[e.pattern].contains(m)) {
      return Internal(std::string("web API: openapi.json does not document ") + e.method + " " + e.pattern);
    }
    std::weak_ptr<Impl> weak = impl_;
    Method fn = e.fn;
    RETURN_IF_ERROR(router.Add({e.method, e.pattern,
                                [weak, fn](const HttpRequest& r) -> StatusOr<HttpReply> {
                                  auto self = weak.lock();
                                  if (!self) return Unavailable("the API is shutting down");
                                  return ((*self).*fn)(r);
                                },
                                paths[e.pattern][m]}));
  }
  // The document may describe only what is mounted (static routes are optional).
  for (const auto& [path, ops] : doc["paths"].items()) {
    for (const auto& [m, op] : ops.items()) {
      const bool known = std::any_of(entries.begin(), entries.end(), [&](const Entry& e) {
        std::string em = e.method;
        std::transform(em.begin(), em.end(), em.begin(), ::tolower);
        return e.pattern == path && em == m;
      });
      const bool optional_static = path.rfind("/api/v1/routes/static/", 0) == 0 && !statics;
      if (!known && !optional_static) return Internal("web API: openapi.json documents " + m + " " + path + " which is not served");
    }
  }
  impl_->StartSampler();
  return OkStatus();
}

}  // namespace fibnic::web
