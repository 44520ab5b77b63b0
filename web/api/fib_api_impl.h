// Internal to the Fib REST API: the state its handlers share (split over
// fib_api.cc — service routes — and fib_tables.cc — table routes).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <boost/asio/steady_timer.hpp>
#include <nlohmann/json.hpp>

#include "web/api/context.h"
#include "web/api/device_view.h"
#include "web/api/fib_api.h"
#include "web/api/rate_history.h"
#include "web/http/router.h"
#include "web/api/sram_picture.h"

namespace fibnic::web {

struct FibApi::Impl : std::enable_shared_from_this<FibApi::Impl> {
  Impl(boost::asio::io_context& io, WebContext c);

  // Fib::Counts() passes over every /24 cell (tens of milliseconds on a full
  // table), so it is cached: recomputed when the device's GENERATION moved (every
  // second without a device), but never sooner than 20x its own cost — at most
  // ~5% of the io thread.
  const FibCounts& Counts();
  std::optional<uint32_t> DeviceGeneration();

  void StartSampler();
  void Sample();
  nlohmann::json StatusJson();

  // --- service routes (fib_api.cc)
  StatusOr<HttpReply> GetStatus(const HttpRequest& r);
  StatusOr<HttpReply> GetEvents(const HttpRequest& r);
  StatusOr<HttpReply> GetRates(const HttpRequest& r);
  StatusOr<HttpReply> GetStream(const HttpRequest& r);
  StatusOr<HttpReply> GetMetrics(const HttpRequest& r);
  // --- table routes (fib_tables.cc)
  StatusOr<HttpReply> GetRoutes(const HttpRequest& r);
  StatusOr<HttpReply> GetRoute(const HttpRequest& r);
  StatusOr<HttpReply> PutStaticRoute(const HttpRequest& r);
  StatusOr<HttpReply> DeleteStaticRoute(const HttpRequest& r);
  StatusOr<HttpReply> GetLookup(const HttpRequest& r);
  StatusOr<HttpReply> GetNexthops(const HttpRequest& r);
  StatusOr<HttpReply> GetNeighbors(const HttpRequest& r);
  StatusOr<HttpReply> GetTcam(const HttpRequest& r);
  StatusOr<HttpReply> GetSram(const HttpRequest& r);
  StatusOr<HttpReply> GetSramMap(const HttpRequest& r);

  // The SRAM the picture shows: the device's when there is one (what really
  // forwards), else the compiled image's. Cached until the next commit.
  struct SramSnapshot {
    std::string source;  // "device" or "image"
    int code_bits = 2;
    std::vector<uint8_t> bytes;
    std::optional<SramSummary> summary;
    std::map<std::pair<uint32_t, int>, std::vector<uint8_t>> pictures;
  };
  StatusOr<SramSnapshot*> Sram();

  WebContext ctx;
  boost::asio::steady_timer timer;
  RateHistory rates;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::system_clock::time_point started_wall = std::chrono::system_clock::now();
  std::unique_ptr<DeviceView> device;
  struct CountsCache {
    FibCounts value;
    bool valid = false;
    std::chrono::steady_clock::time_point at;
    std::chrono::duration<double> cost{0};
    std::optional<uint32_t> generation;
  } counts_cache;
  std::optional<std::pair<uint64_t, uint64_t>> sram_key;  // (generation, commits)
  SramSnapshot sram;
};

StatusOr<Prefix> PrefixFromParams(const HttpRequest& r);

}  // namespace fibnic::web
