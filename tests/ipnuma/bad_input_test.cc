// Every refused request leaves both NICs' BAR bytes exactly as they were and
// says what was wrong; and the RuleChecker itself rejects bad write orders
// (so the oracle the other tests rely on can fail).
#include <gtest/gtest.h>

#include "tests/ipnuma/two_nics.h"

namespace fibnic::ipnuma::testing {
namespace {

constexpr uint64_t kPoolA = 0x100000000ull;
constexpr uint64_t kPoolB = 0x200000000ull;

class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    a_ = &bench_.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
    b_ = &bench_.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
    bench_.neighbours[Ip("10.0.0.1")] = a_->local.mac;
    bench_.neighbours[Ip("10.0.0.2")] = b_->local.mac;
    DesiredState db{{PeerOf(*a_)},
                    {Export("rx", kPoolB + 0x1000, 0x4000, "10.0.0.0/24"),
                     Export("only-c", kPoolB + 0x10000, 0x1000, "10.0.0.3/32")},
                    {}};
    ASSERT_TRUE(bench_.Start(*b_, db).ok());
    ASSERT_TRUE(bench_.Start(*a_, DesiredState{{PeerOf(*b_)}, {}, {Mapping("m0", "b", "rx", 0, 0, 2)}}).ok());
    before_a_ = a_->Bytes();
    before_b_ = b_->Bytes();
  }
  void TearDown() override { EXPECT_EQ(bench_.checker.first_violation(), ""); }

  // st must fail with code, mention every word of `says`, and change nothing.
  void ExpectRefused(const Status& st, StatusCode code, std::initializer_list<const char*> says) {
    EXPECT_EQ(st.code(), code) << st.ToString();
    for (const char* w : says) EXPECT_NE(st.message().find(w), std::string::npos) << st.message() << " lacks " << w;
    EXPECT_TRUE(a_->Bytes() == before_a_) << "NIC a changed by: " << st.ToString();
    EXPECT_TRUE(b_->Bytes() == before_b_) << "NIC b changed by: " << st.ToString();
  }

  Bench bench_;
  Nic* a_ = nullptr;
  Nic* b_ = nullptr;
  std::vector<uint8_t> before_a_, before_b_;
};

TEST_F(BadInputTest, MisalignedExport) {
  ExpectRefused(b_->svc->AddExport(Export("x", kPoolB + 0x20020, 0x1000, "10.0.0.0/24")),
                StatusCode::kInvalidArgument, {"'x'", "0x200020020", "64-byte aligned"});
  ExpectRefused(b_->svc->AddExport(Export("x", kPoolB + 0x20000, 100, "10.0.0.0/24")), StatusCode::kInvalidArgument,
                {"length 100", "multiple of 64"});
}

TEST_F(BadInputTest, OverlappingExport) {
  ExpectRefused(b_->svc->AddExport(Export("x", kPoolB + 0x4000, 0x2000, "10.0.0.0/24")), StatusCode::kAlreadyExists,
                {"'x'", "overlaps export 'rx'"});
}

TEST_F(BadInputTest, ExportOutsideThePool) {
  ExpectRefused(b_->svc->AddExport(Export("x", kPoolB + (1 << 20) - 0x1000, 0x2000, "10.0.0.0/24")),
                StatusCode::kOutOfRange, {"'x'", "outside the buffer pool", "reserved range"});
  ExpectRefused(b_->svc->AddExport(Export("x", kPoolB - 0x1000, 0x1000, "10.0.0.0/24")), StatusCode::kOutOfRange,
                {"outside the buffer pool"});
}

TEST_F(BadInputTest, RegionTableFull) {
  ASSERT_TRUE(b_->svc->AddExport(Export("third", kPoolB + 0x20000, 0x1000, "10.0.0.0/24")).ok());
  before_b_ = b_->Bytes();
  ExpectRefused(b_->svc->AddExport(Export("fourth", kPoolB + 0x30000, 0x1000, "10.0.0.0/24")),
                StatusCode::kResourceExhausted, {"'fourth'", "region table full", "3 of 3"});
}

TEST_F(BadInputTest, UnauthorisedPeer) {
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "b", "only-c", 0, 10, 1)), StatusCode::kPermissionDenied,
                {"unauthorised peer 10.0.0.1", "'only-c'", "10.0.0.3/32"});
  // A requester that is no configured peer at all.
  ExpectRefused(b_->svc->HandlePeer(kPeerGrantPath, Ip("10.0.0.77"), {{"export", "rx"}, {"offset", 0}, {"length", 4096}})
                    .status(),
                StatusCode::kPermissionDenied, {"unauthorised peer 10.0.0.77", "not a configured peer"});
  ExpectRefused(b_->svc->HandlePeer(kPeerRevokePath, Ip("10.0.0.77"), {{"export", "rx"}, {"base", 0}, {"length", 64}})
                    .status(),
                StatusCode::kPermissionDenied, {"10.0.0.77"});
}

TEST_F(BadInputTest, UnknownExport) {
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "b", "nope", 0, 10, 1)), StatusCode::kNotFound,
                {"mapping 'm'", "unknown export 'nope'"});
  ExpectRefused(b_->svc->RemoveExport("nope").status(), StatusCode::kNotFound, {"unknown export 'nope'"});
}

TEST_F(BadInputTest, GrantBeyondTheExport) {
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "b", "rx", 0x3000, 10, 2)), StatusCode::kOutOfRange,
                {"'rx'", "exceeds its length 16384"});
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "b", "rx", 0x800, 10, 1)), StatusCode::kInvalidArgument,
                {"offset 2048", "4096"});
}

TEST_F(BadInputTest, PageRangeOutOfBar) {
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "b", "rx", 0, 62, 3)), StatusCode::kOutOfRange,
                {"'m'", "pages 62..64", "64 pages (CAPS0)"});
}

TEST_F(BadInputTest, PageAlreadyMapped) {
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "b", "rx", 0x2000, 1, 2)), StatusCode::kAlreadyExists,
                {"pages 1..2", "overlap mapping 'm0'"});
}

TEST_F(BadInputTest, UnknownPeerAndMalformedPeerRequests) {
  ExpectRefused(a_->svc->AddMapping(Mapping("m", "zz", "rx", 0, 10, 1)), StatusCode::kNotFound, {"unknown peer 'zz'"});
  ExpectRefused(b_->svc->HandlePeer(kPeerGrantPath, Ip("10.0.0.1"), {{"export", "rx"}, {"offset", -4096}}).status(),
                StatusCode::kInvalidArgument, {"'offset'"});
  ExpectRefused(b_->svc->HandlePeer(kPeerGrantPath, Ip("10.0.0.1"), nlohmann::json::array()).status(),
                StatusCode::kInvalidArgument, {"'export'"});
  ExpectRefused(b_->svc->HandlePeer("/peer/v1/steal", Ip("10.0.0.1"), {}).status(), StatusCode::kNotFound,
                {"/peer/v1/steal"});
}

TEST_F(BadInputTest, PcidTableFullAtStart) {
  // 3 usable PC IDs (CAPS1 says 4 entries, entry 0 reserved); 4 peers do not fit.
  DesiredState d;
  for (int i = 2; i < 6; ++i) {
    d.peers.push_back(PeerSpec{"p" + std::to_string(i), Ip("10.0.0.0") + i, "p", "s", IpAddr::V4(Ip("10.0.0.0") + i)});
  }
  ExpectRefused(bench_.Start(*a_, d), StatusCode::kResourceExhausted, {"4 peers", "PC ID table holds 3"});
}

TEST_F(BadInputTest, InvalidConfigAtStartChangesNothing) {
  DesiredState d{{PeerOf(*b_)},
                 {Export("x", kPoolA, 0x1000, "10.0.0.0/24"), Export("y", kPoolA + 0x800, 0x1000, "10.0.0.0/24")},
                 {Mapping("m0", "b", "rx", 0, 0, 2)}};
  ExpectRefused(bench_.Start(*a_, d), StatusCode::kAlreadyExists, {"'y'", "overlaps export 'x'"});
}

TEST(RuleCheckerSelfTest, RejectsRemapWithoutUnmapAndMappingIntoRevokedRegion) {
  Bench bench;
  Nic& a = bench.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
  Nic& b = bench.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
  bench.neighbours[Ip("10.0.0.2")] = b.local.mac;
  ASSERT_TRUE(bench.Start(b, DesiredState{{PeerOf(a)}, {Export("rx", kPoolB, 0x2000, "10.0.0.1/32")}, {}}).ok());
  ASSERT_TRUE(bench.Start(a, DesiredState{{PeerOf(b)}, {}, {Mapping("m", "b", "rx", 0, 0, 2)}}).ok());
  ASSERT_EQ(bench.checker.first_violation(), "");
  // Rewriting a mapped page's address in place (no PC ID 0 first) is caught.
  regs::PagemapEntry moved{kPoolB + 0x1000, 1};
  EXPECT_FALSE(a.rec->Write32(regs::PagemapOffset(0), moved.lo()).ok());
  EXPECT_NE(bench.checker.first_violation().find("remapped without being unmapped"), std::string::npos)
      << bench.checker.first_violation();
}

TEST(RuleCheckerSelfTest, RejectsPageMappedIntoMemoryNoRegionAdmits) {
  Bench bench;
  Nic& a = bench.AddNic("a", "10.0.0.1", "02:00:00:00:00:01", kPoolA);
  Nic& b = bench.AddNic("b", "10.0.0.2", "02:00:00:00:00:02", kPoolB);
  bench.neighbours[Ip("10.0.0.2")] = b.local.mac;
  ASSERT_TRUE(bench.Start(b, DesiredState{{PeerOf(a)}, {Export("rx", kPoolB, 0x2000, "10.0.0.1/32")}, {}}).ok());
  ASSERT_TRUE(bench.Start(a, DesiredState{{PeerOf(b)}, {}, {Mapping("m", "b", "rx", 0, 0, 2)}}).ok());
  ASSERT_EQ(bench.checker.first_violation(), "");
  // Page 10 of A mapped past the end of B's only REGION.
  const regs::PagemapEntry outside{kPoolB + 0x8000, 1};
  ASSERT_TRUE(a.rec->Write32(regs::PagemapOffset(10), outside.lo()).ok());  // still PC ID 0: unmapped
  EXPECT_FALSE(a.rec->Write32(regs::PagemapOffset(10) + 4, outside.hi()).ok());
  EXPECT_NE(bench.checker.first_violation().find("no VALID REGION"), std::string::npos)
      << bench.checker.first_violation();
}

}  // namespace
}  // namespace fibnic::ipnuma::testing

namespace fibnic::ipnuma::testing {
namespace {

// The probe refuses anything but an IP-NUMA NIC of major version 1 whose BAR
// holds the page map its CAPS announce, and says which register was wrong.
TEST(ProbeTest, RefusesWrongIdentity) {
  const regs::Caps caps = SmallCaps();
  auto probe = [&](uint32_t offset, uint32_t value, size_t size) {
    MemoryBar bar(size);
    auto id = IdentityBlock(caps);
    EXPECT_TRUE(bar.Write(0, id.data(), id.size()).ok());
    EXPECT_TRUE(bar.Write32(offset, value).ok());
    return ProbeNic(bar);
  };
  auto ok = probe(regs::kOffVersion, 0x00010003, caps.bar0_bytes());  // minor versions are fine
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(*ok, caps);
  auto st = probe(regs::kOffId, 0x4E424946, caps.bar0_bytes()).status();  // a FIBNIC
  EXPECT_EQ(st.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(st.message().find("ID register"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("0x4e424946"), std::string::npos) << st.message();
  st = probe(regs::kOffVersion, 0x00020000, caps.bar0_bytes()).status();
  EXPECT_NE(st.message().find("VERSION register"), std::string::npos) << st.message();
  st = probe(regs::kOffCaps1, 64u << 16 | 1u, caps.bar0_bytes()).status();  // 1 PC ID entry
  EXPECT_NE(st.message().find("CAPS1[15:0]"), std::string::npos) << st.message();
  st = probe(regs::kOffCaps0, 1024, caps.bar0_bytes()).status();  // more pages than the BAR holds
  EXPECT_NE(st.message().find("CAPS0 announces 1024 pages"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace fibnic::ipnuma::testing
