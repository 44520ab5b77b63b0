#include "tests/oracle/reference_lpm.h"
#include "tests/support/parse.h"

#include <gtest/gtest.h>

namespace fibnic::oracle {

using testing::A;
using testing::P;
namespace {

TEST(ReferenceLpm, LongestMatchAndResolution) {
  ReferenceLpm lpm;
  lpm.SetRoute(P("0.0.0.0/0"), {NextHop{A("10.0.0.1"), 0}});
  lpm.SetRoute(P("192.0.2.0/24"), {NextHop{A("10.0.1.1"), 1}, NextHop{A("10.0.0.1"), 0}});
  lpm.SetRoute(P("192.0.2.128/25"), {NextHop{std::nullopt, 2}});
  const auto mac0 = *MacAddr::Parse("02:00:00:00:00:00");
  const auto mac2 = *MacAddr::Parse("02:00:00:00:00:02");
  lpm.SetNeighbor({A("10.0.0.1"), mac0, 0, NeighState::kReachable});
  lpm.SetNeighbor({A("10.0.1.1"), mac2, 0, NeighState::kReachable});  // wrong port: unusable for port 1
  lpm.SetNeighbor({A("192.0.2.130"), mac2, 2, NeighState::kStale});

  EXPECT_EQ(lpm.Match(A("8.8.8.8"))->first, P("0.0.0.0/0"));
  EXPECT_EQ(lpm.Acceptable(A("192.0.2.1")), (std::set<Forward>{{mac0, 0}}));
  EXPECT_EQ(lpm.Acceptable(A("192.0.2.130")), (std::set<Forward>{{mac2, 2}}));
  EXPECT_TRUE(lpm.Acceptable(A("192.0.2.131")).empty());  // connected, no neighbour: punt only
  EXPECT_TRUE(lpm.HasLongerInside24(0xC0000200u >> 8));
  lpm.EraseRoute(P("0.0.0.0/0"));
  EXPECT_TRUE(lpm.Acceptable(A("8.8.8.8")).empty());
}

}  // namespace
}  // namespace fibnic::oracle
