// The IPv4 SRAM seen as a picture: 2^24 /24s (2^22 words of four codes) laid
// out on a 4096x4096 grid and reduced to size x size pixels, each summarising
// the /24s it covers. In Hilbert order every aligned CIDR block is a compact
// square or rectangle (a /8 is a 256x256 square at full size), so an operator
// sees at a glance which address space goes to which next-hop code.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace fibnic::web {

enum class PictureOrder : uint8_t { kHilbert, kLinear };

// Pixel value: the code (0..15) when every /24 under the pixel has it, else
// kMixedBit | the most frequent code.
inline constexpr uint8_t kMixedBit = 0x80;

// size: a power of two in 16..4096. sram: SRAM4 bytes for code_bits 2 or 4.
// Row-major size*size bytes.
std::vector<uint8_t> SramPicture(const uint8_t* sram, int code_bits, uint32_t size, PictureOrder order);

// First /24 index (dst >> 8) of the block under pixel (x, y) and how many /24s it covers.
struct PixelBlock {
  uint32_t first_slash24;
  uint32_t count;
};
PixelBlock PixelToBlock(uint32_t size, PictureOrder order, uint32_t x, uint32_t y);

// Hilbert curve on an n x n grid (n a power of two): index → (x, y) and back.
void HilbertD2Xy(uint32_t n, uint64_t d, uint32_t* x, uint32_t* y);
uint64_t HilbertXy2D(uint32_t n, uint32_t x, uint32_t y);

struct SramSummary {
  int code_bits = 2;
  std::array<uint64_t, 16> by_code{};                // /24s per code
  std::vector<std::array<uint32_t, 16>> per_slash8;  // [256] /24s per code in each /8
  uint64_t words_nonzero = 0;
};
SramSummary SummarizeSram(const uint8_t* sram, int code_bits);

}  // namespace fibnic::web
