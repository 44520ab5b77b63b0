#include "common/ip.h"

#include <gtest/gtest.h>

namespace fibnic {
namespace {

TEST(IpAddr, ParsesBothFamiliesAndRoundTrips) {
  auto a = IpAddr::Parse("10.1.2.3");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->v4(), 0x0A010203u);
  EXPECT_EQ(a->ToString(), "10.1.2.3");
  auto b = IpAddr::Parse("2001:db8::1");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->v6_hi(), 0x20010DB800000000ull);
  EXPECT_EQ(b->ToString(), "2001:db8::1");
  EXPECT_FALSE(IpAddr::Parse("10.1.2").ok());
  EXPECT_FALSE(IpAddr::Parse("2001:db8::g").ok());
}

TEST(Prefix, StrictParsingNamesTheProblem) {
  auto p = Prefix::Parse("10.0.0.0/8");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p->Contains(*IpAddr::Parse("10.255.0.1")));
  EXPECT_FALSE(p->Contains(*IpAddr::Parse("11.0.0.0")));
  EXPECT_EQ(p->Last().ToString(), "10.255.255.255");
  auto bad = Prefix::Parse("10.0.0.1/8");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("host bits"), std::string::npos);
  EXPECT_FALSE(Prefix::Parse("10.0.0.0/33").ok());
  EXPECT_FALSE(Prefix::Parse("10.0.0.0/").ok());
  EXPECT_EQ(Prefix::Parse("::/0")->len(), 0);
  EXPECT_EQ(Prefix::Parse("2001:db8::/129").ok(), false);
}

TEST(MacAddr, Parses) {
  auto m = MacAddr::Parse("02:00:00:00:00:0a");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->b[5], 0x0a);
  EXPECT_EQ(m->ToString(), "02:00:00:00:00:0a");
  EXPECT_FALSE(MacAddr::Parse("02:00:00:00:00").ok());
  EXPECT_FALSE(MacAddr::Parse("02:00:00:00:00:0a:").ok());
}

}  // namespace
}  // namespace fibnic
