// SPDX-License-Identifier: Apache-2.0
// AVX-512 kernels on the blocked channel layout (see conv_blocked.h for the layout and why).
//
// Pointwise: a GEMM tile of 12 positions x 32 output channels (24 accumulators). Per input
// channel it broadcasts one float of each of the 12 positions straight from the blocked input
// (consecutive input channels of a position are consecutive floats) against two vectors of
// packed weights: 14 loads for 24 FMAs, FMA-bound. Position tiles are the outer loop, so the
// tile's input (12 positions x all input channels) stays in L1 while every output pair passes
// over it; the weights come from L2.
//
// Depthwise: per output row, vectors of 16 channels at 8 consecutive output positions (eight
// FMA chains), each tap one aligned load of the input at its position and one FMA with the
// tap's 16 weights. Output positions whose window leaves the input (the borders) take a
// per-position path that skips the missing taps; rows skip the taps above or below the input.
#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/conv_blocked_tile_avx512.h"
#include "kernels/x86/simd_avx512.h"

namespace ignis::kernels::x86 {


// ---- reorders ----------------------------------------------------------------------------

void block_channels_avx512(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1) {
  const int64_t cb = channel_blocks(c);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / cb, block = u % cb;
    const int64_t c0 = block * kB, count = std::min(kB, c - c0);
    const float* src = x + (image * c + c0) * hw;
    float* dst = y + u * hw * kB;
    for (int64_t p = 0; p < hw; p += 16) {
      const int64_t n = std::min<int64_t>(16, hw - p);
      const __mmask16 m = lanes(0, n);
      __m512 r[16];
      for (int64_t l = 0; l < 16; ++l)
        r[l] = l < count ? _mm512_maskz_loadu_ps(m, src + l * hw + p) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t i = 0; i < n; ++i) _mm512_storeu_ps(dst + (p + i) * kB, r[i]);
    }
  }
}

void unblock_channels_avx512(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1) {
  const int64_t cb = channel_blocks(c);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / cb, block = u % cb;
    const int64_t c0 = block * kB, count = std::min(kB, c - c0);
    const float* src = x + u * hw * kB;
    float* dst = y + (image * c + c0) * hw;
    for (int64_t p = 0; p < hw; p += 16) {
      const int64_t n = std::min<int64_t>(16, hw - p);
      const __mmask16 m = lanes(0, n);
      __m512 r[16];
      for (int64_t i = 0; i < 16; ++i) r[i] = i < n ? _mm512_loadu_ps(src + (p + i) * kB) : _mm512_setzero_ps();
      transpose16(r);
      for (int64_t l = 0; l < count; ++l) _mm512_mask_storeu_ps(dst + l * hw + p, m, r[l]);
    }
  }
}

// ---- pointwise ---------------------------------------------------------------------------

namespace {

// P positions x NB output blocks (of pair j). x at the tile's first position in block 0,
// y / residual at its first position in the pair's first block.
template <int P, int NB, Activation A>
void pointwise_tile(const BlockedConvArgs& a, int64_t xbs, const float* x, const float* w, int64_t pair,
                    const float* residual, float* y, const ActivationParams512& k) {
  __m512 acc[P][NB];
  start_tile<P, NB>(a, pair, acc);
  const int64_t cb = channel_blocks(a.c);
  for (int64_t blk = 0; blk < cb; ++blk) {
    const float* xb = x + blk * xbs;
    const float* wb = w + blk * kB * kPairFloats;
    for (int l = 0; l < kB; ++l) {
      _mm_prefetch(reinterpret_cast<const char*>(wb + l * kPairFloats + kWeightPrefetch), _MM_HINT_T0);
      _mm_prefetch(reinterpret_cast<const char*>(wb + l * kPairFloats + kWeightPrefetch + 16), _MM_HINT_T0);
      __m512 wv[NB];
      for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wb + l * kPairFloats + b * kB);
      for (int p = 0; p < P; ++p) {
        const __m512 xv = _mm512_set1_ps(xb[p * kB + l]);
        for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
      }
    }
  }
  finish_tile<P, NB, A>(a, xbs, pair, acc, residual, y, k);
}

template <int NB, Activation A>
void pointwise_tail(int p, const BlockedConvArgs& a, int64_t xbs, const float* x, const float* w, int64_t pair,
                    const float* residual, float* y, const ActivationParams512& k) {
  switch (p) {
#define IGNIS_PW_TAIL(n) \
  case n: return pointwise_tile<n, NB, A>(a, xbs, x, w, pair, residual, y, k);
    IGNIS_PW_TAIL(1)
    IGNIS_PW_TAIL(2)
    IGNIS_PW_TAIL(3)
    IGNIS_PW_TAIL(4)
    IGNIS_PW_TAIL(5)
    IGNIS_PW_TAIL(6)
    IGNIS_PW_TAIL(7)
    IGNIS_PW_TAIL(8)
    IGNIS_PW_TAIL(9)
    IGNIS_PW_TAIL(10)
    IGNIS_PW_TAIL(11)
#undef IGNIS_PW_TAIL
    default: return;
  }
}

template <Activation A>
void pointwise_range(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0, int64_t j1) {
  const ActivationParams512 k(*a.act);
  const int64_t xbs = positions * kB;
  const int64_t wpair = channel_blocks(a.c) * kB * kPairFloats;
  const int64_t out_blocks = channel_blocks(a.m);
  auto one = [&](int64_t p, int64_t tp, int64_t j) {
    const float* x = a.x + p * kB;
    const float* w = a.w + j * wpair;
    const int64_t yoff = 2 * j * xbs + p * kB;
    const float* res = a.residual ? a.residual + yoff : nullptr;
    float* y = a.y + yoff;
    const bool two = 2 * j + 1 < out_blocks;
    if (tp == kTileP) {
      if (two)
        pointwise_tile<kTileP, 2, A>(a, xbs, x, w, j, res, y, k);
      else
        pointwise_tile<kTileP, 1, A>(a, xbs, x, w, j, res, y, k);
    } else if (two) {
      pointwise_tail<2, A>(static_cast<int>(tp), a, xbs, x, w, j, res, y, k);
    } else {
      pointwise_tail<1, A>(static_cast<int>(tp), a, xbs, x, w, j, res, y, k);
    }
  };
  // The range's positions in as few tiles as whole tiles need, of near-equal widths: a 7x7
  // image as 10 + 10 + 10 + 10 + 9, not 4 x 12 + 1 (a 1-position tile is latency-bound: its
  // two accumulators take 4 cycles per input channel, where 12 positions take 12).
  for (int64_t p = p0; p < p1;) {
    const int64_t left = p1 - p, tiles = (left + kTileP - 1) / kTileP, tp = (left + tiles - 1) / tiles;
    for (int64_t j = j0; j < j1; ++j) one(p, tp, j);
    p += tp;
  }
}

}  // namespace

void blocked_pointwise_avx512(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0,
                              int64_t j1) {
  with_activation(a.act->act, [&]<Activation A>() { pointwise_range<A>(a, positions, p0, p1, j0, j1); });
}

void blocked_scale_channels_avx512(const float* x, const float* s, int64_t c, int64_t positions, float* y, int64_t b0,
                                   int64_t b1) {
  for (int64_t b = b0; b < b1; ++b) {
    const __m512 scale = _mm512_maskz_loadu_ps(block_mask(b, c), s + b * kB);
    const float* src = x + b * positions * kB;
    float* dst = y + b * positions * kB;
    for (int64_t p = 0; p < positions; ++p)
      _mm512_storeu_ps(dst + p * kB, _mm512_mul_ps(_mm512_loadu_ps(src + p * kB), scale));
  }
}

void blocked_pointwise_scale_weights_avx512(const float* packed, const float* s, int64_t c, float* y, int64_t j0,
                                            int64_t j1) {
  const int64_t rows = channel_blocks(c) * kB;  // packed input channels per pair
  for (int64_t j = j0; j < j1; ++j) {
    const float* src = packed + j * rows * kPairFloats;
    float* dst = y + j * rows * kPairFloats;
    for (int64_t ic = 0; ic < rows; ++ic) {
      const __m512 scale = _mm512_set1_ps(ic < c ? s[ic] : 0.0f);
      for (int64_t o = 0; o < kPairFloats; o += kB)
        _mm512_storeu_ps(dst + ic * kPairFloats + o, _mm512_mul_ps(_mm512_loadu_ps(src + ic * kPairFloats + o), scale));
    }
  }
}

void blocked_global_average_pool_avx512(const float* x, int64_t c, int64_t positions, float* y, int64_t u0,
                                        int64_t u1) {
  const int64_t cb = channel_blocks(c);
  const __m512 inv = _mm512_set1_ps(1.0f / static_cast<float>(positions));
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / cb, block = u % cb;
    const float* src = x + u * positions * kB;
    // Four partial sums: four independent add chains.
    __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
    int64_t p = 0;
    for (; p + 4 <= positions; p += 4)
      for (int i = 0; i < 4; ++i) acc[i] = _mm512_add_ps(acc[i], _mm512_loadu_ps(src + (p + i) * kB));
    for (; p < positions; ++p) acc[0] = _mm512_add_ps(acc[0], _mm512_loadu_ps(src + p * kB));
    const __m512 sum = _mm512_add_ps(_mm512_add_ps(acc[0], acc[1]), _mm512_add_ps(acc[2], acc[3]));
    _mm512_mask_storeu_ps(y + image * c + block * kB, block_mask(block, c), _mm512_mul_ps(sum, inv));
  }
}

// ---- depthwise ---------------------------------------------------------------------------

namespace {

struct DwRow {
  const ConvGeometry2d* g;
  const float* x;  // the input plane
  const float* w;  // the block's packed taps
  __m512 bias;
  const float* residual;  // the output row, or null
  float* y;               // the output row
  int64_t ky0, ky1;       // taps whose input row exists
  int64_t iy0;            // input row of tap 0
  __mmask16 real;
};

// V output positions from ox, every tap inside the input row. KH/KW/S = 0: from the geometry.
template <int KH, int KW, int S, int V, Activation A>
inline void dw_interior(const DwRow& r, int64_t ox, const ActivationParams512& k) {
  const ConvGeometry2d& g = *r.g;
  const int64_t kw = KW ? KW : g.kw;
  const int64_t s = S ? S : g.sw;
  __m512 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = r.bias;
  for (int64_t ky = r.ky0; ky < r.ky1; ++ky) {
    const float* row = r.x + ((r.iy0 + ky) * g.iw + ox * s - g.pw) * kB;
    const float* wrow = r.w + ky * kw * kB;
    for (int64_t kx = 0; kx < kw; ++kx) {
      const __m512 wv = _mm512_loadu_ps(wrow + kx * kB);
      for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(_mm512_loadu_ps(row + (v * s + kx) * kB), wv, acc[v]);
    }
  }
  for (int v = 0; v < V; ++v)
    store_out<A>(acc[v], r.residual ? r.residual + (ox + v) * kB : nullptr, r.y + (ox + v) * kB, r.real, k);
}

// One output position whose window may leave the input row.
template <Activation A>
inline void dw_border(const DwRow& r, int64_t ox, const ActivationParams512& k) {
  const ConvGeometry2d& g = *r.g;
  __m512 acc = r.bias;
  const int64_t ix0 = ox * g.sw - g.pw;
  const int64_t kx0 = std::max<int64_t>(0, -ix0), kx1 = std::min(g.kw, g.iw - ix0);
  for (int64_t ky = r.ky0; ky < r.ky1; ++ky) {
    const float* row = r.x + (r.iy0 + ky) * g.iw * kB;
    for (int64_t kx = kx0; kx < kx1; ++kx)
      acc = _mm512_fmadd_ps(_mm512_loadu_ps(row + (ix0 + kx) * kB), _mm512_loadu_ps(r.w + (ky * g.kw + kx) * kB), acc);
  }
  store_out<A>(acc, r.residual ? r.residual + ox * kB : nullptr, r.y + ox * kB, r.real, k);
}

// Small planes under 5x5 unit-stride kernels (a padded plane of at most kDwPaddedFloats) are
// copied into a zero-padded plane first, so that every output position takes the interior
// path: on a 7x7 image four of the seven columns would otherwise be border positions, one at
// a time. One core, SiLU: 1152 channels 7x7 86 -> 78 us, 672 at 14x14 160 -> 140 us; 3x3
// kernels and stride 2 measured 5-15% slower padded (the copy outweighs fewer border taps).
constexpr int64_t kDwPaddedFloats = 16384;  // 64 KiB, on the stack

template <int KH, int KW, int S, Activation A>
void dw_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams512 k(*a.act);
  const int64_t blocks = channel_blocks(a.m);
  const int64_t taps = g.kh * g.kw;
  // Output columns whose whole window lies inside the input row: [lo, hi).
  const int64_t lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
  const int64_t hi = std::max(lo, std::min(g.ow, g.iw - g.kw + g.pw >= 0 ? (g.iw - g.kw + g.pw) / g.sw + 1 : 0));
  // The padded plane covers every tap of every output: rows (oh - 1) * sh + kh, columns
  // (ow - 1) * sw + kw, input (0, 0) at (ph, pw).
  ConvGeometry2d gp = g;
  gp.ih = (g.oh - 1) * g.sh + g.kh;
  gp.iw = (g.ow - 1) * g.sw + g.kw;
  gp.ph = gp.pw = 0;
  const bool padded = (lo > 0 || hi < g.ow) && g.kh * g.kw >= 25 && g.sw == 1 && gp.ih * gp.iw * kB <= kDwPaddedFloats;
  alignas(64) float pad[kDwPaddedFloats];
  int64_t padded_plane = -1;
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t plane = row / g.oh, oy = row % g.oh;
    const int64_t block = plane % blocks;
    DwRow r;
    r.g = &g;
    r.x = a.x + plane * g.ih * g.iw * kB;
    r.w = a.w + block * taps * kB;
    r.bias = a.bias ? _mm512_loadu_ps(a.bias + block * kB) : _mm512_setzero_ps();
    const int64_t yoff = (plane * g.oh + oy) * g.ow * kB;
    r.residual = a.residual ? a.residual + yoff : nullptr;
    r.y = a.y + yoff;
    r.real = block_mask(block, a.m);
    if (padded) {
      if (plane != padded_plane) {
        const __m512 zero = _mm512_setzero_ps();
        for (int64_t i = 0; i < gp.ih; ++i) {
          const int64_t iy = i - g.ph;
          float* dst = pad + i * gp.iw * kB;
          for (int64_t j = 0; j < gp.iw; ++j) {
            const int64_t ix = j - g.pw;
            const bool inside = iy >= 0 && iy < g.ih && ix >= 0 && ix < g.iw;
            _mm512_store_ps(dst + j * kB, inside ? _mm512_loadu_ps(r.x + (iy * g.iw + ix) * kB) : zero);
          }
        }
        padded_plane = plane;
      }
      r.g = &gp;
      r.x = pad;
      r.iy0 = oy * g.sh;
      r.ky0 = 0;
      r.ky1 = g.kh;
      int64_t ox = 0;
      for (; ox + 8 <= g.ow; ox += 8) dw_interior<KH, KW, S, 8, A>(r, ox, k);
      if (ox + 4 <= g.ow) {
        dw_interior<KH, KW, S, 4, A>(r, ox, k);
        ox += 4;
      }
      for (; ox < g.ow; ++ox) dw_interior<KH, KW, S, 1, A>(r, ox, k);
      continue;
    }
    r.iy0 = oy * g.sh - g.ph;
    r.ky0 = std::max<int64_t>(0, -r.iy0);
    r.ky1 = std::min(g.kh, g.ih - r.iy0);
    int64_t ox = 0;
    for (; ox < lo; ++ox) dw_border<A>(r, ox, k);
    for (; ox + 8 <= hi; ox += 8) dw_interior<KH, KW, S, 8, A>(r, ox, k);
    if (ox + 4 <= hi) {
      dw_interior<KH, KW, S, 4, A>(r, ox, k);
      ox += 4;
    }
    for (; ox < hi; ++ox) dw_interior<KH, KW, S, 1, A>(r, ox, k);
    for (; ox < g.ow; ++ox) dw_border<A>(r, ox, k);
  }
}

// Taps [k0, k1) of a kernel of k taps dilated by d whose input index i0 + tap * d lies in [0, n).
inline void dw_dilated_taps(int64_t i0, int64_t d, int64_t k, int64_t n, int64_t& k0, int64_t& k1) {
  k0 = i0 >= 0 ? 0 : (-i0 + d - 1) / d;
  k1 = i0 > n - 1 ? 0 : std::min(k, (n - 1 - i0) / d + 1);
  k0 = std::min(k0, k1);
}

// V output positions from ox of a dilated kernel over a zero-padded plane (every tap inside):
// V independent accumulators, so the multiply-adds of neighbouring positions overlap.
template <int V, Activation A>
inline void dw_dilated_padded(const ConvGeometry2d& g, const float* plane, int64_t plane_w, const float* w,
                              __m512 bias, const float* residual, float* y, __mmask16 real, int64_t oy, int64_t ox,
                              const ActivationParams512& k) {
  __m512 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = bias;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const float* row = plane + ((oy * g.sh + ky * g.dh) * plane_w + ox * g.sw) * kB;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const __m512 wv = _mm512_loadu_ps(w + (ky * g.kw + kx) * kB);
      const float* at = row + kx * g.dw * kB;
      for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(_mm512_load_ps(at + v * g.sw * kB), wv, acc[v]);
    }
  }
  for (int v = 0; v < V; ++v)
    store_out<A>(acc[v], residual ? residual + (ox + v) * kB : nullptr, y + (ox + v) * kB, real, k);
}

// Dilated kernels (DeepLabV3's backbone tail: 5x5 with dilation 2 on 14x14). Planes whose
// zero-padded copy fits kDwPaddedFloats are copied once per thread and plane, and every
// position then takes all taps, eight positions at a time (on 14x14 most positions' windows
// leave the plane, so the border path would do most of the work one position at a time).
// Larger planes go one position at a time over the taps whose input exists.
template <Activation A>
void dw_rows_dilated(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams512 k(*a.act);
  const int64_t blocks = channel_blocks(a.m);
  const int64_t taps = g.kh * g.kw;
  const int64_t plane_h = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1;
  const int64_t plane_w = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1;
  const bool padded = plane_h * plane_w * kB <= kDwPaddedFloats;
  alignas(64) float pad[kDwPaddedFloats];
  int64_t padded_plane = -1;
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t plane = row / g.oh, oy = row % g.oh;
    const int64_t block = plane % blocks;
    const float* x = a.x + plane * g.ih * g.iw * kB;
    const float* w = a.w + block * taps * kB;
    const __m512 bias = a.bias ? _mm512_loadu_ps(a.bias + block * kB) : _mm512_setzero_ps();
    const int64_t yoff = (plane * g.oh + oy) * g.ow * kB;
    const float* residual = a.residual ? a.residual + yoff : nullptr;
    float* y = a.y + yoff;
    const __mmask16 real = block_mask(block, a.m);
    if (padded) {
      if (plane != padded_plane) {
        const __m512 zero = _mm512_setzero_ps();
        for (int64_t i = 0; i < plane_h; ++i) {
          const int64_t iy = i - g.ph;
          for (int64_t j = 0; j < plane_w; ++j) {
            const int64_t ix = j - g.pw;
            const bool inside = iy >= 0 && iy < g.ih && ix >= 0 && ix < g.iw;
            _mm512_store_ps(pad + (i * plane_w + j) * kB, inside ? _mm512_loadu_ps(x + (iy * g.iw + ix) * kB) : zero);
          }
        }
        padded_plane = plane;
      }
      int64_t ox = 0;
      for (; ox + 8 <= g.ow; ox += 8)
        dw_dilated_padded<8, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k);
      if (ox + 4 <= g.ow) {
        dw_dilated_padded<4, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k);
        ox += 4;
      }
      for (; ox < g.ow; ++ox) dw_dilated_padded<1, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k);
      continue;
    }
    const int64_t iy0 = oy * g.sh - g.ph;
    int64_t ky0 = 0, ky1 = 0;
    dw_dilated_taps(iy0, g.dh, g.kh, g.ih, ky0, ky1);
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t ix0 = ox * g.sw - g.pw;
      int64_t kx0 = 0, kx1 = 0;
      dw_dilated_taps(ix0, g.dw, g.kw, g.iw, kx0, kx1);
      __m512 acc = bias;
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        const float* xrow = x + ((iy0 + ky * g.dh) * g.iw + ix0) * kB;
        for (int64_t kx = kx0; kx < kx1; ++kx)
          acc = _mm512_fmadd_ps(_mm512_loadu_ps(xrow + kx * g.dw * kB), _mm512_loadu_ps(w + (ky * g.kw + kx) * kB),
                                acc);
      }
      store_out<A>(acc, residual ? residual + ox * kB : nullptr, y + ox * kB, real, k);
    }
  }
}

template <Activation A>
void dw_select(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  if (g.dh != 1 || g.dw != 1) return dw_rows_dilated<A>(g, a, r0, r1);
  if (g.kh == 3 && g.kw == 3 && g.sw == 1) return dw_rows<3, 3, 1, A>(g, a, r0, r1);
  if (g.kh == 3 && g.kw == 3 && g.sw == 2) return dw_rows<3, 3, 2, A>(g, a, r0, r1);
  if (g.kh == 5 && g.kw == 5 && g.sw == 1) return dw_rows<5, 5, 1, A>(g, a, r0, r1);
  if (g.kh == 5 && g.kw == 5 && g.sw == 2) return dw_rows<5, 5, 2, A>(g, a, r0, r1);
  return dw_rows<0, 0, 0, A>(g, a, r0, r1);
}

}  // namespace

void blocked_depthwise_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { dw_select<A>(g, a, r0, r1); });
}

// ---- plain input (stems) -----------------------------------------------------------------
//
// A convolution with few input channels (an image's 3) read from the plain NCHW input and
// written blocked: the pointwise tile's shape (12 output positions x 32 channels) with the
// c * kh * kw taps as its depth, each tap broadcasting the input value under each position.
// Positions whose window leaves the input take a per-position path that skips missing taps.

namespace {

struct PlainRow {
  const ConvGeometry2d* g = nullptr;
  const BlockedConvArgs* a = nullptr;
  int64_t image = 0, oy = 0, iy0 = 0, ky0 = 0, ky1 = 0;
  // The taps whose input row exists: input offset (from the image's first channel, at the
  // row's first window column) and packed-weight row.
  int64_t taps = 0;
  int64_t x_off[kBlockedPlainMaxTaps], w_row[kBlockedPlainMaxTaps];
};

template <int P, int NB, Activation A>
inline void plain_store(const PlainRow& r, int64_t ox, int64_t j, __m512 (&acc)[P][NB], const ActivationParams512& k) {
  const ConvGeometry2d& g = *r.g;
  const BlockedConvArgs& a = *r.a;
  const int64_t plane = g.oh * g.ow * kB;
  const int64_t blocks = channel_blocks(a.m);
  for (int b = 0; b < NB; ++b) {
    const int64_t block = 2 * j + b;
    const int64_t off = (r.image * blocks + block) * plane + (r.oy * g.ow + ox) * kB;
    for (int p = 0; p < P; ++p)
      store_out<A>(acc[p][b], a.residual ? a.residual + off + p * kB : nullptr, a.y + off + p * kB,
                   block_mask(block, a.m), k);
  }
}

template <int NB>
inline void plain_bias(const BlockedConvArgs& a, int64_t j, __m512* bias) {
  for (int b = 0; b < NB; ++b)
    bias[b] = a.bias ? _mm512_loadu_ps(a.bias + j * kPairFloats + b * kB) : _mm512_setzero_ps();
}

// kTileP positions from ox, every tap inside the input row; S = the column stride.
template <int NB, int S, Activation A>
void plain_tile(const PlainRow& r, int64_t ox, int64_t j, const ActivationParams512& k) {
  const BlockedConvArgs& a = *r.a;
  const float* w = a.w + j * a.c * r.g->kh * r.g->kw * kPairFloats;
  const float* x = a.x + ox * S;
  __m512 bias[NB];
  plain_bias<NB>(a, j, bias);
  __m512 acc[kTileP][NB];
  for (int p = 0; p < kTileP; ++p)
    for (int b = 0; b < NB; ++b) acc[p][b] = bias[b];
  for (int64_t t = 0; t < r.taps; ++t) {
    const float* xt = x + r.x_off[t];
    const float* wt = w + r.w_row[t] * kPairFloats;
    __m512 wv[NB];
    for (int b = 0; b < NB; ++b) wv[b] = _mm512_loadu_ps(wt + b * kB);
    for (int p = 0; p < kTileP; ++p) {
      const __m512 xv = _mm512_set1_ps(xt[p * S]);
      for (int b = 0; b < NB; ++b) acc[p][b] = _mm512_fmadd_ps(xv, wv[b], acc[p][b]);
    }
  }
  plain_store<kTileP, NB, A>(r, ox, j, acc, k);
}

// One position whose window may leave the input row.
template <int NB, Activation A>
void plain_edge(const PlainRow& r, int64_t ox, int64_t j, const ActivationParams512& k) {
  const ConvGeometry2d& g = *r.g;
  const BlockedConvArgs& a = *r.a;
  const float* w = a.w + j * a.c * g.kh * g.kw * kPairFloats;
  __m512 acc[1][NB];
  plain_bias<NB>(a, j, acc[0]);
  const int64_t ix0 = ox * g.sw - g.pw;
  for (int64_t t = 0; t < r.taps; ++t) {
    const int64_t kx = r.w_row[t] % g.kw;
    if (ix0 + kx < 0 || ix0 + kx >= g.iw) continue;
    const __m512 xv = _mm512_set1_ps(a.x[r.x_off[t] + ox * g.sw]);
    for (int b = 0; b < NB; ++b)
      acc[0][b] = _mm512_fmadd_ps(xv, _mm512_loadu_ps(w + r.w_row[t] * kPairFloats + b * kB), acc[0][b]);
  }
  plain_store<1, NB, A>(r, ox, j, acc, k);
}

template <Activation A>
void plain_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams512 k(*a.act);
  const int64_t blocks = channel_blocks(a.m), pairs = (blocks + 1) / 2;
  // Output columns whose window lies inside the input row: [lo, hi).
  const int64_t lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
  const int64_t hi = std::max(lo, std::min(g.ow, g.iw - g.kw + g.pw >= 0 ? (g.iw - g.kw + g.pw) / g.sw + 1 : 0));
  for (int64_t row = r0; row < r1; ++row) {
    PlainRow r;
    r.g = &g;
    r.a = &a;
    r.image = row / g.oh;
    r.oy = row % g.oh;
    r.iy0 = r.oy * g.sh - g.ph;
    r.ky0 = std::max<int64_t>(0, -r.iy0);
    r.ky1 = std::min(g.kh, g.ih - r.iy0);
    for (int64_t c = 0; c < a.c; ++c)
      for (int64_t ky = r.ky0; ky < r.ky1; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          r.x_off[r.taps] = ((r.image * a.c + c) * g.ih + r.iy0 + ky) * g.iw - g.pw + kx;
          r.w_row[r.taps++] = (c * g.kh + ky) * g.kw + kx;
        }
    for (int64_t j = 0; j < pairs; ++j) {
      const bool two = 2 * j + 1 < blocks;
      auto edge = [&](int64_t ox) {
        if (two)
          plain_edge<2, A>(r, ox, j, k);
        else
          plain_edge<1, A>(r, ox, j, k);
      };
      auto tile = [&]<int S>(int64_t ox) {
        if (two)
          plain_tile<2, S, A>(r, ox, j, k);
        else
          plain_tile<1, S, A>(r, ox, j, k);
      };
      int64_t ox = 0;
      for (; ox < lo; ++ox) edge(ox);
      for (; ox + kTileP <= hi; ox += kTileP) {
        if (g.sw == 1)
          tile.template operator()<1>(ox);
        else if (g.sw == 2)
          tile.template operator()<2>(ox);
        else
          for (int64_t q = ox; q < ox + kTileP; ++q) edge(q);
      }
      for (; ox < g.ow; ++ox) edge(ox);
    }
  }
}

}  // namespace

void blocked_plain_avx512(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { plain_rows<A>(g, a, r0, r1); });
}

}  // namespace ignis::kernels::x86
