// SPDX-License-Identifier: Apache-2.0
// AVX2 depthwise convolution with channels in lanes, for small planes: 8 output channels of
// one image at a time. Their zero-padded input planes are transposed into one
// [rows][cols][8] buffer (channel in the lane) and the weights into [kh * kw][8]; each output
// pixel of the 8 channels is then kh * kw full-vector FMAs at one offset per tap, for any
// stride, without row tails or masks (the loop is conv_depthwise_lanes.h's, shared with AVX-512).
// The results ([pixels][8]) are transposed back 8 pixels at a time, adding the residual and
// applying the activation on the NCHW vectors as they are stored. The same scheme as the
// AVX-512 kernel (conv_depthwise_avx512.cc) at half the width.
//
// Why: the per-plane kernel (conv_f32_depthwise_plane) covers each output row with whole
// 8-float vectors and refills a padded copy of every plane, so a 7x7 output uses 7 of 8 lanes
// per row and pays a plane copy per 441 multiply-adds. Measured on one thread of an AMD EPYC
// family 25 model 1 (Zen 3, AVX2), per-node medians of mobilenet_v2's and efficientnet_b0's
// layers (with Clip or SiLU), microseconds per layer, plane -> lanes:
// 3x3 s1 7x7 150 -> 54, 14x14 140 -> 73, 28x28 218 -> 136; 3x3 s2 to 7x7 273 -> 51, to 14x14
// 193 -> 53, to 28x28 330 -> 149, to 56x56 664 -> 500; 5x5 s1 7x7 300 -> 114, 14x14 420 -> 238;
// 5x5 s2 to 7x7 412 -> 85. At 112x112 (3x3 s1) the two were level (404 vs 417, 597 vs 591), so
// outputs up to 56x56 take this path, as on AVX-512.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/conv_depthwise_lanes.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

// Largest output plane (oh * ow) this path takes (measured: the top of the file).
constexpr int64_t kLanesMaxOutput = 56 * 56;

// r[i] = elements k0 + i of the 8 planes src[0 .. channels) (zero for i >= count and for lanes
// >= channels): element k0 + i of every channel as one vector.
inline void gather8(const float* const* src, int channels, int64_t k0, int count, __m256 r[8]) {
  const __m256i m = lane_mask(count);
  for (int l = 0; l < 8; ++l)
    r[l] = l >= channels ? _mm256_setzero_ps()
           : count == 8  ? _mm256_loadu_ps(src[l] + k0)
                         : _mm256_maskload_ps(src[l] + k0, m);
  transpose8(r);
}

// 8 channels per vector (conv_depthwise_lanes.h).
struct Simd256 {
  using Vec = __m256;
  static constexpr int kWidth = 8;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
  static __m256 fmadd(__m256 a, __m256 b, __m256 c) { return _mm256_fmadd_ps(a, b, c); }
};

// Transposes the results of one unit ([pixels][8]) back into the output planes of channels
// t0 .. t0 + channels (planes of `plane` floats), adding the residual and applying the
// activation.
void store_unit(const GemmEpilogue& e, const float* out, const float* residual, float* y, int64_t t0, int channels,
                int64_t plane) {
  __m256 r[8];
  for (int64_t k0 = 0; k0 < plane; k0 += 8) {
    const int count = static_cast<int>(std::min<int64_t>(8, plane - k0));
    const __m256i pm = lane_mask(count);
    for (int i = 0; i < 8; ++i) r[i] = _mm256_load_ps(out + (k0 + i) * 8);
    transpose8(r);
    for (int c = 0; c < channels; ++c) {
      const int64_t off = (t0 + c) * plane + k0;
      __m256 v = r[c];
      if (count == 8) {
        if (residual) v = _mm256_add_ps(v, _mm256_loadu_ps(residual + off));
        _mm256_storeu_ps(y + off, activate_avx2(v, e));
      } else {
        if (residual) v = _mm256_add_ps(v, _mm256_maskload_ps(residual + off, pm));
        _mm256_maskstore_ps(y + off, pm, activate_avx2(v, e));
      }
    }
  }
}

}  // namespace

bool conv_f32_depthwise_avx2_lanes(const ConvGeometry2d& g) { return g.oh * g.ow <= kLanesMaxOutput; }

size_t conv_f32_depthwise_avx2_lanes_scratch(const ConvGeometry2d& g) {
  if (g.oh <= 0 || g.ow <= 0) return 0;
  const LanesLayout l = lanes_layout<8>(g);
  // Input buffer, results, weights, placement table (int32, one per input element), and 8
  // floats of slack so that a caller may align the start to 32 bytes.
  return static_cast<size_t>((l.rows * l.cols + l.out_pixels + g.kh * g.kw) * 8 + (g.ih * g.iw + 7) / 8 * 8 + 8);
}

void conv_f32_depthwise_lanes_avx2(const ConvGeometry2d& g, const DepthwisePlanes& d, int64_t u0, int64_t u1,
                                   float* scratch) {
  if (g.oh <= 0 || g.ow <= 0 || u0 >= u1) return;
  const LanesLayout lay = lanes_layout<8>(g);
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow, taps = g.kh * g.kw;
  const int64_t groups = (d.m + 7) / 8;
  // The vectors below are read and written aligned.
  float* in = reinterpret_cast<float*>((reinterpret_cast<uintptr_t>(scratch) + 31) & ~uintptr_t{31});
  float* out = in + lay.rows * lay.cols * 8;
  float* wbuf = out + lay.out_pixels * 8;
  // Where input element k of a plane goes in `in` (floats): a table, so that placing the 8
  // transposed vectors of a block takes no per-pixel row arithmetic.
  int32_t* place = reinterpret_cast<int32_t*>(wbuf + taps * 8);
  for (int64_t iy = 0, k = 0; iy < g.ih; ++iy)
    for (int64_t ix = 0; ix < g.iw; ++ix, ++k)
      place[k] = static_cast<int32_t>(((iy + g.ph) * lay.cols + ix + g.pw) * 8);
  // The padding stays zero: every unit writes the same interior pixels.
  for (int64_t i = 0; i < lay.rows * lay.cols; ++i) _mm256_store_ps(in + i * 8, _mm256_setzero_ps());
  LanesJob<Simd256> j{in, wbuf, _mm256_setzero_ps(), lay.cols, g.oh, g.ow, g.sh, g.sw, static_cast<int>(g.kh),
                      static_cast<int>(g.kw), out};
  const auto compute = lanes_compute_for<Simd256>(g);
  __m256 r[8];
  const float* src[8];
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / groups, o0 = (u % groups) * 8;
    const int channels = static_cast<int>(std::min<int64_t>(8, d.m - o0));
    // Weights: the unit's rows of kh * kw floats, transposed to [kh * kw][8].
    for (int l = 0; l < channels; ++l) src[l] = d.w + (o0 + l) * taps;
    for (int64_t k0 = 0; k0 < taps; k0 += 8) {
      const int count = static_cast<int>(std::min<int64_t>(8, taps - k0));
      gather8(src, channels, k0, count, r);
      for (int i = 0; i < count; ++i) _mm256_store_ps(wbuf + (k0 + i) * 8, r[i]);
    }
    j.bias = d.bias ? _mm256_maskload_ps(d.bias + o0, lane_mask(channels)) : _mm256_setzero_ps();
    // Input planes (output channel o reads input channel o / mg), transposed into `in`.
    for (int l = 0; l < channels; ++l) src[l] = d.x + (image * d.c + (o0 + l) / d.mg) * in_plane;
    int64_t k0 = 0;
    for (; k0 + 8 <= in_plane; k0 += 8) {
      gather8(src, channels, k0, 8, r);
      for (int i = 0; i < 8; ++i) _mm256_store_ps(in + place[k0 + i], r[i]);
    }
    if (k0 < in_plane) {
      const int count = static_cast<int>(in_plane - k0);
      gather8(src, channels, k0, count, r);
      for (int i = 0; i < count; ++i) _mm256_store_ps(in + place[k0 + i], r[i]);
    }
    compute(j);
    store_unit(*d.act, out, d.residual, d.y, image * d.m + o0, channels, out_plane);
  }
}

}  // namespace ignis::kernels::x86
