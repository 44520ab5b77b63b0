// What NicMemoryBar must show of PEER_STATE's write-1-to-clear over any
// shared memory (a file, a BPF map): `bar` is ipnumad's view, `device`
// another mapping of the same memory playing the NIC.
#pragma once

#include <gtest/gtest.h>

#include "device/ipnuma_regs.h"
#include "hwif/bar.h"

namespace fibnic::ipnuma {

inline void ExpectWriteOfOneClearsPeerState(Bar& bar, Bar& device) {
  namespace regs = ::fibnic::ipnuma_regs;
  // The device shows DOWN (and another bit the write must leave alone).
  ASSERT_TRUE(device.Write32(regs::PeerStateOffset(2), regs::kPeerStateDown | 0x100).ok());
  ASSERT_TRUE(bar.Write32(regs::PeerStateOffset(2), regs::kPeerStateDown).ok());
  EXPECT_EQ(device.Read32(regs::PeerStateOffset(2)).value(), 0x100u);
  // A write of 1 over a bit that reads 0 changes nothing.
  ASSERT_TRUE(bar.Write32(regs::PeerStateOffset(3), regs::kPeerStateDown).ok());
  EXPECT_EQ(device.Read32(regs::PeerStateOffset(3)).value(), 0u);
  // Every other register is written as it is.
  ASSERT_TRUE(bar.Write32(regs::kOffRetryLimit, 3).ok());
  EXPECT_EQ(device.Read32(regs::kOffRetryLimit).value(), 3u);
}

}  // namespace fibnic::ipnuma
