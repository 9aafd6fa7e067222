// SPDX-License-Identifier: Apache-2.0
// The depthwise int8 convolution on AVX2 with 16 channels in the vector lanes, for NCHW
// tensors: the AVX2 form of conv_int8_depthwise_lanes_avx512vnni.cc. The per-plane kernel
// (conv_int8_avx2.cc) walks one channel at a time in blocks of 16 output positions, which
// leaves 9 of 16 lanes idle on a 7-wide row, pays its padding and setup per channel, and
// needs two shuffles per tap pair to widen and interleave the bytes.
//
// Per block of 16 channels: the input is transposed (16 x 16 bytes at a time) into a padded
// plane of int16 lanes, one 32-byte vector per position holding the 16 channels' values
// (padding: x's zero point), so every tap of an output is one vector read. Taps go in pairs:
// the two taps' vectors interleaved (vpunpcklwd / vpunpckhwd) and multiplied by the pair's
// weights with vpmaddwd give x0 w0 + x1 w1 per channel in int32, exactly (|x|, |w| <= 255),
// for channels 0-3 and 8-11 in one vector and 4-7 and 12-15 in the other; vpmaddwd, one per
// cycle on Zen 3, is then used for 16 products, against 8 with one tap per int32 lane. Bias,
// zero-point term and the float32 requantization of requantize_avx2.h follow, and 16 outputs
// of the 16 channels are transposed back to the channels' NCHW rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/conv_int8.h"
#include "kernels/x86/requantize_avx2.h"
#include "kernels/x86/transpose_bytes.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kLanes = 16;      // channels per block
constexpr int64_t kPositions = 16;  // positions per transpose
// The channel of each lane of the two vectors of sums, in the order the requantized bytes
// come out: vpunpck*wd works within 128-bit halves.
constexpr int kChannelOf[16] = {0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 12, 13, 14, 15};

// Sixteen bytes at `src`, of which `count` may be read (the rest zero).
__m128i load_bytes(const uint8_t* src, int64_t count) {
  if (count >= 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  alignas(16) uint8_t part[16] = {};
  std::memcpy(part, src, static_cast<size_t>(count));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(part));
}

// Channels [c0, c0 + n) (n <= 16) of x, padded, into `plane` ([rows x cols] vectors of 16
// int16 lanes). A channel's last bytes may be read past its plane, into the next channel's,
// when that channel is in the block too.
void fill_plane(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c0, int64_t n, __m256i* plane) {
  const int64_t in_plane = g.ih * g.iw;
  fill_padded_plane(
      g, _mm256_set1_epi16(static_cast<int16_t>(p.x_zero_point)), plane,
      [&](int64_t j, int64_t q0, int64_t count) {
        const uint8_t* src = p.x + (c0 + j) * in_plane + q0;
        return j >= n ? _mm_setzero_si128() : j + 1 < n ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src))
                                                         : load_bytes(src, count);
      },
      [&](__m128i bytes) { return p.x_signed ? _mm256_cvtepi8_epi16(bytes) : _mm256_cvtepu8_epi16(bytes); });
}

// Output block of channels [c0, c0 + n): 16 positions at a time, each sum over the tap pairs
// (taps at at[2q], at[2q + 1]) of the interleaved plane vectors times the pair's weights
// (weights[2q]: lanes of channels 0-3, 8-11; weights[2q + 1]: 4-7, 12-15).
template <int kPairs>
void output_block(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c0, int64_t n, const __m256i* plane,
                  int64_t pairs, const int64_t* at, const __m256i* weights, const __m256i offset[2], const __m256 m[2]) {
  const int64_t cols = lanes_padded_cols(g), out_plane = g.oh * g.ow;
  const int64_t q_count = kPairs > 0 ? kPairs : pairs;
  const RequantAvx2 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  __m128i res[16], out[16];
  const __m256i* src[16];
  int64_t oy = 0, ox = 0;
  for (int64_t p0 = 0; p0 < out_plane; p0 += kPositions) {
    const int64_t valid = std::min(kPositions, out_plane - p0);
    for (int64_t i = 0; i < kPositions; ++i) {
      src[i] = i < valid ? plane + oy * g.sh * cols + ox * g.sw : src[0];
      if (i < valid && ++ox == g.ow) ox = 0, ++oy;
    }
    // Pair-major over 4 positions at a time: 8 independent sums, so the adds' latency overlaps.
    // The pair loop is kept rolled: unrolled, the compiler sums the products as a tree and
    // spills most of them to the stack.
    for (int64_t h = 0; h < valid; h += 4) {
      const __m256i* const* s4 = src + h;
      __m256i acc[4][2];
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) acc[i][0] = offset[0], acc[i][1] = offset[1];
#pragma GCC unroll 1
      for (int64_t q = 0; q < q_count; ++q) {
        const __m256i w_lo = _mm256_load_si256(weights + 2 * q), w_hi = _mm256_load_si256(weights + 2 * q + 1);
        const int64_t a0 = at[2 * q], a1 = at[2 * q + 1];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          const __m256i x0 = _mm256_loadu_si256(s4[i] + a0), x1 = _mm256_loadu_si256(s4[i] + a1);
          acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(_mm256_unpacklo_epi16(x0, x1), w_lo));
          acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(_mm256_unpackhi_epi16(x0, x1), w_hi));
        }
      }
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) res[h + i] = rq.bytes16(acc[i][0], m[0], acc[i][1], m[1]);
    }
    for (int64_t i = valid; i < 16; ++i) res[i] = _mm_setzero_si128();
    transpose16(res, out);
    for (int j = 0; j < 16; ++j) {
      if (kChannelOf[j] >= n) continue;
      uint8_t* y = p.y + (c0 + kChannelOf[j]) * out_plane + p0;
      if (valid == kPositions) {
        _mm_storeu_si128(reinterpret_cast<__m128i*>(y), out[j]);
      } else {
        alignas(16) uint8_t last[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(last), out[j]);
        std::memcpy(y, last, static_cast<size_t>(valid));
      }
    }
  }
}

}  // namespace

size_t conv_int8_depthwise_lanes_avx2_scratch(const ConvGeometry2d& g) {
  return static_cast<size_t>(lanes_padded_rows(g) * lanes_padded_cols(g)) * sizeof(__m256i) + 32;
}

void conv_int8_depthwise_lanes_avx2(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin,
                                    int64_t c_end, uint8_t* scratch) {
  auto* plane = reinterpret_cast<__m256i*>((reinterpret_cast<uintptr_t>(scratch) + 31) & ~uintptr_t{31});
  const int64_t taps = g.kh * g.kw, cols = lanes_padded_cols(g), pairs = (taps + 1) / 2;
  // Tap offsets in pairs; an odd last tap pairs with itself at weight 0.
  int64_t at[64];
  for (int64_t t = 0; t < 2 * pairs; ++t) {
    const int64_t tap = std::min(t, taps - 1);
    at[t] = tap / g.kw * g.dh * cols + tap % g.kw * g.dw;
  }
  // Per pair, per lane (kChannelOf order): the two taps' weights as int16 halves of an int32.
  alignas(32) int32_t w_pairs[32][kLanes];
  alignas(32) int32_t offset[kLanes];
  alignas(32) float multiplier[kLanes];
  for (int64_t c0 = c_begin; c0 < c_end; c0 += kLanes) {
    const int64_t n = std::min(kLanes, c_end - c0);
    for (int lane = 0; lane < kLanes; ++lane) {
      const int64_t j = kChannelOf[lane];
      const int32_t* w = p.w + (c0 + j) * taps;
      int32_t w_sum = 0;
      for (int64_t t = 0; t < taps && j < n; ++t) w_sum += w[t];
      for (int64_t q = 0; q < pairs; ++q) {
        const int32_t w0 = j < n ? w[2 * q] : 0, w1 = j < n && 2 * q + 1 < taps ? w[2 * q + 1] : 0;
        w_pairs[q][lane] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint16_t>(w0)) |
                                                static_cast<uint32_t>(static_cast<uint16_t>(w1)) << 16);
      }
      offset[lane] = j < n ? (p.bias ? p.bias[c0 + j] : 0) - p.x_zero_point * w_sum : 0;
      multiplier[lane] = j < n ? p.multiplier[c0 + j] : 0.0f;
    }
    const auto* weights = reinterpret_cast<const __m256i*>(w_pairs);
    const __m256i off[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(offset)),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(offset + 8))};
    const __m256 mv[2] = {_mm256_load_ps(multiplier), _mm256_load_ps(multiplier + 8)};
    fill_plane(g, p, c0, n, plane);
    if (pairs == 5) output_block<5>(g, p, c0, n, plane, pairs, at, weights, off, mv);
    else output_block<0>(g, p, c0, n, plane, pairs, at, weights, off, mv);
  }
}

}  // namespace ignis::kernels::x86
