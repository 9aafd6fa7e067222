// SPDX-License-Identifier: Apache-2.0
// The depthwise int8 convolution on AVX-512 (BW, VNNI): one channel plane at a time, on the
// plane padded with x's zero point to an even width W (so taps need no bounds checks, and
// sum_t (x - x_zp) w_t = sum_t x w_t - x_zp sum_t w_t holds at the borders too).
//
// With unit strides the plane is walked flat: output f = oy * W + ox reads padded position
// f + (ky * DH * W + kx * DW) for tap (ky, kx), so every tap is one shifted load whatever the
// row, and small planes (7x7) fill whole vectors instead of one row each. The W - OW extra
// outputs of each row are computed into a buffer and dropped when the valid ones are copied
// out. Strided convolutions go row by row. 32 outputs at a time: per pair of taps, the 32 input bytes of each as int16
// (stride 2: the even bytes of 64, taken as the low halves of 32 words), interleaved and summed
// with the two weights by vpdpwssd (exact: |x|, |w| <= 255); then bias, zero-point term and the
// requantization of requantize_avx512.h.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/conv_int8.h"
#include "kernels/x86/requantize_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kBlock = 32;

struct FlatPlane {
  int64_t width, rows, virtual_width, outputs;
};

FlatPlane flat_plane(const ConvGeometry2d& g) {
  FlatPlane f;
  f.width = ((g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 + 1) / 2 * 2;
  f.rows = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  f.virtual_width = f.width;
  f.outputs = g.oh * f.virtual_width;
  return f;
}

// Readable bytes past the padded plane: a block reads up to stride * 31 + 63 bytes past its
// first output's tap, and the flat walk's last block runs up to a row past the plane.
int64_t plane_slack(const FlatPlane& f) { return 2 * f.width + 256; }

}  // namespace

size_t conv_int8_depthwise_avx512_scratch(const ConvGeometry2d& g) {
  const FlatPlane f = flat_plane(g);
  return static_cast<size_t>(f.rows * f.width + plane_slack(f) + f.outputs + kBlock);
}

void conv_int8_depthwise_avx512(const ConvGeometry2d& g, const DepthwiseInt8Plane& p, uint8_t* scratch) {
  const FlatPlane f = flat_plane(g);
  uint8_t* plane = scratch;
  uint8_t* out = scratch + f.rows * f.width + plane_slack(f);
  std::memset(plane, static_cast<uint8_t>(p.x_zero_point), static_cast<size_t>(f.rows * f.width + plane_slack(f)));
  for (int64_t iy = 0; iy < g.ih; ++iy) {
    const int64_t py = iy + g.ph;
    if (py >= f.rows) break;
    const int64_t n = std::min<int64_t>(g.iw, f.width - g.pw);
    if (n > 0) std::memcpy(plane + py * f.width + g.pw, p.x + iy * g.iw, static_cast<size_t>(n));
  }
  const int64_t taps = g.kh * g.kw, pairs = (taps + 1) / 2;
  int32_t w_sum = 0;
  for (int64_t t = 0; t < taps; ++t) w_sum += p.w[t];
  // Taps in pairs (an odd last tap pairs with a zero weight): the two int16 weights in one
  // int32, and the two taps' offsets in the padded plane.
  int32_t pair_w[32];
  int64_t pair_at[64];
  for (int64_t t = 0; t < 2 * pairs; ++t) {
    const int64_t tap = std::min(t, taps - 1);
    pair_at[t] = tap / g.kw * g.dh * f.width + tap % g.kw * g.dw;
    const auto w = static_cast<uint16_t>(t < taps ? p.w[t] : 0);
    pair_w[t / 2] = t % 2 == 0 ? w : static_cast<int32_t>(static_cast<uint32_t>(pair_w[t / 2]) | (uint32_t{w} << 16));
  }
  const __m512i offset = _mm512_set1_epi32(p.bias - p.x_zero_point * w_sum);
  const __m512 m = _mm512_set1_ps(p.multiplier);
  const RequantAvx512 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  const __m512i low_byte = _mm512_set1_epi16(0x00FF);
  // 32 inputs as int16: bytes at src (stride 1) or the even bytes from src (stride 2).
  const auto load32 = [&](const uint8_t* src) {
    if (g.sw == 1) {
      const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src));
      return p.x_signed ? _mm512_cvtepi8_epi16(b) : _mm512_cvtepu8_epi16(b);
    }
    const __m512i words = _mm512_loadu_si512(src);
    return p.x_signed ? _mm512_srai_epi16(_mm512_slli_epi16(words, 8), 8) : _mm512_and_si512(words, low_byte);
  };
  // vpdpwssd on unpacklo / unpackhi gives outputs 0-3, 8-11, 16-19, 24-27 and 4-7, 12-15, ...
  const __m512i first = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i second = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  // 32 outputs from `src` (their first tap) to `dst`, of which the first `valid`.
  const auto block = [&](const uint8_t* src, uint8_t* dst, int64_t valid) {
    __m512i acc_a = offset, acc_b = offset;
    for (int64_t q = 0; q < pairs; ++q) {
      const __m512i x0 = load32(src + pair_at[2 * q]), x1 = load32(src + pair_at[2 * q + 1]);
      const __m512i w = _mm512_set1_epi32(pair_w[q]);
      acc_a = _mm512_dpwssd_epi32(acc_a, _mm512_unpacklo_epi16(x0, x1), w);
      acc_b = _mm512_dpwssd_epi32(acc_b, _mm512_unpackhi_epi16(x0, x1), w);
    }
    const auto mask = [](int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1); };
    _mm512_mask_cvtepi32_storeu_epi8(dst, mask(valid), rq.values(_mm512_permutex2var_epi32(acc_a, first, acc_b), m));
    if (valid > 16)
      _mm512_mask_cvtepi32_storeu_epi8(dst + 16, mask(valid - 16), rq.values(_mm512_permutex2var_epi32(acc_a, second, acc_b), m));
  };
  if (g.sh == 1 && g.sw == 1) {
    for (int64_t o = 0; o < f.outputs; o += kBlock) block(plane + o, out + o, kBlock);
    for (int64_t oy = 0; oy < g.oh; ++oy)
      std::memcpy(p.y + oy * g.ow, out + oy * f.virtual_width, static_cast<size_t>(g.ow));
    return;
  }
  // Strided: row by row (a flat walk would read stride-times wider rows).
  for (int64_t oy = 0; oy < g.oh; ++oy)
    for (int64_t ox = 0; ox < g.ow; ox += kBlock)
      block(plane + oy * g.sh * f.width + ox * g.sw, p.y + oy * g.ow + ox, std::min(kBlock, g.ow - ox));
}

}  // namespace ignis::kernels::x86
