// fibnicctl's renderings of API answers: the generic tables, the per-command
// views, and what they print for answers with members missing or mistyped.
#include "tools/ctl_table.h"
#include "tools/ctl_views.h"

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

TEST(CtlTable, AtFollowsDottedPathsAndAnswersNullOtherwise) {
  json j = json::parse(R"({"device": {"caps": {"code_bits": 4}, "name": "file:x"}, "n": 3})");
  EXPECT_EQ(At(j, "device.caps.code_bits"), 4);
  EXPECT_EQ(At(j, "n"), 3);
  EXPECT_TRUE(At(j, "device.caps.ports").is_null());
  EXPECT_TRUE(At(j, "device.name.x").is_null());  // through a string
  EXPECT_TRUE(At(j, "n.x").is_null());
  EXPECT_TRUE(At(json(nullptr), "a").is_null());
  EXPECT_TRUE(At(json::array({1}), "a").is_null());
}

TEST(CtlTable, GridAlignsCountsRightAndContinuesMultiLineCells) {
  EXPECT_EQ(RenderGrid({"prefix", "paths", "n"},
                       {{"10.0.0.0/8", "via 192.0.2.1 port 0\nvia 192.0.2.2 port 1", "7"},
                        {"10.1.0.0/16", "drop", "12"}},
                       {false, false, true}),
            "PREFIX       PATHS                  N\n"
            "10.0.0.0/8   via 192.0.2.1 port 0   7\n"
            "             via 192.0.2.2 port 1\n"
            "10.1.0.0/16  drop                  12\n");
  // A short row is filled with "-"; no line ends in blanks.
  EXPECT_EQ(RenderGrid({"a", "b"}, {{"x"}}), "A  B\nx  -\n");
  EXPECT_EQ(RenderGrid({"a", "b"}, {}), "A  B\n");
}

TEST(CtlTable, NumbersForPeople) {
  EXPECT_EQ(FormatRate(0.9990009990009991), "1.0");
  EXPECT_EQ(FormatRate(0.5), "0.5");
  EXPECT_EQ(FormatRate(0.01), "0");
  EXPECT_EQ(FormatRate(12.4), "12");
  EXPECT_EQ(FormatRate(9.97), "10");
  EXPECT_EQ(FormatRate("fast"), "-");
  EXPECT_EQ(FormatRate(nullptr), "-");
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(1000), "1000 B");
  EXPECT_EQ(FormatBytes(3 * 1024 + 205), "3.2 KiB");
  EXPECT_EQ(FormatBytes(50.0 * 1024 * 1024), "50 MiB");
  EXPECT_EQ(FormatCount(42), "42");
  EXPECT_EQ(FormatCount(-1), "-1");
  EXPECT_EQ(FormatCount(true), "-");
  EXPECT_EQ(FormatCount(json::object()), "-");
  EXPECT_EQ(FormatAge(0.4), "0s");
  EXPECT_EQ(FormatAge(-3), "0s");
  EXPECT_EQ(FormatAge(59.9), "59s");
  EXPECT_EQ(FormatAge(65), "1m05s");
  EXPECT_EQ(FormatAge(3725), "1h02m");
  EXPECT_EQ(FormatAge(90000), "1d01h");
}

// Status with the families, slots, sources and pipeline fibnicd reports; the
// source that logged an event is dated by it, the others by the uptime (every
// event since the start is at hand).
TEST(CtlViews, StatusReadsLikeAShowCommand) {
  json s = json::parse(R"({
    "version": "0.1.0", "started_at": "2026-01-01T00:00:00Z", "uptime_s": 125.7,
    "device": {"name": "file:/tmp/bar0.img", "present": true, "version": "1.0", "generation": 42,
               "control": {"ipv4": true, "ipv6": false},
               "caps": {"code_bits": 4, "slots": 15, "ports": 4, "sram_addr_bits": 22, "nexthop_entries": 16,
                        "tcam_entries": 32, "neigh_entries": 64, "drop": true}},
    "caps": {"code_bits": 4, "slots": 15, "ports": 4, "sram_addr_bits": 22, "nexthop_entries": 16,
             "tcam_entries": 32, "neigh_entries": 64, "drop": true},
    "routes": {"ipv4": {"offloaded": 3, "partial": 1, "punted": 1, "shadowed": 1, "total": 6},
               "ipv6": {"offloaded": 0, "partial": 0, "punted": 2, "shadowed": 0, "total": 2}},
    "candidates": 9, "neighbors": 4, "slots": {"used": 3, "total": 15},
    "commits": 17, "counts_commits": 17, "counts_age_s": 0.25,
    "rates": {"routes_per_s": 0.9990009990009991, "bar_bytes_per_s": 2048, "commits_per_s": 0.5},
    "sources": {"api": {"routes": 0, "upserts": 0, "deletes": 0, "state": "up"},
                "fpm": {"connected": false, "peer": "", "errors": 0, "last_error": "", "state": "down"},
                "kernel": {"routes": 5, "errors": 0, "dumping": false, "refusing": null, "last_error": "",
                           "state": "up"},
                "pipeline": {"queue_depth": 0, "queue_depth_max": 12, "batches": 17, "batch_size_last": 3,
                             "push_ms_last": 0.42, "latency_ms_last": 1.26, "push_errors": 0, "resyncs": 0,
                             "last_error": ""}}})");
  json events = json::parse(R"({"last_seq": 2, "events": [
    {"seq": 1, "unix_ms": 1767225600000, "category": "source", "message": "fpm: listening on 127.0.0.1:2620"},
    {"seq": 2, "unix_ms": 1767225680000, "category": "source",
     "message": "fpm: zebra 127.0.0.1 closed the connection"}]})");
  EXPECT_EQ(RenderStatus(s, events),
            "fibnicd 0.1.0, up 2m05s; device file:/tmp/bar0.img, FIBNIC 1.0, generation 42; 17 commits\n"
            "\n"
            "FAMILY  LOOKUP  TOTAL  OFFLOADED  PARTIAL  PUNTED  SHADOWED\n"
            "ipv4    on          6          3        1       1         1\n"
            "ipv6    off         2          0        0       2         0\n"
            "\n"
            "slots       3/15 used (4-bit codes)\n"
            "neighbors   4\n"
            "candidates  9 routes from every source, best or not\n"
            "caps        4-bit codes, 15 slots, 4 ports, SRAM 2^22 words, NEXTHOP 16, TCAM6 32, NEIGH 64, "
            "drops in the card\n"
            "rates       1.0 routes/s, 2.0 KiB/s to the device, 0.5 commits/s\n"
            "\n"
            "SOURCE  STATE  SINCE  ROUTES  ERRORS  NOTE\n"
            "api     up     2m05s       0       -  -\n"
            "fpm     down   45s         -       0  -\n"
            "kernel  up     2m05s       5       0  -\n"
            "\n"
            "pipeline  queue 0 (max 12), 17 batches; the last of 3 pushed in 0.4 ms, 1.3 ms from update to device\n"
            "          0 push errors, 0 resyncs\n");
}

TEST(CtlViews, StatusSaysWhenCountsLagAndDeviceCapsDiffer) {
  json s = json::parse(R"({"commits": 20, "counts_commits": 17, "counts_age_s": 3.2,
    "routes": {"ipv4": {"total": 1}}, "caps": {"code_bits": 2}, "device": {"caps": {"code_bits": 4}}})");
  const std::string out = RenderStatus(s, nullptr);
  EXPECT_NE(out.find("(counted 3 commits ago, 3s old)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\ndevice caps  4-bit codes"), std::string::npos) << out;
}

TEST(CtlViews, StatusWithNothingKnownPrintsDashes) {
  for (const char* text : {"{}", "null", "[1, 2]", R"({"routes": 5, "sources": [1], "device": "x", "rates": 3,
                            "uptime_s": "long", "slots": {"used": "many"}, "caps": [], "sources": {"x": 1}})",
                           R"({"sources": {"error": "the sources' loop did not answer within 2 s",
                                           "pipeline": {"last_error": "bus fault"}}})"}) {
    const std::string out = RenderStatus(json::parse(text), json::parse(R"({"events": "none"})"));
    EXPECT_EQ(out.rfind("fibnicd -, up -; device -, generation -; - commits\n", 0), 0u) << text << "\n" << out;
    EXPECT_NE(out.find("slots       -/- used\n"), std::string::npos) << out;
    EXPECT_NE(out.find("rates       - routes/s, -/s to the device, - commits/s\n"), std::string::npos) << out;
  }
  const std::string broken = RenderStatus(
      json::parse(R"({"sources": {"error": "the sources' loop did not answer within 2 s",
                                  "pipeline": {"last_error": "bus fault"}}})"), nullptr);
  EXPECT_NE(broken.find("sources: the sources' loop did not answer within 2 s\n"), std::string::npos) << broken;
  EXPECT_NE(broken.find("- push errors, - resyncs; last error: bus fault\n"), std::string::npos) << broken;
}

TEST(CtlViews, RoutesPrefixFirstPathsOnePerLine) {
  json j = json::parse(R"({"routes": [
    {"prefix": "10.0.0.0/8", "family": "ipv4", "source": "kernel", "distance": 0, "best": true,
     "state": "partial", "reason": "mixed-/24", "slash24_total": 65536, "slash24_punted": 2,
     "paths": [{"gateway": "192.0.2.1", "port": 0, "text": "via 192.0.2.1 port 0"},
               {"gateway": "192.0.2.2", "port": 1, "text": "via 192.0.2.2 port 1"}]},
    {"prefix": "2001:db8::/32", "state": "punted", "reason": "to-host", "why": "a local route",
     "source": "static", "paths": [{"text": "to host"}]},
    {"prefix": "198.51.100.0/24", "state": "offloaded", "reason": "none", "source": "api",
     "paths": [{"gateway": "10.1.0.2", "port": 3}]},
    {"state": 7, "paths": "x"}],
    "next": "198.51.100.0/24", "scanned": 3})");
  EXPECT_EQ(RenderRoutes(j),
            "PREFIX           STATE      PATHS                 SOURCE  REASON\n"
            "10.0.0.0/8       partial    via 192.0.2.1 port 0  kernel  mixed-/24, 2 of 65536 /24s punt\n"
            "                            via 192.0.2.2 port 1\n"
            "2001:db8::/32    punted     to host               static  to-host: a local route\n"
            "198.51.100.0/24  offloaded  via 10.1.0.2 port 3   api     -\n"
            "-                -          -                     -       -\n"
            "more: add --after 198.51.100.0/24\n");
  EXPECT_EQ(RenderRoutes(json::parse(R"({"routes": [], "next": null, "scanned": 0})")), "no routes\n");
  EXPECT_EQ(RenderRoutes(json::parse(R"({"error": "x"})")), "no routes\n");
}

TEST(CtlViews, NexthopsOneRowPerCode) {
  json j = json::parse(R"({"slots": [
    {"code": 1, "owner": {"gateway": null, "port": 0, "connected": true, "text": "connected port 0"},
     "adjacency": "port 0", "next_hops": [{"text": "connected port 0"}], "weight": 1,
     "entry": {"valid": true, "connected": true, "drop": false, "mac": "00:00:00:00:00:00", "port": 0},
     "device": {"valid": true}, "in_sync": true},
    {"code": 2, "owner": {"gateway": "10.1.0.2", "port": 0, "text": "via 10.1.0.2 port 0"}, "adjacency": "x",
     "next_hops": [{"text": "via 10.1.0.2 port 0"}, {"text": "via 10.1.0.3 port 0"}], "weight": 256,
     "entry": {"valid": true, "connected": false, "drop": false, "mac": "02:00:00:00:00:02", "port": 0},
     "in_sync": false},
    {"code": 3, "owner": null, "adjacency": null, "next_hops": [], "weight": 0,
     "entry": {"valid": false, "connected": false, "drop": false, "mac": "00:00:00:00:00:00", "port": 0}},
    {}]})");
  EXPECT_EQ(RenderNexthops(j),
            "2 of 4 codes in use\n"
            "\n"
            "CODE  NEXT-HOP             PORT  MAC                STATE                   COVERS\n"
            "   1  connected port 0        0  -                  connected                    1\n"
            "   2  via 10.1.0.2 port 0     0  02:00:00:00:00:02  active, device differs     256\n"
            "      via 10.1.0.3 port 0\n"
            "   3  -                       -  -                  free                         -\n"
            "   -  -                       -  -                  free                         -\n");
  EXPECT_EQ(RenderNexthops(json::parse(R"({"slots": []})")), "no next-hop codes\n");
  EXPECT_EQ(RenderNexthops(json(nullptr)), "no next-hop codes\n");
}

}  // namespace
}  // namespace fibnic
