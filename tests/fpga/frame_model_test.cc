// The reference model on a small hand-built device: each expectation is
// written out from the spec (which port, which MACs, which bytes change), not
// taken from the model's own output.
#include "fpga/model/frame_model.h"

#include <gtest/gtest.h>

#include "fpga/model/inet_checksum.h"
#include "fpga/model/test_frames.h"
#include "device/fibnic_image.h"
#include "device/fibnic_image_codec.h"
#include "tests/support/device_image.h"
#include "tests/support/parse.h"

namespace fibnic::fpga {
namespace {

using testing::A;
using testing::SetCode;

MacAddr Mac(uint8_t last, uint8_t first = 0x02) { return MacAddr{{first, 0xfb, 0, 0, 0, last}}; }

class FrameModelTest : public ::testing::Test {
 protected:
  FrameModelTest() {
    for (int p = 0; p < 4; ++p) img_.port_macs[p] = Mac(static_cast<uint8_t>(0x10 + p));
    img_.nexthop[1] = {Mac(0xa1, 0x0a), 1, regs::kNexthopValid};
    img_.nexthop[2] = {Mac(0), 2, regs::kNexthopValid | regs::kNexthopConnected};
    img_.nexthop[3] = {Mac(0xa3, 0x0a), 3, 0};
    for (uint32_t s = 0x0a0100; s < 0x0a0200; ++s) SetCode(img_, s, 1);  // 10.1.0.0/16
    SetCode(img_, 0x0a0200, 2);                                            // 10.2.0.0/24
    SetCode(img_, 0x0a0300, 3);                                            // 10.3.0.0/24
    regs::NeighEntry n;
    n.addr = A("10.2.0.7").mapped16();
    n.mac = Mac(0xb7, 0x0a);
    n.port = 0;
    n.flags = regs::kNeighValid;
    img_.neigh[5] = n;
    img_.tcam[0] = {0x20010db800010000ull, 0xffffffffffff0000ull, 1, regs::kTcamValid};
    img_.tcam[1] = {0x20010db800000000ull, 0xffffffff00000000ull, 3, regs::kTcamValid};
    Encode();
  }
  void Encode() { bar_ = EncodeBar(img_); }

  FrameSpec V4Spec(const char* dst, uint8_t in_port = 0) {
    FrameSpec s;
    s.dst_mac = img_.port_macs[in_port];
    s.src = A("192.0.2.1");
    s.dst = A(dst);
    s.size = 128;
    return s;
  }
  FrameSpec V6Spec(const char* dst) {
    FrameSpec s = V4Spec("10.1.0.1");
    s.src = *IpAddr::Parse("2001:db8:ff::1");
    s.dst = *IpAddr::Parse(dst);
    return s;
  }
  PipelineResult Run(const std::vector<uint8_t>& f, uint8_t in_port = 0) {
    return RunPipelineModel(bar_, in_port, f);
  }

  DeviceImage img_;
  std::vector<uint8_t> bar_;
};

TEST_F(FrameModelTest, ForwardsIpv4ViaGatewayWithRfc1812Rewrite) {
  const auto in = BuildIpFrame(V4Spec("10.1.77.9"));
  const auto r = Run(in);
  ASSERT_EQ(r.reason, Reason::kForward) << ReasonName(r.reason);
  EXPECT_EQ(r.egress_port, 1);
  EXPECT_EQ(r.code, 1);
  ASSERT_EQ(r.frame.size(), in.size());
  EXPECT_EQ(MacAddr({r.frame[0], r.frame[1], r.frame[2], r.frame[3], r.frame[4], r.frame[5]}), Mac(0xa1, 0x0a));
  EXPECT_EQ(MacAddr({r.frame[6], r.frame[7], r.frame[8], r.frame[9], r.frame[10], r.frame[11]}), Mac(0x11));
  EXPECT_EQ(r.frame[14 + 8], 63);
  EXPECT_TRUE(Ipv4HeaderVerifies(&r.frame[14], 20));
  EXPECT_TRUE(FcsOk(r.frame.data(), r.frame.size()));
  // Everything but dst/src MAC, TTL, checksum and FCS is untouched.
  for (size_t i = 12; i + 4 < in.size(); ++i)
    if (i != 22 && i != 24 && i != 25) {
      EXPECT_EQ(r.frame[i], in[i]) << "byte " << i;
    }
  const auto tag = r.Tag();
  EXPECT_EQ(tag, (std::array<uint8_t, 8>{1, 0, 0, 1, 0xff, 0, 0, 0xd5}));
}

TEST_F(FrameModelTest, ConnectedNextHopUsesNeighbourCam) {
  auto r = Run(BuildIpFrame(V4Spec("10.2.0.7", 3)), 3);
  ASSERT_EQ(r.reason, Reason::kForward) << ReasonName(r.reason);
  EXPECT_EQ(r.egress_port, 0);
  EXPECT_EQ(r.frame[5], 0xb7);
  EXPECT_EQ(r.frame[11], 0x10);  // src = PORT_MAC of egress port 0
  EXPECT_EQ(Run(BuildIpFrame(V4Spec("10.2.0.8"))).reason, Reason::kNeighMiss);
}

TEST_F(FrameModelTest, TableResultsThatMustPunt) {
  EXPECT_EQ(Run(BuildIpFrame(V4Spec("10.9.0.1"))).reason, Reason::kCode0);
  EXPECT_EQ(Run(BuildIpFrame(V4Spec("10.3.0.1"))).reason, Reason::kNexthopInvalid);
  EXPECT_EQ(Run(BuildIpFrame(V6Spec("2001:db9::1"))).reason, Reason::kNoTcamMatch);
  EXPECT_EQ(Run(BuildIpFrame(V6Spec("2001:db8:2::1"))).reason, Reason::kNexthopInvalid);
  img_.nexthop[1].port = 4;  // beyond CAPS ports
  Encode();
  EXPECT_EQ(Run(BuildIpFrame(V4Spec("10.1.0.1"))).reason, Reason::kPortInvalid);
  img_.control = regs::kControlV6Enable;
  Encode();
  EXPECT_EQ(Run(BuildIpFrame(V4Spec("10.1.0.1"))).reason, Reason::kDisabled);
}

// A VALID|DROP entry discards the frame whatever its port and MAC say (even
// a port beyond the device's); DROP without VALID punts.
TEST_F(FrameModelTest, DropEntryDiscardsTheFrame) {
  img_.nexthop[1] = {Mac(0xa1, 0x0a), 9, regs::kNexthopValid | regs::kNexthopDrop};
  img_.nexthop[3] = {MacAddr{}, 0, regs::kNexthopDrop};
  Encode();
  const PipelineResult v4 = Run(BuildIpFrame(V4Spec("10.1.0.1")));
  EXPECT_EQ(v4.reason, Reason::kDrop);
  EXPECT_TRUE(v4.dropped());
  EXPECT_FALSE(v4.forward());
  EXPECT_EQ(v4.code, 1);
  EXPECT_EQ(Run(BuildIpFrame(V6Spec("2001:db8:1::1"))).reason, Reason::kDrop);
  EXPECT_EQ(Run(BuildIpFrame(V4Spec("10.3.0.1"))).reason, Reason::kNexthopInvalid);
  // TTL 1 is still the host's (it sends time exceeded) before any lookup.
  FrameSpec ttl = V4Spec("10.1.0.1");
  ttl.ttl = 1;
  EXPECT_EQ(Run(BuildIpFrame(ttl)).reason, Reason::kTtl);
  EXPECT_STREQ(ReasonName(Reason::kDrop), "drop");
}

TEST_F(FrameModelTest, TtlAndHeaderChecks) {
  for (int ttl : {0, 1}) {
    auto s = V4Spec("10.1.0.1");
    s.ttl = static_cast<uint8_t>(ttl);
    EXPECT_EQ(Run(BuildIpFrame(s)).reason, Reason::kTtl) << ttl;
  }
  auto s = V4Spec("10.1.0.1");
  s.ttl = 2;
  auto r = Run(BuildIpFrame(s));
  ASSERT_TRUE(r.forward());
  EXPECT_EQ(r.frame[22], 1);
  s.ttl = 64;
  s.ipv4_option_words = 2;
  EXPECT_EQ(Run(BuildIpFrame(s)).reason, Reason::kIpOptions);
  s.ipv4_option_words = 0;
  s.bad_ip_checksum = true;
  EXPECT_EQ(Run(BuildIpFrame(s)).reason, Reason::kBadChecksum);
  auto runt = BuildIpFrame(V4Spec("10.1.0.1"));
  runt.resize(30);
  EXPECT_EQ(Run(runt).reason, Reason::kRunt);
}

TEST_F(FrameModelTest, Ipv6HopLimitNdpAndHopByHop) {
  auto s = V6Spec("2001:db8:1::5");
  auto r = Run(BuildIpFrame(s));
  ASSERT_TRUE(r.forward()) << ReasonName(r.reason);
  EXPECT_EQ(r.tcam_index, 0);
  EXPECT_EQ(r.frame[14 + 7], 63);
  EXPECT_TRUE(FcsOk(r.frame.data(), r.frame.size()));
  s.ttl = 1;
  EXPECT_EQ(Run(BuildIpFrame(s)).reason, Reason::kTtl);
  s.ttl = 255;
  s.protocol = 58;
  s.icmp6_type = 135;
  EXPECT_EQ(Run(BuildIpFrame(s)).reason, Reason::kNdp);
  s.icmp6_type = 128;  // echo request is forwarded
  EXPECT_TRUE(Run(BuildIpFrame(s)).forward());
  s.protocol = 0;
  EXPECT_EQ(Run(BuildIpFrame(s)).reason, Reason::kIpOptions);
}

TEST_F(FrameModelTest, L2Punts) {
  const MacAddr bcast{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
  EXPECT_EQ(Run(BuildEtherFrame(bcast, 0x0806, 64, 1)).reason, Reason::kBroadcast);
  EXPECT_EQ(Run(BuildEtherFrame(img_.port_macs[0], 0x0806, 64, 1)).reason, Reason::kArp);
  EXPECT_EQ(Run(BuildEtherFrame(img_.port_macs[0], 0x8100, 64, 1)).reason, Reason::kNonIp);
  EXPECT_EQ(Run(BuildEtherFrame(MacAddr{{0x01, 0, 0x5e, 0, 0, 1}}, 0x0800, 64, 1)).reason, Reason::kMulticast);
  // Addressed to port 1's MAC but received on port 0.
  const auto wrong = BuildIpFrame(V4Spec("10.1.0.1", 1));
  const auto r = Run(wrong, 0);
  EXPECT_EQ(r.reason, Reason::kOwnMacMiss);
  EXPECT_EQ(r.frame, wrong);  // punted frames reach the host unchanged
  EXPECT_EQ(r.Tag()[0], kTagHost);
}

TEST_F(FrameModelTest, BadFcsStaysBadAfterRewrite) {
  auto s = V4Spec("10.1.0.1");
  s.bad_fcs = true;
  const auto in = BuildIpFrame(s);
  const auto r = Run(in);
  ASSERT_TRUE(r.forward());
  EXPECT_FALSE(FcsOk(r.frame.data(), r.frame.size()));
  const uint32_t crc = Crc32(r.frame.data(), r.frame.size() - 4);
  const uint8_t* f = &r.frame[r.frame.size() - 4];
  EXPECT_EQ(f[0] | (f[1] << 8) | (f[2] << 16) | (uint32_t{f[3]} << 24), ~crc);
}

// The in-place form (fibnic-emu's: frames without FCS) decides every frame as
// the model decides it with its FCS, and leaves the same bytes but the FCS.
TEST_F(FrameModelTest, InPlaceMatchesTheModelWithoutFcs) {
  img_.nexthop[3] = {MacAddr{}, 0, regs::kNexthopValid | regs::kNexthopDrop};  // 10.3.0.0/24 dropped
  Encode();
  std::vector<std::pair<std::vector<uint8_t>, uint8_t>> frames;
  for (const char* dst : {"10.1.77.9", "10.2.0.7", "10.2.0.8", "10.3.0.1", "10.9.0.1"}) {
    for (uint8_t ttl : {0, 1, 2, 64, 255}) {
      for (size_t size : {59, 60, 64, 128, 1518}) {
        FrameSpec s = V4Spec(dst);
        s.ttl = ttl;
        s.size = size;
        frames.emplace_back(BuildIpFrame(s), 0);
        frames.emplace_back(BuildIpFrame(s), 1);  // not port 1's MAC
      }
    }
  }
  for (const char* dst : {"2001:db8:1::5", "2001:db8:2::1", "2001:db9::1"}) {
    for (uint8_t proto : {17, 58, 0}) {
      FrameSpec s = V6Spec(dst);
      s.protocol = proto;
      s.icmp6_type = 135;
      for (size_t size : {59, 64, 200}) {
        s.size = size;
        frames.emplace_back(BuildIpFrame(s), 0);
      }
    }
  }
  FrameSpec opt = V4Spec("10.1.0.1");
  opt.ipv4_option_words = 1;
  frames.emplace_back(BuildIpFrame(opt), 0);
  FrameSpec sum = V4Spec("10.1.0.1");
  sum.bad_ip_checksum = true;
  frames.emplace_back(BuildIpFrame(sum), 0);
  const MacAddr bcast{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};
  frames.emplace_back(BuildEtherFrame(bcast, 0x0806, 64, 1), 0);
  frames.emplace_back(BuildEtherFrame(img_.port_macs[0], 0x0806, 64, 1), 0);
  frames.emplace_back(BuildEtherFrame(img_.port_macs[0], 0x8100, 64, 1), 0);
  frames.emplace_back(BuildEtherFrame(MacAddr{{0x01, 0, 0x5e, 0, 0, 1}}, 0x0800, 64, 1), 0);

  int forwarded = 0;
  for (const auto& [in, port] : frames) {
    ASSERT_GE(in.size() - 4, kInPlaceMinBytes);
    const PipelineResult want = Run(in, port);
    std::vector<uint8_t> bytes(in.begin(), in.end() - 4);
    const PipelineResult got = RunPipelineInPlace(bar_, port, bytes);
    EXPECT_EQ(got.reason, want.reason) << ReasonName(want.reason) << " vs " << ReasonName(got.reason);
    EXPECT_EQ(got.Tag(), want.Tag());
    EXPECT_TRUE(got.frame.empty());
    EXPECT_EQ(bytes, std::vector<uint8_t>(want.frame.begin(), want.frame.end() - 4));
    forwarded += want.forward();
  }
  EXPECT_GT(forwarded, 20);  // the rewrite was compared, not just the punts
}

}  // namespace
}  // namespace fibnic::fpga
