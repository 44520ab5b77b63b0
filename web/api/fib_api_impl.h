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

  void StartSampler();
  void Sample();
  // Counts from the published snapshot (never waits for the strand, except
  // for the very first counts).
  StatusOr<nlohmann::json> StatusJson();

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

  // The SRAM the picture shows (FibView::Sram: what was written to the
  // device, or the compiled image without one), with what was derived from
  // it, kept while the view hands out the same copy.
  // A summary passes over all 2^24 /24s on the web thread: a newer copy is
  // not asked for sooner than 20x the last summary's cost after it.
  struct SramViews {
    std::shared_ptr<const SramCopy> copy;
    std::optional<SramSummary> summary;
    std::map<std::pair<uint32_t, int>, std::vector<uint8_t>> pictures;
    std::chrono::steady_clock::time_point keep_until;
  };
  StatusOr<SramViews*> Sram();
  // The device's live state compared with the compiled image, rate limited.
  StatusOr<nlohmann::json> VerifyJson();

  WebContext ctx;
  FibView& view;
  boost::asio::steady_timer timer;
  RateHistory rates;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::chrono::system_clock::time_point started_wall = std::chrono::system_clock::now();
  std::unique_ptr<DeviceView> device;
  StatusOr<BarHeader> header0 = Unavailable("no device");  // read once: ID, VERSION, CAPS
  std::optional<std::chrono::steady_clock::time_point> last_verify;
  SramViews sram;
};

StatusOr<Prefix> PrefixFromParams(const HttpRequest& r);

}  // namespace fibnic::web
