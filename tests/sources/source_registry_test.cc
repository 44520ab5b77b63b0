// The source registry and the sources' common face: start in order, a failure
// names its source and stops there, only what started is stopped (in reverse),
// the initial sync is done only when every source's is, and the stats JSON is
// {name: object} with the keys the dashboard, fibnicctl and the lab and bench
// scripts read. The api source hands on only kApi routes.
#include "sources/source.h"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <set>

#include "sources/api/api_source.h"
#include "sources/file/file_source.h"
#include "sources/fpm/fpm_source.h"
#include "sources/kernel/kernel_source.h"
#include "tests/sources/recording_sink.h"

namespace fibnic {
namespace {

class FakeSource : public Source {
 public:
  FakeSource(const char* name, std::vector<std::string>& log, Status start = OkStatus())
      : name_(name), log_(log), start_(std::move(start)) {}
  const char* name() const override { return name_; }
  Status Start() override {
    log_.push_back(std::string("start ") + name_);
    return start_;
  }
  void Stop() override { log_.push_back(std::string("stop ") + name_); }
  bool initial_sync_done() const override { return done; }
  nlohmann::json StatsJson() const override { return {{"routes", routes}}; }
  bool done = true;
  int routes = 0;

 private:
  const char* name_;
  std::vector<std::string>& log_;
  Status start_;
};

TEST(SourceRegistry, StartsInOrderStopsStartedInReverse) {
  std::vector<std::string> log;
  SourceRegistry reg;
  reg.Add(std::make_unique<FakeSource>("a", log));
  reg.Add(std::make_unique<FakeSource>("b", log, Unavailable("port taken")));
  reg.Add(std::make_unique<FakeSource>("c", log));
  const Status st = reg.StartAll();
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(), "b source: port taken");
  reg.StopAll();
  EXPECT_EQ(log, (std::vector<std::string>{"start a", "start b", "stop a"}));
}

TEST(SourceRegistry, InitialSyncWaitsForEverySourceAndStatsAreKeyedByName) {
  std::vector<std::string> log;
  SourceRegistry reg;
  FakeSource& a = reg.Add(std::make_unique<FakeSource>("a", log));
  FakeSource& b = reg.Add(std::make_unique<FakeSource>("b", log));
  ASSERT_TRUE(reg.StartAll().ok());
  b.done = false;
  EXPECT_FALSE(reg.initial_sync_done());
  b.done = true;
  EXPECT_TRUE(reg.initial_sync_done());
  a.routes = 7;
  EXPECT_EQ(reg.StatsJson(),
            (nlohmann::json{{"a", {{"routes", 7}, {"state", "up"}}}, {"b", {{"routes", 0}, {"state", "up"}}}}));
  reg.StopAll();
  EXPECT_EQ(log, (std::vector<std::string>{"start a", "start b", "stop b", "stop a"}));
}

std::set<std::string> Keys(const nlohmann::json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// The real sources under their names, with the keys /api/v1/status gives
// (docs/sources.md "Stats"; tests/lab and the benches read kernel.routes).
TEST(SourceRegistry, RealSourcesReportTheirKnownKeys) {
  boost::asio::io_context io;
  testing::RecordingSink sink;
  SourceRegistry reg;
  reg.Add(std::make_unique<KernelSource>(io, sink, KernelSourceConfig{}));
  reg.Add(std::make_unique<FileSource>(sink, "", "", 1, 4));
  reg.Add(std::make_unique<FpmSource>(io, FpmSourceConfig{}));
  reg.Add(std::make_unique<ApiSource>(sink));
  const nlohmann::json j = reg.StatsJson();
  EXPECT_EQ(Keys(j), (std::set<std::string>{"kernel", "file", "fpm", "api"}));
  EXPECT_EQ(Keys(j["kernel"]), (std::set<std::string>{"messages", "ignored", "routes", "neighbors", "route_updates",
                                                      "neighbor_updates", "errors", "overruns", "resyncs", "swept",
                                                      "resolve_requests", "unsure_redumps", "torn_dumps", "kept_unlisted", "route_kinds", "memory_bytes", "dumping",
                                                      "refusing", "last_error", "state"}));
  EXPECT_EQ(Keys(j["file"]), (std::set<std::string>{"routes", "neighbors", "loads", "state"}));
  EXPECT_EQ(Keys(j["fpm"]), (std::set<std::string>{"connected", "peer", "connections", "frames", "messages", "ignored",
                                                   "deleted", "errors", "resyncs", "last_error", "refused", "state"}));
  EXPECT_EQ(Keys(j["api"]), (std::set<std::string>{"routes", "upserts", "deletes", "state"}));
  // One word each for operators: FPM with no zebra connected is down.
  EXPECT_EQ(j["fpm"]["state"], "down");
  EXPECT_EQ(j["file"]["state"], "up");
  EXPECT_EQ(j["api"]["state"], "up");
  // Not started: the kernel's first dump is not in, the files not read.
  EXPECT_FALSE(reg.sources()[0]->initial_sync_done());
  EXPECT_FALSE(reg.sources()[1]->initial_sync_done());
  EXPECT_TRUE(reg.sources()[2]->initial_sync_done());
  EXPECT_TRUE(reg.sources()[3]->initial_sync_done());
}

TEST(ApiSource, HandsOnApiRoutesOnlyAndCountsThem) {
  testing::RecordingSink sink;
  ApiSource api(sink);
  const Prefix p = *Prefix::Parse("10.1.0.0/16");
  api.UpsertRoute(Route{p, RouteSource::kStatic, 3, {NextHop{std::nullopt, 1}}});
  ASSERT_EQ(sink.routes().count(p), 1u);
  EXPECT_EQ(sink.routes()[p].source, RouteSource::kApi);
  EXPECT_EQ(sink.routes()[p].distance, 3);
  api.UpsertRoute(Route{p, RouteSource::kApi, 3, {NextHop{std::nullopt, 2}}});
  EXPECT_EQ(api.StatsJson(), (nlohmann::json{{"routes", 1}, {"upserts", 2}, {"deletes", 0}}));
  api.DeleteRoute(p, RouteSource::kStatic);
  EXPECT_EQ(sink.routes().count(p), 0u);
  EXPECT_EQ(api.StatsJson(), (nlohmann::json{{"routes", 0}, {"upserts", 2}, {"deletes", 1}}));
}

}  // namespace
}  // namespace fibnic
