// SPDX-License-Identifier: Apache-2.0
// The compute loop of the channels-in-lanes depthwise kernels, shared by the AVX2 (8 channels
// per vector, conv_depthwise_lanes_avx2.cc) and AVX-512 (16, conv_depthwise_avx512.cc) files:
// the padded input of one unit of channels is [rows][cols][W] floats (channel in the lane), the
// weights [kh * kw][W], and each output pixel is kh * kw full-vector FMAs at one offset per tap.
// `Simd` supplies the vector type and its load / store / fmadd for one instruction set.
// Internal linkage on purpose (see gemm_blocked.h): each file compiles its own copy with its own
// ISA flags.
#pragma once

#include <algorithm>
#include <cstdint>

#include "kernels/x86/conv_avx2.h"

namespace ignis::kernels::x86 {
namespace {

struct LanesLayout {
  int64_t rows = 0, cols = 0;  // of the padded input buffer, in pixels of W floats
  int64_t out_pixels = 0;      // oh * ow rounded up to W
};

template <int W>
LanesLayout lanes_layout(const ConvGeometry2d& g) {
  LanesLayout l;
  // The input may reach past the last window (pads smaller than the stride leaves): the buffer
  // holds all of it.
  l.rows = std::max((g.oh - 1) * g.sh + g.kh, g.ph + g.ih);
  l.cols = std::max((g.ow - 1) * g.sw + g.kw, g.pw + g.iw);
  l.out_pixels = (g.oh * g.ow + W - 1) / W * W;
  return l;
}

template <class Simd>
struct LanesJob {
  const float* in;  // [rows][cols][W]
  const float* w;   // [kh * kw][W]
  typename Simd::Vec bias;
  int64_t cols, oh, ow, sh, sw;
  int kh, kw;
  float* out;  // [out_pixels][W]
};

// V output pixels from pixel index q (at row oy, column ox), into out.
template <class Simd, int KH, int KW, int V>
inline void lanes_block(const LanesJob<Simd>& j, int64_t q, int64_t& oy, int64_t& ox) {
  constexpr int W = Simd::kWidth;
  const int kh = KH ? KH : j.kh;
  const int kw = KW ? KW : j.kw;
  const float* base[V];
  for (int v = 0; v < V; ++v) {
    base[v] = j.in + (oy * j.sh * j.cols + ox * j.sw) * W;
    if (++ox == j.ow) {
      ox = 0;
      ++oy;
    }
  }
  typename Simd::Vec acc[V];
  for (int v = 0; v < V; ++v) acc[v] = j.bias;
  for (int ky = 0; ky < kh; ++ky) {
    for (int kx = 0; kx < kw; ++kx) {
      const typename Simd::Vec wv = Simd::load(j.w + (ky * kw + kx) * W);
      const int64_t off = (ky * j.cols + kx) * W;
      for (int v = 0; v < V; ++v) acc[v] = Simd::fmadd(wv, Simd::load(base[v] + off), acc[v]);
    }
  }
  for (int v = 0; v < V; ++v) Simd::store(j.out + (q + v) * W, acc[v]);
}

// All oh * ow output pixels of one unit: 8 at a time (eight FMA chains in flight), then 4, 2, 1.
template <class Simd, int KH, int KW>
void lanes_compute(const LanesJob<Simd>& j) {
  const int64_t n = j.oh * j.ow;
  int64_t q = 0, oy = 0, ox = 0;
  for (; q + 8 <= n; q += 8) lanes_block<Simd, KH, KW, 8>(j, q, oy, ox);
  if (q + 4 <= n) {
    lanes_block<Simd, KH, KW, 4>(j, q, oy, ox);
    q += 4;
  }
  if (q + 2 <= n) {
    lanes_block<Simd, KH, KW, 2>(j, q, oy, ox);
    q += 2;
  }
  if (q < n) lanes_block<Simd, KH, KW, 1>(j, q, oy, ox);
}

// The compute loop for this geometry: 3x3 and 5x5 with their extents compiled in.
template <class Simd>
auto lanes_compute_for(const ConvGeometry2d& g) -> void (*)(const LanesJob<Simd>&) {
  if (g.kh == 3 && g.kw == 3) return lanes_compute<Simd, 3, 3>;
  if (g.kh == 5 && g.kw == 5) return lanes_compute<Simd, 5, 5>;
  return lanes_compute<Simd, 0, 0>;
}

}  // namespace
}  // namespace ignis::kernels::x86
