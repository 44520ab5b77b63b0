// fibnicctl's renderings of API answers.
#include "tools/ctl_table.h"

#include <gtest/gtest.h>

namespace fibnic {
namespace {

using nlohmann::json;

TEST(CtlTable, TableWithNestedColumnsAndMissingCells) {
  json rows = json::parse(R"([
    {"prefix": "10.0.0.0/8", "state": "offloaded", "paths": [{"gateway": "192.0.2.1", "port": 1}], "slash24": {"total": 65536}},
    {"prefix": "2001:db8::/32", "state": "punted", "reason": "no-slot", "paths": []}
  ])");
  EXPECT_EQ(RenderTable(rows),
            "PATHS                               PREFIX         SLASH24.TOTAL  STATE      REASON\n"
            "[{\"gateway\":\"192.0.2.1\",\"port\":1}]  10.0.0.0/8     65536          offloaded  -\n"
            "-                                   2001:db8::/32  -              punted     no-slot\n");
}

TEST(CtlTable, PathsShowTheirText) {
  json paths = json::parse(R"([{"gateway": "10.0.0.1", "text": "via 10.0.0.1 port 0"}, {"text": "connected port 2"}])");
  EXPECT_EQ(CellText(paths), "via 10.0.0.1 port 0, connected port 2");
}

TEST(CtlTable, AnswerWithListAndScalars) {
  json j = json::parse(R"({"routes": [{"prefix": "10.0.0.0/8"}], "total": 1, "next": null})");
  EXPECT_EQ(RenderAnswer(j), "PREFIX\n10.0.0.0/8\n\nnext:  -\ntotal: 1\n");
  EXPECT_EQ(RenderAnswer(json::parse(R"({"routes": []})")), "routes: -\n");
}

TEST(CtlTable, SideBySide) {
  json rib = {{"path", "via 192.0.2.1 port 1"}, {"matched", "10.0.0.0/8"}};
  json hw = {{"forward", true}, {"path", "port 1"}};
  EXPECT_EQ(RenderSideBySide(rib, "rib", hw, "hardware"),
            "         RIB                   HARDWARE\n"
            "matched  10.0.0.0/8            \n"
            "path     via 192.0.2.1 port 1  port 1\n"
            "forward                        true\n");
}

}  // namespace
}  // namespace fibnic
