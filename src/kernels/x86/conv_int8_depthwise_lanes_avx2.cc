// SPDX-License-Identifier: Apache-2.0
// The depthwise int8 convolution on AVX2 with 8 channels in the vector lanes, for NCHW tensors:
// the AVX2 form of conv_int8_depthwise_lanes_avx512vnni.cc. The per-plane kernel
// (conv_int8_avx2.cc) walks one channel at a time in blocks of 16 output positions, which
// leaves 9 of 16 lanes idle on a 7-wide row, pays its padding and setup per channel, and
// needs two shuffles per tap pair to widen and interleave the bytes.
//
// Per block of 16 channels: the input is transposed (16 x 16 bytes at a time) into a padded
// plane of int32 lanes, two 32-byte vectors per position holding the 16 channels' values
// (padding: x's zero point), so every tap of an output is two vector reads.
// vpmaddwd with the tap's weights in the low 16 bits of each lane (high bits zero) gives x * w
// exactly per lane (|x|, |w| <= 255), added into int32; bias, zero-point term and the float32
// requantization of requantize_avx2.h follow, and 16 outputs of the 16 channels are transposed
// back to the channels' NCHW rows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/conv_int8.h"
#include "kernels/x86/requantize_avx2.h"
#include "kernels/x86/transpose_bytes.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kLanes = 16;      // channels per block: two vectors of 8 per position
constexpr int64_t kPositions = 16;  // positions per transpose

// Sixteen bytes at `src`, of which `count` may be read (the rest zero).
__m128i load_bytes(const uint8_t* src, int64_t count) {
  if (count >= 16) return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  alignas(16) uint8_t part[16] = {};
  std::memcpy(part, src, static_cast<size_t>(count));
  return _mm_load_si128(reinterpret_cast<const __m128i*>(part));
}

// Channels [c0, c0 + n) (n <= 16) of x, padded, into `plane` ([rows x cols] positions of two
// vectors: channels 0-7, 8-15). A channel's last bytes may be read past its plane, into the
// next channel's, when that channel is in the block too.
void fill_plane(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c0, int64_t n, __m256i* plane) {
  const int64_t rows = lanes_padded_rows(g), cols = lanes_padded_cols(g);
  const __m256i pad = _mm256_set1_epi32(p.x_zero_point);
  for (int64_t py = 0; py < rows; ++py) {
    const int64_t iy = py - g.ph;
    if (iy < 0 || iy >= g.ih) {
      std::fill_n(plane + 2 * py * cols, 2 * cols, pad);
      continue;
    }
    std::fill_n(plane + 2 * py * cols, 2 * std::min(g.pw, cols), pad);
    for (int64_t px = g.pw + g.iw; px < cols; ++px) plane[2 * (py * cols + px)] = plane[2 * (py * cols + px) + 1] = pad;
  }
  const int64_t in_plane = g.ih * g.iw;
  __m128i in[16], out[16];
  int64_t iy = 0, ix = 0;
  for (int64_t q0 = 0; q0 < in_plane; q0 += kPositions) {
    const int64_t count = std::min(kPositions, in_plane - q0);
    for (int64_t j = 0; j < kLanes; ++j) {
      const uint8_t* src = p.x + (c0 + j) * in_plane + q0;
      in[j] = j >= n ? _mm_setzero_si128() : j + 1 < n ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src))
                                                         : load_bytes(src, count);
    }
    transpose16(in, out);
    for (int64_t i = 0; i < count; ++i) {
      const int64_t py = iy + g.ph, px = ix + g.pw;
      if (py < rows && px < cols) {
        __m256i* at = plane + 2 * (py * cols + px);
        const __m128i high = _mm_unpackhi_epi64(out[i], out[i]);
        _mm256_storeu_si256(at, p.x_signed ? _mm256_cvtepi8_epi32(out[i]) : _mm256_cvtepu8_epi32(out[i]));
        _mm256_storeu_si256(at + 1, p.x_signed ? _mm256_cvtepi8_epi32(high) : _mm256_cvtepu8_epi32(high));
      }
      if (++ix == g.iw) ix = 0, ++iy;
    }
  }
}

// Output block of channels [c0, c0 + n): 16 positions at a time, each sum over the taps of
// plane vectors at `at` times the weight vectors (two per tap).
template <int kTaps>
void output_block(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c0, int64_t n, const __m256i* plane,
                  int64_t taps, const int64_t* at, const __m256i* weights, const __m256i offset[2], const __m256 m[2]) {
  const int64_t cols = lanes_padded_cols(g), out_plane = g.oh * g.ow;
  const int64_t t_count = kTaps > 0 ? kTaps : taps;
  const RequantAvx2 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  __m128i res[16], out[16];
  const __m256i* src[16];
  int64_t oy = 0, ox = 0;
  for (int64_t p0 = 0; p0 < out_plane; p0 += kPositions) {
    const int64_t valid = std::min(kPositions, out_plane - p0);
    for (int64_t i = 0; i < kPositions; ++i) {
      src[i] = i < valid ? plane + 2 * (oy * g.sh * cols + ox * g.sw) : src[0];
      if (i < valid && ++ox == g.ow) ox = 0, ++oy;
    }
    // Tap-major over 4 positions at a time: 8 independent sums, so the adds' latency overlaps.
    for (int64_t h = 0; h < valid; h += 4) {
      const __m256i* const* s4 = src + h;
      __m256i acc[4][2];
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) acc[i][0] = offset[0], acc[i][1] = offset[1];
      for (int64_t t = 0; t < t_count; ++t) {
        const __m256i w0 = _mm256_load_si256(weights + 2 * t), w1 = _mm256_load_si256(weights + 2 * t + 1);
        const int64_t a = 2 * at[t];
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i) {
          acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(_mm256_loadu_si256(s4[i] + a), w0));
          acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(_mm256_loadu_si256(s4[i] + a + 1), w1));
        }
      }
#pragma GCC unroll 4
      for (int i = 0; i < 4; ++i) res[h + i] = _mm_unpacklo_epi64(rq.bytes8(acc[i][0], m[0]), rq.bytes8(acc[i][1], m[1]));
    }
    for (int64_t i = valid; i < 16; ++i) res[i] = _mm_setzero_si128();
    transpose16(res, out);
    for (int64_t j = 0; j < n; ++j) {
      uint8_t* y = p.y + (c0 + j) * out_plane + p0;
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
  return static_cast<size_t>(lanes_padded_rows(g) * lanes_padded_cols(g)) * 2 * sizeof(__m256i) + 32;
}

void conv_int8_depthwise_lanes_avx2(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin,
                                    int64_t c_end, uint8_t* scratch) {
  auto* plane = reinterpret_cast<__m256i*>((reinterpret_cast<uintptr_t>(scratch) + 31) & ~uintptr_t{31});
  const int64_t taps = g.kh * g.kw, cols = lanes_padded_cols(g);
  int64_t at[64];
  for (int64_t t = 0; t < taps; ++t) at[t] = t / g.kw * g.dh * cols + t % g.kw * g.dw;
  alignas(32) int32_t w_lanes[64][kLanes];
  alignas(32) int32_t offset[kLanes];
  alignas(32) float multiplier[kLanes];
  for (int64_t c0 = c_begin; c0 < c_end; c0 += kLanes) {
    const int64_t n = std::min(kLanes, c_end - c0);
    // The block's weights per tap (low 16 bits of each lane) and per-channel values; idle lanes
    // get zeros.
    for (int64_t j = 0; j < kLanes; ++j) {
      int32_t w_sum = 0;
      for (int64_t t = 0; t < taps; ++t) {
        const int32_t w = j < n ? p.w[(c0 + j) * taps + t] : 0;
        w_sum += w;
        w_lanes[t][j] = w & 0xFFFF;
      }
      offset[j] = j < n ? (p.bias ? p.bias[c0 + j] : 0) - p.x_zero_point * w_sum : 0;
      multiplier[j] = j < n ? p.multiplier[c0 + j] : 0.0f;
    }
    const auto* weights = reinterpret_cast<const __m256i*>(w_lanes);
    const __m256i off[2] = {_mm256_load_si256(reinterpret_cast<const __m256i*>(offset)),
                            _mm256_load_si256(reinterpret_cast<const __m256i*>(offset + 8))};
    const __m256 mv[2] = {_mm256_load_ps(multiplier), _mm256_load_ps(multiplier + 8)};
    fill_plane(g, p, c0, n, plane);
    if (taps == 9) output_block<9>(g, p, c0, n, plane, taps, at, weights, off, mv);
    else output_block<0>(g, p, c0, n, plane, taps, at, weights, off, mv);
  }
}

}  // namespace ignis::kernels::x86
