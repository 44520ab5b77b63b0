// The two integrity codes the rewrite touches: the IPv4 header checksum
// (RFC 1071 sum, RFC 1624 incremental update) and the Ethernet FCS (CRC-32).
#pragma once

#include <cstddef>
#include <cstdint>

namespace fibnic::fpga {

inline constexpr size_t kMaxIpv4Header = 60;

// One's-complement sum (end-around carry folded) of big-endian 16-bit words.
uint16_t OnesSum(const uint8_t* data, size_t len);
// The checksum a sender writes: ~OnesSum over the header (at most
// kMaxIpv4Header bytes) with its checksum field taken as zero.
uint16_t Ipv4HeaderChecksum(const uint8_t* header, size_t len);
// RFC 1071: a header verifies when its sum, checksum included, is 0xffff.
bool Ipv4HeaderVerifies(const uint8_t* header, size_t len);
// RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') for one 16-bit word m -> m'.
uint16_t Rfc1624Update(uint16_t hc, uint16_t m_old, uint16_t m_new);

// IEEE 802.3 CRC-32 as carried in the FCS (reflected, init and final ~).
uint32_t Crc32(const uint8_t* data, size_t len);
// True if the last four bytes are the FCS of the bytes before them.
bool FcsOk(const uint8_t* frame, size_t len);

}  // namespace fibnic::fpga
