#include "tests/web/web_harness.h"

#include <map>
#include <random>

#include "sources/file/route_file.h"
#include "hwif/fibnic_device.h"

namespace fibnic::web::testing {

Harness::Harness(FibConfig config) : fib_(std::make_unique<Fib>(config)) {
  const regs::Caps& caps = config.caps;
  std::vector<uint8_t> bytes(caps.bar_bytes(), 0);
  const auto preset = FibnicCsrPreset(caps);
  std::copy(preset.begin(), preset.end(), bytes.begin());
  bar_ = std::make_unique<MemoryBar>(std::move(bytes));
  pusher_ = std::make_unique<FibnicPusher>(*bar_);
  for (PortId p = 0; p < caps.ports; ++p) {
    fib_->SetPortMac(p, MacAddr{{0x02, 0x00, 0x00, 0x00, 0x00, static_cast<uint8_t>(0x10 + p)}});
  }
}

Harness::~Harness() = default;

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
  const int ports = fib_->config().caps.ports;
  // Index by prefix so ECMP lines join their route without a quadratic scan.
  std::map<Prefix, size_t> index;
  RETURN_IF_ERROR(ReadRouteFile(routes, ports, [&](const RouteLine& l) -> Status {
    auto it = index.find(l.prefix);
    if (it == index.end()) {
      index.emplace(l.prefix, routes_.size());
      routes_.push_back(Route{l.prefix, RouteSource::kStatic, 1, {l.path}});
      ++input_prefixes_[l.prefix.family() == Family::kV4 ? 0 : 1];
    } else {
      auto& paths = routes_[it->second].paths;
      paths.push_back(l.path);
      std::sort(paths.begin(), paths.end());
    }
    return OkStatus();
  }));
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
    fib_->UpsertNeighbor(n);
    oracle_.SetNeighbor(n);
  }
  for (const auto& r : routes_) {
    fib_->UpsertRoute(r);
    oracle_.SetRoute(r.prefix, r.paths);
  }
  fib_->Commit();
  return pusher_->Sync(fib_->image());
}

void Harness::Upsert(const Route& r) {
  fib_->UpsertRoute(r);
  oracle_.SetRoute(r.prefix, r.paths);
}

void Harness::Delete(const Prefix& p) {
  fib_->DeleteRoute(p, RouteSource::kStatic);
  oracle_.EraseRoute(p);
}

Status Harness::Commit() {
  auto deltas = fib_->Commit();
  RETURN_IF_ERROR(pusher_->Push(deltas, fib_->image()));
  if (telemetry_) {
    telemetry_->Counter(kBarBytesWrittenTotal, "Bytes written to BAR0")->Add(pusher_->last().bytes_written());
    telemetry_->Counter(kCommitsTotal, "Commits pushed")->Add();
  }
  return OkStatus();
}

Status Harness::Mount(boost::asio::io_context& io, Router& router, Telemetry* telemetry) {
  telemetry_ = telemetry;
  WebContext ctx;
  ctx.fib = fib_.get();
  ctx.bar = bar_.get();
  ctx.device = "memory:test-harness";
  ctx.telemetry = telemetry;
  ctx.static_sink = &fib_->sink();
  ctx.request_commit = [this] {
    Status st = Commit();
    if (!st.ok() && telemetry_) telemetry_->Record(EventLevel::kError, "push", st.ToString());
  };
  ctx.sources = [this] {
    return nlohmann::json{{"harness", {{"routes", routes_.size()}, {"neighbors", neighbors_.size()}}}};
  };
  api_ = std::make_unique<FibApi>(io, std::move(ctx));
  return api_->Register(router);
}

}  // namespace fibnic::web::testing
