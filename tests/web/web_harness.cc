#include "tests/web/web_harness.h"

#include <chrono>
#include <future>
#include <map>
#include <random>

#include <boost/asio/post.hpp>

#include "sources/file/route_file.h"
#include "sources/file/static_table.h"
#include "hwif/fibnic_device.h"

namespace fibnic::web::testing {

Harness::Harness(FibConfig config) : config_(config) {
  const regs::Caps& caps = config.caps;
  std::vector<uint8_t> bytes(caps.bar_bytes(), 0);
  const auto preset = FibnicCsrPreset(caps);
  std::copy(preset.begin(), preset.end(), bytes.begin());
  bar_ = std::make_unique<MemoryBar>(std::move(bytes));
  writer_ = std::make_unique<FibnicWriter>(*bar_);
  pipeline_ = std::make_unique<Pipeline>(config, *writer_, BatchPolicy{});
  FibView::Options view_options;  // as fibnicd: the counts follow every commit
  view_options.post_after = [this](std::chrono::steady_clock::duration d, std::function<void()> fn) {
    pipeline_->PostAfter(d, std::move(fn));
  };
  view_options.strand_busy = [this] { return always_busy_ || pipeline_->busy(); };
  // As the idle bound: fibnicd's 100 makes a busy recount wait many seconds
  // under ASan on a loaded machine; the tests hold the busy path to coming
  // at all, not to its length.
  view_options.busy_cost_factor = view_options.cost_factor;
  view_ = FibView::Create([this](std::function<void()> fn) { boost::asio::post(pipeline_->io(), std::move(fn)); },
                          pipeline_->fib(), writer_.get(), view_options);
  pipeline_->SetCommitListener([view = view_](const Fib&, const DeviceWriter&) { view->Publish(); });
  pipeline_->SetBatchObserver([this](const BatchReport& b) {
    Telemetry* t = telemetry_.load();
    if (!t || !b.ok) return;
    t->Counter(kBarBytesWrittenTotal, "Bytes written to BAR0")->Add(4 * b.bus_writes);
    t->Counter(kCommitsTotal, "Commits pushed")->Add();
  });
  pipeline_->Start();
  pipeline_->Mutate([&caps](Fib& fib) {
    for (PortId p = 0; p < caps.ports; ++p) {
      fib.SetPortMac(p, MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, static_cast<uint8_t>(0x10 + p)}});
    }
  });
}

Harness::~Harness() { pipeline_->Stop(); }

void Harness::AddRouteLine(const Prefix& p, const NextHop& nh) {
  for (auto& r : routes_) {
    if (r.prefix == p) {
      r.paths.push_back(nh);
      std::sort(r.paths.begin(), r.paths.end());
      return;
    }
  }
  routes_.push_back(Route{p, RouteSource::kStatic, 1, {nh}});
  ++input_prefixes_[p.family() == Family::kV4 ? 0 : 1];
}

Status Harness::LoadRouteFiles(const std::string& routes, const std::string& neighbors) {
  const int ports = config_.caps.ports;
  // The one reader of route files (fibnicd's and fibnic-compile's): ECMP
  // lines join their prefix as they do there.
  ASSIGN_OR_RETURN(StaticTable table, ReadStaticTable(routes, ports));
  table.ForEachRoute(RouteSource::kStatic, 1, [this](Route r) {
    ++input_prefixes_[r.prefix.family() == Family::kV4 ? 0 : 1];
    routes_.push_back(std::move(r));
  });
  ASSIGN_OR_RETURN(neighbors_, ReadNeighborFile(neighbors, ports));
  return Start();
}

Status Harness::LoadSynthetic(int v4, int v6, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const IpAddr gw4[3] = {*IpAddr::Parse("10.255.0.1"), *IpAddr::Parse("10.255.0.2"), *IpAddr::Parse("10.255.0.3")};
  const IpAddr gw6[3] = {*IpAddr::Parse("fd00::1"), *IpAddr::Parse("fd00::2"), *IpAddr::Parse("fd00::3")};
  for (int i = 0; i < 2; ++i) {  // gateway 3 stays unresolved: its routes must punt
    neighbors_.push_back({gw4[i], MacAddr{{0x52, 0x54, 0, 0, 4, static_cast<uint8_t>(i + 1)}}, static_cast<PortId>(i + 1)});
    neighbors_.push_back({gw6[i], MacAddr{{0x52, 0x54, 0, 0, 6, static_cast<uint8_t>(i + 1)}}, static_cast<PortId>(i + 1)});
  }
  std::map<Prefix, NextHop> chosen;
  while (chosen.size() < size_t(v4)) {
    const int len = std::uniform_int_distribution<int>(8, 28)(rng);
    const uint32_t a = static_cast<uint32_t>(rng()) & MaskV4(len);
    if ((a >> 24) == 10 && ((a >> 16) & 255) == 255) continue;  // keep the gateways' own /16 out
    const int g = static_cast<int>(rng() % 3);
    chosen.emplace(Prefix::V4(a, len), NextHop{gw4[g], static_cast<PortId>(g + 1)});
  }
  while (chosen.size() < size_t(v4 + v6)) {
    const int len = std::uniform_int_distribution<int>(16, 72)(rng);
    const U128 a = ((U128{0x2001} << 112) | (U128{rng()} << 48) | rng()) & MaskV6(len);
    const int g = static_cast<int>(rng() % 3);
    chosen.emplace(Prefix::V6(a, len), NextHop{gw6[g], static_cast<PortId>(g + 1)});
  }
  for (const auto& [p, nh] : chosen) AddRouteLine(p, nh);
  return Start();
}

Status Harness::Start() {
  for (const auto& n : neighbors_) {
    pipeline_->sink().UpsertNeighbor(n);
    oracle_.SetNeighbor(n);
  }
  for (const auto& r : routes_) {
    pipeline_->sink().UpsertRoute(r);
    oracle_.SetRoute(r.prefix, r.paths);
  }
  std::promise<Status> synced;
  pipeline_->FinishInitialSync([&synced](Status st, const Fib&) { synced.set_value(st); });
  return synced.get_future().get();
}

void Harness::Upsert(const Route& r) {
  pipeline_->sink().UpsertRoute(r);
  oracle_.SetRoute(r.prefix, r.paths);
}

void Harness::Delete(const Prefix& p) {
  pipeline_->sink().DeleteRoute(p, RouteSource::kStatic);
  oracle_.EraseRoute(p);
}

Status Harness::Commit() {
  const uint64_t errors = pipeline_->metrics().push_errors;
  auto done = std::make_shared<std::promise<void>>();
  auto on_device = done->get_future();
  pipeline_->Barrier([done] { done->set_value(); });
  pipeline_->Kick();
  if (on_device.wait_for(std::chrono::seconds(30)) != std::future_status::ready) {
    return Unavailable("harness: the pipeline did not push within 30 s");
  }
  const PipelineMetrics m = pipeline_->metrics();
  if (m.push_errors != errors) return IoError("harness: push failed: " + m.last_error);
  return OkStatus();
}

Status Harness::Mount(boost::asio::io_context& io, Router& router, Telemetry* telemetry,
                      std::chrono::milliseconds verify_interval) {
  telemetry_ = telemetry;
  WebContext ctx;
  ctx.view = view_;
  ctx.bar = bar_.get();
  ctx.device = "memory:test-harness";
  ctx.telemetry = telemetry;
  ctx.static_sink = &pipeline_->sink();
  ctx.verify_interval = verify_interval;
  // A PUT answers once its route is on the BAR (fibnicd's only kicks the pipeline).
  ctx.request_commit = [this] {
    Status st = Commit();
    if (Telemetry* t = telemetry_.load(); !st.ok() && t) t->Record(EventLevel::kError, "push", st.ToString());
  };
  ctx.sources = [this] {
    return nlohmann::json{{"harness", {{"routes", routes_.size()}, {"neighbors", neighbors_.size()}}}};
  };
  api_ = std::make_unique<FibApi>(io, std::move(ctx));
  return api_->Register(router);
}

}  // namespace fibnic::web::testing
