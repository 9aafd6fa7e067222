// SPDX-License-Identifier: Apache-2.0
// AVX2 parts of the x86 QLinearConv: the phase planes the int8 GEMM reads its B operand from,
// and the direct depthwise convolution.
//
// Depthwise: the channel plane is first copied into a plane padded with x's zero point, so the
// taps need no bounds checks and sum_t (x - x_zp) w_t = sum_t x w_t - x_zp sum_t w_t holds at
// the borders too. Sixteen output positions at a time: per pair of taps, sixteen input bytes
// of each (every other byte for stride 2, picked with shuffles) widened to int16, interleaved
// and multiplied-and-added with the two weights by vpmaddwd (exact: |x|, |w| <= 255); then the
// bias, the zero-point term and the requantization of requantize_avx2.h.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/conv_int8.h"
#include "kernels/x86/requantize_avx2.h"

namespace ignis::kernels::x86 {

namespace {

// Readable bytes past each padded row: the last 16-wide block of a row reads up to 15 positions
// past it (stride 2: 30 bytes, as two 16-byte loads).
constexpr int64_t kRowSlack = 64;

int64_t padded_rows(const ConvGeometry2d& g) { return (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1; }
int64_t padded_cols(const ConvGeometry2d& g) { return (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 + kRowSlack; }

// Smallest o >= 0 with o * s >= v (v may be negative).
int64_t first_at_least(int64_t v, int64_t s) { return v <= 0 ? 0 : (v + s - 1) / s; }

}  // namespace

void conv_int8_phase_planes(const uint8_t* x, int64_t channels, const ConvGeometry2d& g, int64_t rows, int64_t cols,
                            uint64_t used, uint8_t pad, uint8_t* out) {
  const int64_t plane = rows * cols;
  const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t py = 0; py < g.sh; ++py) {
      for (int64_t px = 0; px < g.sw; ++px) {
        if (!(used >> (py * g.sw + px) & 1)) continue;
        uint8_t* dst = out + ((c * g.sh + py) * g.sw + px) * plane;
        std::memset(dst, pad, static_cast<size_t>(plane));
        // Columns j whose input column j * sw + px - pw lies in [0, iw).
        const int64_t j0 = first_at_least(g.pw - px, g.sw);
        const int64_t j1 = std::min(cols, g.iw - 1 + g.pw - px < 0 ? 0 : (g.iw - 1 + g.pw - px) / g.sw + 1);
        if (j1 <= j0) continue;
        for (int64_t i = 0; i < rows; ++i) {
          const int64_t iy = i * g.sh + py - g.ph;
          if (iy < 0 || iy >= g.ih) continue;
          const uint8_t* src = x + (c * g.ih + iy) * g.iw + (px - g.pw);
          uint8_t* row = dst + i * cols;
          if (g.sw == 1) {
            std::memcpy(row + j0, src + j0, static_cast<size_t>(j1 - j0));
            continue;
          }
          int64_t j = j0;
          // Stride 2: the even bytes of 32, while those 32 lie inside the input row.
          if (g.sw == 2)
            for (; j + 16 <= j1 && j * 2 + px - g.pw + 32 <= g.iw; j += 16) {
              const __m128i lo = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j * 2)), even);
              const __m128i hi = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + j * 2 + 16)), even);
              _mm_storeu_si128(reinterpret_cast<__m128i*>(row + j), _mm_unpacklo_epi64(lo, hi));
            }
          for (; j < j1; ++j) row[j] = src[j * g.sw];
        }
      }
    }
  }
}

bool conv_int8_depthwise_supported(const ConvGeometry2d& g) {
  return g.sw >= 1 && g.sw <= 2 && g.kh * g.kw <= 64 && g.oh > 0 && g.ow > 0;
}

size_t conv_int8_depthwise_scratch(const ConvGeometry2d& g) {
  return static_cast<size_t>(padded_rows(g) * padded_cols(g));
}

void conv_int8_depthwise_avx2(const ConvGeometry2d& g, const DepthwiseInt8Plane& p, uint8_t* scratch) {
  const int64_t rows = padded_rows(g), cols = padded_cols(g);
  // The plane padded with the zero point: input (iy, ix) at (iy + ph, ix + pw).
  std::memset(scratch, static_cast<uint8_t>(p.x_zero_point), static_cast<size_t>(rows * cols));
  for (int64_t iy = 0; iy < g.ih; ++iy) {
    const int64_t py = iy + g.ph;
    if (py < 0 || py >= rows) continue;
    const int64_t x0 = std::max<int64_t>(0, -g.pw), x1 = std::min<int64_t>(g.iw, cols - kRowSlack - g.pw);
    if (x1 > x0) std::memcpy(scratch + py * cols + x0 + g.pw, p.x + iy * g.iw + x0, static_cast<size_t>(x1 - x0));
  }
  const int64_t taps = g.kh * g.kw;
  int32_t w_sum = 0;
  for (int64_t t = 0; t < taps; ++t) w_sum += p.w[t];
  const int32_t offset = p.bias - p.x_zero_point * w_sum;
  const RequantAvx2 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  const __m256 m = _mm256_set1_ps(p.multiplier);
  const __m256i voffset = _mm256_set1_epi32(offset);
  const __m128i even = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, -1, -1, -1, -1, -1, -1, -1, -1);
  // Sixteen input bytes of consecutive outputs (every other byte for stride 2) as int16.
  const auto load16 = [&](const uint8_t* src) {
    __m128i b;
    if (g.sw == 1) {
      b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
    } else {
      const __m128i lo = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src)), even);
      const __m128i hi = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16)), even);
      b = _mm_unpacklo_epi64(lo, hi);
    }
    return p.x_signed ? _mm256_cvtepi8_epi16(b) : _mm256_cvtepu8_epi16(b);
  };
  // Taps in pairs for vpmaddwd (an odd last tap pairs with a zero weight): the pair's two
  // int16 weights packed into one int32, and the offsets of its two taps in the padded plane.
  int32_t pair_w[32];
  int64_t pair_at[64];
  const int64_t pairs = (taps + 1) / 2;
  for (int64_t t = 0; t < 2 * pairs; ++t) {
    const int64_t tap = std::min(t, taps - 1);
    pair_at[t] = tap / g.kw * g.dh * cols + tap % g.kw * g.dw;
    const int32_t w = t < taps ? p.w[t] : 0;
    if (t % 2 == 0) pair_w[t / 2] = static_cast<int32_t>(static_cast<uint16_t>(w));
    else pair_w[t / 2] |= static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(w)) << 16);
  }
  // Sixteen outputs at a time: vpmaddwd on the interleaved int16 inputs of a tap pair gives
  // outputs 0-3 and 8-11 in one vector, 4-7 and 12-15 in the other; one lane swap orders them.
  // The last block of a row runs past OW: its loads stay inside the padded row and its slack,
  // and only its valid bytes are stored.
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    uint8_t* yrow = p.y ? p.y + oy * g.ow : nullptr;  // null when the sums go to y32
    const uint8_t* base = scratch + oy * g.sh * cols;
    for (int64_t ox = 0; ox < g.ow; ox += 16) {
      const uint8_t* src = base + ox * g.sw;
      __m256i acc_a = voffset, acc_b = voffset;
      for (int64_t q = 0; q < pairs; ++q) {
        const __m256i x0 = load16(src + pair_at[2 * q]), x1 = load16(src + pair_at[2 * q + 1]);
        const __m256i w = _mm256_set1_epi32(pair_w[q]);
        acc_a = _mm256_add_epi32(acc_a, _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w));
        acc_b = _mm256_add_epi32(acc_b, _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w));
      }
      const __m256i sums_lo = _mm256_permute2x128_si256(acc_a, acc_b, 0x20);
      const __m256i sums_hi = _mm256_permute2x128_si256(acc_a, acc_b, 0x31);
      if (p.y32) {
        int32_t* yrow32 = p.y32 + oy * g.ow;
        alignas(32) int32_t sums[16];
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums), sums_lo);
        _mm256_store_si256(reinterpret_cast<__m256i*>(sums + 8), sums_hi);
        std::memcpy(yrow32 + ox, sums, static_cast<size_t>(std::min<int64_t>(16, g.ow - ox)) * sizeof(int32_t));
        continue;
      }
      const __m128i lo = rq.bytes8(sums_lo, m);
      const __m128i hi = rq.bytes8(sums_hi, m);
      const __m128i bytes = _mm_unpacklo_epi64(lo, hi);
      if (ox + 16 <= g.ow) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(yrow + ox), bytes);
      } else {
        alignas(16) uint8_t last[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(last), bytes);
        std::memcpy(yrow + ox, last, static_cast<size_t>(g.ow - ox));
      }
    }
  }
}

}  // namespace ignis::kernels::x86
