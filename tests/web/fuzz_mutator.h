// Randomized malformed HTTP requests for the web fuzz tests: valid requests
// mutated at the byte, line and protocol level (lying lengths, broken
// chunking, oversize lines, NULs, bare CRs, HTTP/2 prefaces, garbage).
#pragma once

#include <random>
#include <string>
#include <vector>

namespace fibnic::web::testing {

class HttpMutator {
 public:
  explicit HttpMutator(uint64_t seed) : rng_(seed) {}

  // A mutated request and whether the client should half-close after sending
  // (false exercises the server's read deadline).
  struct Case {
    std::string bytes;
    bool half_close = true;
    const char* kind = "";
  };

  Case Next(const std::vector<std::string>& valid) {
    Case c;
    std::string r = valid[Pick(valid.size())];
    switch (Pick(14)) {
      case 0: c.kind = "flip"; for (int i = 0, n = 1 + Pick(8); i < n; ++i) r[Pick(r.size())] = RandByte(); break;
      case 1: c.kind = "insert"; for (int i = 0, n = 1 + Pick(8); i < n; ++i) r.insert(Pick(r.size() + 1), 1, RandByte()); break;
      case 2: c.kind = "truncate"; r.resize(Pick(r.size())); break;
      case 3: c.kind = "truncate-no-eof"; r.resize(Pick(r.size())); c.half_close = false; break;
      case 4: {
        c.kind = "bad-length";
        static const char* kLens[] = {"-1", "abc", "99999999999999999999", "5, 6", "0x10", "", "1e3", "18446744073709551616", "100"};
        r = Replace(r, "\r\n\r\n", std::string("\r\nContent-Length: ") + kLens[Pick(9)] + "\r\n\r\n");
        if (Pick(2)) r += "short";
        break;
      }
      case 5: {
        c.kind = "bad-chunked";
        static const char* kBodies[] = {"zz\r\nabc\r\n0\r\n\r\n", "5\r\nabc\r\n0\r\n\r\n", "ffffffffffffffffff\r\n",
                                        "3\r\nabc", "-1\r\n\r\n", "3;ext=\x01\r\nabc\r\n0\r\n\r\n", "0\r\nX: y\r\n"};
        r = Replace(r, "\r\n\r\n", "\r\nTransfer-Encoding: chunked\r\n\r\n") + kBodies[Pick(7)];
        break;
      }
      case 6: c.kind = "long-target"; r = Replace(r, " HTTP/1.1", "/" + std::string(2000 + Pick(20000), 'a') + " HTTP/1.1"); break;
      case 7: c.kind = "many-headers"; {
          std::string h;
          for (int i = 0, n = 50 + Pick(2000); i < n; ++i) h += "X-H" + std::to_string(i) + ": v\r\n";
          r = Replace(r, "\r\n\r\n", "\r\n" + h + "\r\n");
        }
        break;
      case 8: c.kind = "garbage"; r.clear(); for (int i = 0, n = 1 + Pick(3000); i < n; ++i) r += RandByte(); break;
      case 9: c.kind = "protocol"; r = Proto(Pick(15)); break;
      case 10: c.kind = "pipeline"; r = r + valid[Pick(valid.size())] + Mangle(valid[Pick(valid.size())]); break;
      case 11: c.kind = "header-bytes"; r = Replace(r, "\r\n\r\n", "\r\nX-Bad: " + RandBytes(1 + Pick(40)) + "\r\n\r\n"); break;
      case 12: c.kind = "query-junk"; r = Replace(r, " HTTP/1.1", "?" + RandUrl(1 + Pick(60)) + " HTTP/1.1"); break;
      default: c.kind = "path-junk"; r = Replace(r, " HTTP/1.1", RandUrl(1 + Pick(60)) + " HTTP/1.1"); break;
    }
    c.bytes = std::move(r);
    return c;
  }

 private:
  size_t Pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  char RandByte() { return static_cast<char>(Pick(256)); }
  std::string RandBytes(size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) s += RandByte();
    return s;
  }
  std::string RandUrl(size_t n) {
    static const std::string kChars = "abcXYZ019/?&=%#+.-_~:;@!$'()*,[]{}<>\"\\^`| \t";
    std::string s;
    for (size_t i = 0; i < n; ++i) s += Pick(8) ? kChars[Pick(kChars.size())] : RandByte();
    return s;
  }
  std::string Mangle(std::string r) {
    if (!r.empty()) r[Pick(r.size())] = RandByte();
    return r;
  }
  static std::string Replace(std::string s, const std::string& what, const std::string& with) {
    auto p = s.find(what);
    if (p == std::string::npos) return s + with;
    return s.replace(p, what.size(), with);
  }
  static std::string Proto(size_t i) {
    static const std::vector<std::string> kLines = {
        "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "GET /\r\n\r\n", "GET / HTTP/9.9\r\n\r\n", "GET / HTTP/1.1\n\n",
        "GET / HTTP/1.1\rHost: a\r\r", "\r\n\r\n\r\n", "GET  /  HTTP/1.1\r\n\r\n", std::string("G\0ET / HTTP/1.1\r\n\r\n", 20),
        "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nHost: a\r\n folded: x\r\n\r\n",
        "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", "GET /api/v1/%00 HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /api/v1/status?%ZZ=1 HTTP/1.1\r\nHost: a\r\n\r\n", "GET /../../etc/passwd HTTP/1.1\r\nHost: a\r\n\r\n",
        "GET /ui/../openapi.json HTTP/1.1\r\nHost: a\r\n\r\n"};
    return kLines[i % kLines.size()];
  }

  std::mt19937_64 rng_;
};

}  // namespace fibnic::web::testing
