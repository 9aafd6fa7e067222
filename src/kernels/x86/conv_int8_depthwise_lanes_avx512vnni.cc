// SPDX-License-Identifier: Apache-2.0
// The depthwise int8 convolution on AVX-512 (BW, VNNI) with 16 channels in the vector lanes,
// for NCHW tensors: the per-plane kernel (conv_int8_depthwise_avx512vnni.cc) walks one channel
// plane at a time and pays its padding, tap setup and block tails once per channel, which on
// the 14x14 and 7x7 planes of MobileNet's late layers (576 and 960 channels of 49 to 196
// values) costs more than the arithmetic.
//
// Per block of 16 channels: the input is transposed (16x16 bytes at a time) into a padded
// plane of int32 lanes, one 64-byte vector per position holding the 16 channels' values
// (padding: x's zero point), so every tap of an output is one vector read. vpdpwssd with the
// tap's weights in the low 16 bits of each lane (high bits zero) then adds x * w exactly per
// tap (|x|, |w| <= 255), one instruction per 16 products; bias, zero-point term and the
// requantization of requantize_avx512.h follow, and 16 outputs of 16 channels are transposed
// back to the channels' NCHW rows.
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/conv_int8.h"
#include "kernels/x86/requantize_avx512.h"
#include "kernels/x86/transpose_bytes.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kLanes = 16;
// All 16 lanes, for the maskz forms (GCC 12 warns that the plain ones read an undefined register).
constexpr __mmask16 kAll = 0xFFFF;

__mmask16 first_lanes(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1); }

// Channels [c0, c0 + n) (n <= 16) of x, padded, into `plane` ([rows x cols] vectors).
void fill_plane(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c0, int64_t n, __m512i* plane) {
  const int64_t in_plane = g.ih * g.iw;
  fill_padded_plane(
      g, _mm512_set1_epi32(p.x_zero_point), plane,
      [&](int64_t j, int64_t q0, int64_t count) {
        return j < n ? _mm_maskz_loadu_epi8(first_lanes(count), p.x + (c0 + j) * in_plane + q0) : _mm_setzero_si128();
      },
      [&](__m128i bytes) {
        return p.x_signed ? _mm512_maskz_cvtepi8_epi32(kAll, bytes) : _mm512_maskz_cvtepu8_epi32(kAll, bytes);
      });
}

// Output block of channels [c0, c0 + n): 16 positions at a time, each sum over the taps of
// plane vectors at `at` times the weight vectors.
template <int kTaps>
void output_block(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c0, int64_t n, const __m512i* plane,
                  int64_t taps, const int64_t* at, const __m512i* weights, __m512i offset, __m512 m) {
  const int64_t cols = lanes_padded_cols(g), out_plane = g.oh * g.ow;
  const int64_t t_count = kTaps > 0 ? kTaps : taps;
  __m512i w[kTaps > 0 ? kTaps : 1];
  if constexpr (kTaps > 0)
    for (int t = 0; t < kTaps; ++t) w[t] = weights[t];
  const RequantAvx512 rq(p.y_zero_point, p.q_min, p.q_max, p.y_signed);
  __m128i res[16], out[16];
  const __m512i* src[16];
  __m512i acc[16];
  int64_t oy = 0, ox = 0;
  for (int64_t p0 = 0; p0 < out_plane; p0 += kLanes) {
    const int64_t valid = std::min(kLanes, out_plane - p0);
    for (int64_t i = 0; i < kLanes; ++i) {
      src[i] = i < valid ? plane + oy * g.sh * cols + ox * g.sw : src[0];
      if (i < valid && ++ox == g.ow) ox = 0, ++oy;
    }
    // Tap-major over 8 positions at a time: 8 independent sums, so the adds' latency overlaps
    // (16 would spill their pointers), and a last group of 8 or fewer computes only 8.
    for (int64_t h = 0; h < valid; h += 8) {
      const __m512i* const* s8 = src + h;
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) acc[h + i] = offset;
      for (int64_t t = 0; t < t_count; ++t) {
        const __m512i wt = kTaps > 0 ? w[t] : weights[t];
        const int64_t a = at[t];
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) acc[h + i] = _mm512_dpwssd_epi32(acc[h + i], wt, _mm512_loadu_si512(s8[i] + a));
      }
    }
    for (int64_t i = 0; i < valid; ++i) res[i] = _mm512_maskz_cvtepi32_epi8(kAll, rq.values(acc[i], m));
    for (int64_t i = valid; i < kLanes; ++i) res[i] = _mm_setzero_si128();
    transpose16(res, out);
    const __mmask16 mask = first_lanes(valid);
    for (int64_t j = 0; j < n; ++j) _mm_mask_storeu_epi8(p.y + (c0 + j) * out_plane + p0, mask, out[j]);
  }
}

}  // namespace

size_t conv_int8_depthwise_lanes_scratch(const ConvGeometry2d& g) {
  return static_cast<size_t>(lanes_padded_rows(g) * lanes_padded_cols(g)) * sizeof(__m512i) + 64;
}

void conv_int8_depthwise_lanes_avx512(const ConvGeometry2d& g, const DepthwiseInt8Channels& p, int64_t c_begin,
                                      int64_t c_end, uint8_t* scratch) {
  auto* plane = reinterpret_cast<__m512i*>((reinterpret_cast<uintptr_t>(scratch) + 63) & ~uintptr_t{63});
  const int64_t taps = g.kh * g.kw, cols = lanes_padded_cols(g);
  int64_t at[64];
  for (int64_t t = 0; t < taps; ++t) at[t] = t / g.kw * g.dh * cols + t % g.kw * g.dw;
  __m512i weights[64];
  for (int64_t c0 = c_begin; c0 < c_end; c0 += kLanes) {
    const int64_t n = std::min(kLanes, c_end - c0);
    // The block's weights per tap, w_sum and per-channel values, gathered from the channels'
    // rows (scalar stores read back as vectors would stall on store forwarding).
    const __mmask16 live = first_lanes(n);
    const __m512i rows = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(static_cast<int32_t>(taps)));
    __m512i w_sum = _mm512_setzero_si512();
    for (int64_t t = 0; t < taps; ++t) {
      const __m512i wt = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), live, rows, p.w + c0 * taps + t, 4);
      w_sum = _mm512_add_epi32(w_sum, wt);
      weights[t] = _mm512_and_si512(wt, _mm512_set1_epi32(0xFFFF));
    }
    const __m512i bias = p.bias ? _mm512_maskz_loadu_epi32(live, p.bias + c0) : _mm512_setzero_si512();
    const __m512i off = _mm512_sub_epi32(bias, _mm512_mullo_epi32(w_sum, _mm512_set1_epi32(p.x_zero_point)));
    const __m512 mv = _mm512_maskz_loadu_ps(live, p.multiplier + c0);
    fill_plane(g, p, c0, n, plane);
    if (taps == 9) output_block<9>(g, p, c0, n, plane, taps, at, weights, off, mv);
    else output_block<0>(g, p, c0, n, plane, taps, at, weights, off, mv);
  }
}

}  // namespace ignis::kernels::x86
