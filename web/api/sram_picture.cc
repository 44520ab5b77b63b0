#include "web/api/sram_picture.h"

#include <utility>

#include "device/fibnic_regs.h"

namespace fibnic::web {
namespace {

constexpr uint32_t kGrid = 4096;  // 4096 * 4096 = 2^24 /24s

void Rotate(uint32_t n, uint32_t* x, uint32_t* y, uint32_t rx, uint32_t ry) {
  if (ry == 0) {
    if (rx == 1) {
      *x = n - 1 - *x;
      *y = n - 1 - *y;
    }
    std::swap(*x, *y);
  }
}

}  // namespace

void HilbertD2Xy(uint32_t n, uint64_t d, uint32_t* x, uint32_t* y) {
  *x = *y = 0;
  uint64_t t = d;
  for (uint32_t s = 1; s < n; s *= 2) {
    uint32_t rx = 1 & static_cast<uint32_t>(t / 2);
    uint32_t ry = 1 & static_cast<uint32_t>(t ^ rx);
    Rotate(s, x, y, rx, ry);
    *x += s * rx;
    *y += s * ry;
    t /= 4;
  }
}

uint64_t HilbertXy2D(uint32_t n, uint32_t x, uint32_t y) {
  uint64_t d = 0;
  for (uint32_t s = n / 2; s > 0; s /= 2) {
    uint32_t rx = (x & s) > 0;
    uint32_t ry = (y & s) > 0;
    d += uint64_t{s} * s * ((3 * rx) ^ ry);
    Rotate(n, &x, &y, rx, ry);
  }
  return d;
}

PixelBlock PixelToBlock(uint32_t size, PictureOrder order, uint32_t x, uint32_t y) {
  const uint32_t per = (kGrid / size) * (kGrid / size);
  const uint64_t d = order == PictureOrder::kHilbert ? HilbertXy2D(size, x, y) : uint64_t{y} * size + x;
  return {static_cast<uint32_t>(d * per), per};
}

std::vector<uint8_t> SramPicture(const uint8_t* sram, int code_bits, uint32_t size, PictureOrder order) {
  std::vector<uint8_t> out(size_t{size} * size, 0);
  const uint32_t per = (kGrid / size) * (kGrid / size);
  const uint64_t pixels = uint64_t{size} * size;
  for (uint64_t d = 0; d < pixels; ++d) {
    // In both orders a pixel covers a contiguous run of /24s (Hilbert curves
    // fill each aligned sub-square before leaving it).
    std::array<uint32_t, 16> hist{};
    const uint32_t first = static_cast<uint32_t>(d * per);
    for (uint32_t i = 0; i < per; ++i) ++hist[regs::SramCode(sram, code_bits, first + i)];
    uint8_t best = 0;
    for (uint8_t c = 1; c < 16; ++c) {
      if (hist[c] > hist[best]) best = c;
    }
    const uint8_t v = hist[best] == per ? best : static_cast<uint8_t>(kMixedBit | best);
    uint32_t x, y;
    if (order == PictureOrder::kHilbert) {
      HilbertD2Xy(size, d, &x, &y);
    } else {
      x = static_cast<uint32_t>(d % size);
      y = static_cast<uint32_t>(d / size);
    }
    out[size_t{y} * size + x] = v;
  }
  return out;
}

SramSummary SummarizeSram(const uint8_t* sram, int code_bits) {
  SramSummary s;
  s.code_bits = code_bits;
  s.per_slash8.assign(256, {});
  const uint32_t words = 1u << 22;
  const uint32_t wb = regs::SramWordBytes(code_bits);
  for (uint32_t w = 0; w < words; ++w) {
    bool nonzero = false;
    for (uint32_t k = 0; k < wb; ++k) nonzero |= sram[size_t{w} * wb + k] != 0;
    if (!nonzero) {
      s.by_code[0] += 4;
      s.per_slash8[w >> 14][0] += 4;
      continue;
    }
    ++s.words_nonzero;
    for (uint32_t sub = 0; sub < 4; ++sub) {
      const uint8_t c = regs::SramCode(sram, code_bits, (w << 2) | sub);
      ++s.by_code[c];
      ++s.per_slash8[w >> 14][c];
    }
  }
  return s;
}

}  // namespace fibnic::web
