// ParseServer: the forms an operator writes for a daemon's address. Names
// are resolved by the system: "localhost" is a loopback address (RFC 6761),
// and a name under .invalid never resolves.
#include <gtest/gtest.h>

#include "common/http_client.h"

namespace fibnic {
namespace {

Endpoint Ok(const char* text) {
  auto e = ParseServer(text, 8080);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status().message();
  return e.ok() ? *e : Endpoint{};
}

std::string Err(const char* text) {
  auto e = ParseServer(text, 8080);
  EXPECT_FALSE(e.ok()) << text << " accepted as " << e->ToString();
  return e.ok() ? "" : e.status().message();
}

TEST(ParseServer, AddressesWithAndWithoutPort) {
  EXPECT_EQ(Ok("127.0.0.1:9000").ToString(), "127.0.0.1:9000");
  EXPECT_EQ(Ok("127.0.0.1").ToString(), "127.0.0.1:8080");
  EXPECT_EQ(Ok("[::1]:8081").ToString(), "[::1]:8081");
  EXPECT_EQ(Ok("[::1]").ToString(), "[::1]:8080");
  EXPECT_EQ(Ok("[fe80::1]:0").ToString(), "[fe80::1]:0");
}

TEST(ParseServer, HttpUrls) {
  EXPECT_EQ(Ok("http://127.0.0.1:8123").ToString(), "127.0.0.1:8123");
  EXPECT_EQ(Ok("http://127.0.0.1:8123/").ToString(), "127.0.0.1:8123");
  EXPECT_EQ(Ok("http://[2001:db8::1]/").ToString(), "[2001:db8::1]:8080");
  EXPECT_NE(Err("https://127.0.0.1:8123").find("https is not served"), std::string::npos);
  EXPECT_NE(Err("ftp://127.0.0.1").find("only http://"), std::string::npos);
  EXPECT_NE(Err("http://127.0.0.1:8123/api/v1/status").find("without a path"), std::string::npos);
}

TEST(ParseServer, HostNamesAreResolved) {
  const Endpoint e = Ok("localhost:18123");
  EXPECT_EQ(e.port, 18123);
  const bool loopback = e.host.is_v4() ? (e.host.v4() >> 24) == 127 : e.host.ToString() == "::1";
  EXPECT_TRUE(loopback) << "localhost resolved to " << e.host.ToString();
  EXPECT_TRUE(ParseServer("http://localhost/", 8080).ok());
  EXPECT_NE(Err("no-such-host.invalid:80").find("cannot resolve host 'no-such-host.invalid'"), std::string::npos);
}

TEST(ParseServer, BadFormsSayWhat) {
  EXPECT_NE(Err("::1:80").find("needs brackets"), std::string::npos);
  EXPECT_NE(Err("[::1:80").find("no ']'"), std::string::npos);
  EXPECT_NE(Err("[::1]80").find("[IPV6]:PORT"), std::string::npos);
  EXPECT_NE(Err("127.0.0.1:70000").find("bad port '70000'"), std::string::npos);
  EXPECT_NE(Err("127.0.0.1:").find("bad port ''"), std::string::npos);
  EXPECT_NE(Err("127.0.0.1:8o").find("bad port '8o'"), std::string::npos);
  EXPECT_NE(Err(":8080").find("no host"), std::string::npos);
  EXPECT_NE(Err("").find("no host"), std::string::npos);
}

}  // namespace
}  // namespace fibnic
