// SPDX-License-Identifier: Apache-2.0
// AVX2 kernels on the blocked channel layout (see conv_blocked.h for the layout and why): the
// same 16-channel blocks as the AVX-512 kernels, each held as two 8-lane vectors (Block16), so
// that a model's plan is the same on both instruction sets and only the kernels differ.
//
// Pointwise: a GEMM tile of 6 positions x 16 output channels (12 accumulators, the register
// file's 16 less the two weight vectors and one broadcast). Per input channel it broadcasts
// one float of each position straight from the blocked input against the two weight vectors
// of the block: 8 loads for 12 FMAs. A pair of output blocks (the packing's unit, shared with
// AVX-512) runs as two tiles over the same 6 positions, whose input stays in L1.
//
// Depthwise: per output row, 16 channels at 4 consecutive output positions (eight FMA
// chains), each tap two loads of the input at its position and two FMAs with the tap's
// weights. Border positions and dilated kernels go as in the AVX-512 file.
//
// Each output value sums the same products in the same order as the AVX-512 kernel does (bias,
// then input channels or taps in order).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_blocked.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kB = kChannelBlock;
constexpr int kTileP = 6;
// As in the AVX-512 tile: weights prefetched 16 depth steps ahead (the first position tile
// reads each layer's weights from L3).
constexpr int64_t kWeightPrefetch = 512;

// One 16-channel block of a position: lanes 0-7 and 8-15.
struct Block16 {
  __m256 lo, hi;
};

inline Block16 load16(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
inline Block16 zero16() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
inline Block16 fmadd16(Block16 a, Block16 b, Block16 c) {
  return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)};
}
inline Block16 fmadd16(__m256 a, Block16 b, Block16 c) {
  return {_mm256_fmadd_ps(a, b.lo, c.lo), _mm256_fmadd_ps(a, b.hi, c.hi)};
}
inline Block16 add16(Block16 a, Block16 b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
inline Block16 mul16(Block16 a, Block16 b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
inline void store16(float* p, Block16 v) {
  _mm256_storeu_ps(p, v.lo);
  _mm256_storeu_ps(p + 8, v.hi);
}

// The lanes of output block `block` that hold real channels (m channels in all), as all-ones
// floats; `full` when all 16 do.
struct RealLanes {
  __m256 lo, hi;
  bool full;
};

inline RealLanes real_lanes(int64_t block, int64_t m) {
  const int64_t n = std::clamp<int64_t>(m - block * kB, 0, kB);
  return {_mm256_castsi256_ps(lane_mask(static_cast<int>(std::min<int64_t>(n, 8)))),
          _mm256_castsi256_ps(lane_mask(static_cast<int>(std::max<int64_t>(n - 8, 0)))), n == kB};
}

// act(v + residual), the padded lanes zeroed, stored at y.
template <Activation A>
inline void store_out(Block16 v, const float* residual, float* y, const RealLanes& real, const ActivationParams256& k) {
  if (residual) v = add16(v, load16(residual));
  v.lo = activate_avx2<A>(v.lo, k);
  v.hi = activate_avx2<A>(v.hi, k);
  if (!real.full) {
    v.lo = _mm256_and_ps(v.lo, real.lo);
    v.hi = _mm256_and_ps(v.hi, real.hi);
  }
  store16(y, v);
}

// The stores of N consecutive positions' sums (acc[i] at y + i * 16). The transcendental
// activations are kept out of line: inlined into a tile, their constants and temporaries took
// registers from the 12 accumulators, and GCC spilled the multiply-add loop to the stack (SiLU
// pointwise layers ran 2.5x slower than with Relu). The sums go by value, so that the tile's
// accumulators never have their address taken (that too kept them in memory).
template <Activation A>
constexpr bool kOutlinedActivation =
    A == Activation::Sigmoid || A == Activation::SiLU || A == Activation::Gelu || A == Activation::GeluTanh;

template <int N>
struct Sums {
  Block16 v[N];
};

template <Activation A, int N>
[[gnu::noinline]] void store_run_outlined(Sums<N> acc, const float* residual, float* y, RealLanes real,
                                          ActivationParams256 k) {
  for (int i = 0; i < N; ++i) store_out<A>(acc.v[i], residual ? residual + i * kB : nullptr, y + i * kB, real, k);
}

template <Activation A, int N>
inline void store_run(const Block16 (&acc)[N], const float* residual, float* y, const RealLanes& real,
                      const ActivationParams256& k) {
  if constexpr (kOutlinedActivation<A>) {
    Sums<N> sums;
    for (int i = 0; i < N; ++i) sums.v[i] = acc[i];
    store_run_outlined<A, N>(sums, residual, y, real, k);
  } else {
    for (int i = 0; i < N; ++i) store_out<A>(acc[i], residual ? residual + i * kB : nullptr, y + i * kB, real, k);
  }
}

inline Block16 bias_of(const float* bias, int64_t offset) { return bias ? load16(bias + offset) : zero16(); }

}  // namespace

// ---- reorders ----------------------------------------------------------------------------

// Eight positions at a time: each half block (8 channels) x 8 positions is one 8x8 transpose.
void block_channels_avx2(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1) {
  const int64_t cb = channel_blocks(c);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / cb, block = u % cb;
    const int64_t c0 = block * kB, count = std::min(kB, c - c0);
    const float* src = x + (image * c + c0) * hw;
    float* dst = y + u * hw * kB;
    for (int64_t p = 0; p < hw; p += 8) {
      const int n = static_cast<int>(std::min<int64_t>(8, hw - p));
      const __m256i m = lane_mask(n);
      for (int64_t half = 0; half < 2; ++half) {
        __m256 r[8];
        for (int64_t l = 0; l < 8; ++l) {
          const int64_t ch = half * 8 + l;
          r[l] = ch < count ? _mm256_maskload_ps(src + ch * hw + p, m) : _mm256_setzero_ps();
        }
        transpose8(r);
        for (int i = 0; i < n; ++i) _mm256_storeu_ps(dst + (p + i) * kB + half * 8, r[i]);
      }
    }
  }
}

void unblock_channels_avx2(const float* x, int64_t c, int64_t hw, float* y, int64_t u0, int64_t u1) {
  const int64_t cb = channel_blocks(c);
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / cb, block = u % cb;
    const int64_t c0 = block * kB, count = std::min(kB, c - c0);
    const float* src = x + u * hw * kB;
    float* dst = y + (image * c + c0) * hw;
    for (int64_t p = 0; p < hw; p += 8) {
      const int n = static_cast<int>(std::min<int64_t>(8, hw - p));
      const __m256i m = lane_mask(n);
      for (int64_t half = 0; half * 8 < count; ++half) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i) r[i] = i < n ? _mm256_loadu_ps(src + (p + i) * kB + half * 8) : _mm256_setzero_ps();
        transpose8(r);
        for (int64_t l = 0; l < 8 && half * 8 + l < count; ++l) {
          float* out = dst + (half * 8 + l) * hw + p;
          if (n == 8)
            _mm256_storeu_ps(out, r[l]);
          else
            _mm256_maskstore_ps(out, m, r[l]);
        }
      }
    }
  }
}

// ---- pointwise ---------------------------------------------------------------------------

namespace {

// P positions x output block b (0 or 1) of pair `pair`. x at the tile's first position in
// input block 0, w at the pair's packed weights, y / residual at the tile's first position in
// the output block. The padded lanes of a last, partial input block are skipped (their
// weights are zero: the real channels' products and their order are unchanged), and with
// kHalf (an output block of at most 8 real channels, e.g. the second block of 24) only the low
// 8 output lanes are computed: mobilenet_v2's 24-channel layers otherwise spent a quarter and
// a third of their multiply-adds on padding.
template <int P, Activation A, bool kHalf>
void pointwise_tile(const BlockedConvArgs& a, int64_t xbs, const float* x, const float* w, int64_t pair, int b,
                    const float* residual, float* y, const ActivationParams256& k) {
  Block16 acc[P];
  const Block16 bias = bias_of(a.bias, pair * kPairFloats + b * kB);
  for (int p = 0; p < P; ++p) acc[p] = bias;
  const int64_t cb = channel_blocks(a.c);
  const int rest = static_cast<int>(a.c - (cb - 1) * kB);  // real lanes of the last input block
  const float* wcol = w + b * kB;
  for (int64_t blk = 0; blk < cb; ++blk) {
    const float* xb = x + blk * xbs;
    const float* wb = wcol + blk * kB * kPairFloats;
    const int lanes = blk + 1 < cb ? static_cast<int>(kB) : rest;
    for (int l = 0; l < lanes; ++l) {
      _mm_prefetch(reinterpret_cast<const char*>(wb + l * kPairFloats + kWeightPrefetch), _MM_HINT_T0);
      if constexpr (kHalf) {
        const __m256 wv = _mm256_loadu_ps(wb + l * kPairFloats);
        for (int p = 0; p < P; ++p) acc[p].lo = _mm256_fmadd_ps(_mm256_broadcast_ss(xb + p * kB + l), wv, acc[p].lo);
      } else {
        const Block16 wv = load16(wb + l * kPairFloats);
        for (int p = 0; p < P; ++p) acc[p] = fmadd16(_mm256_broadcast_ss(xb + p * kB + l), wv, acc[p]);
      }
    }
  }
  store_run<A>(acc, residual, y, real_lanes(2 * pair + b, a.m), k);
}

template <int P, Activation A>
void pointwise_tile_of(bool half, const BlockedConvArgs& a, int64_t xbs, const float* x, const float* w, int64_t pair,
                       int b, const float* residual, float* y, const ActivationParams256& k) {
  if (half) pointwise_tile<P, A, true>(a, xbs, x, w, pair, b, residual, y, k);
  else pointwise_tile<P, A, false>(a, xbs, x, w, pair, b, residual, y, k);
}

template <Activation A>
void pointwise_tail(int p, bool half, const BlockedConvArgs& a, int64_t xbs, const float* x, const float* w,
                    int64_t pair, int b, const float* residual, float* y, const ActivationParams256& k) {
  switch (p) {
    case 1: return pointwise_tile_of<1, A>(half, a, xbs, x, w, pair, b, residual, y, k);
    case 2: return pointwise_tile_of<2, A>(half, a, xbs, x, w, pair, b, residual, y, k);
    case 3: return pointwise_tile_of<3, A>(half, a, xbs, x, w, pair, b, residual, y, k);
    case 4: return pointwise_tile_of<4, A>(half, a, xbs, x, w, pair, b, residual, y, k);
    case 5: return pointwise_tile_of<5, A>(half, a, xbs, x, w, pair, b, residual, y, k);
    default: return;
  }
}

template <Activation A>
void pointwise_range(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0, int64_t j1) {
  const ActivationParams256 k(*a.act);
  const int64_t xbs = positions * kB;
  const int64_t wpair = channel_blocks(a.c) * kB * kPairFloats;
  const int64_t out_blocks = channel_blocks(a.m);
  for (int64_t p = p0; p < p1; p += kTileP) {
    const int tp = static_cast<int>(std::min<int64_t>(kTileP, p1 - p));
    for (int64_t j = j0; j < j1; ++j)
      for (int b = 0; b < 2 && 2 * j + b < out_blocks; ++b) {
        const float* x = a.x + p * kB;
        const float* w = a.w + j * wpair;
        const int64_t yoff = (2 * j + b) * xbs + p * kB;
        const float* res = a.residual ? a.residual + yoff : nullptr;
        const bool half = a.m - (2 * j + b) * kB <= kB / 2;
        if (tp == kTileP)
          pointwise_tile_of<kTileP, A>(half, a, xbs, x, w, j, b, res, a.y + yoff, k);
        else
          pointwise_tail<A>(tp, half, a, xbs, x, w, j, b, res, a.y + yoff, k);
      }
  }
}

}  // namespace

void blocked_pointwise_avx2(const BlockedConvArgs& a, int64_t positions, int64_t p0, int64_t p1, int64_t j0,
                            int64_t j1) {
  with_activation(a.act->act, [&]<Activation A>() { pointwise_range<A>(a, positions, p0, p1, j0, j1); });
}

void blocked_scale_channels_avx2(const float* x, const float* s, int64_t c, int64_t positions, float* y, int64_t b0,
                                 int64_t b1) {
  for (int64_t b = b0; b < b1; ++b) {
    const int64_t n = std::clamp<int64_t>(c - b * kB, 0, kB);
    const Block16 scale = {
        _mm256_maskload_ps(s + b * kB, lane_mask(static_cast<int>(std::min<int64_t>(n, 8)))),
        n > 8 ? _mm256_maskload_ps(s + b * kB + 8, lane_mask(static_cast<int>(n - 8))) : _mm256_setzero_ps()};
    const float* src = x + b * positions * kB;
    float* dst = y + b * positions * kB;
    for (int64_t p = 0; p < positions; ++p) store16(dst + p * kB, mul16(load16(src + p * kB), scale));
  }
}

void blocked_pointwise_scale_weights_avx2(const float* packed, const float* s, int64_t c, float* y, int64_t j0,
                                          int64_t j1) {
  const int64_t rows = channel_blocks(c) * kB;  // packed input channels per pair
  for (int64_t j = j0; j < j1; ++j) {
    const float* src = packed + j * rows * kPairFloats;
    float* dst = y + j * rows * kPairFloats;
    for (int64_t ic = 0; ic < rows; ++ic) {
      const __m256 scale = _mm256_set1_ps(ic < c ? s[ic] : 0.0f);
      for (int64_t o = 0; o < kPairFloats; o += 8)
        _mm256_storeu_ps(dst + ic * kPairFloats + o, _mm256_mul_ps(_mm256_loadu_ps(src + ic * kPairFloats + o), scale));
    }
  }
}

void blocked_global_average_pool_avx2(const float* x, int64_t c, int64_t positions, float* y, int64_t u0, int64_t u1) {
  const int64_t cb = channel_blocks(c);
  const __m256 inv = _mm256_set1_ps(1.0f / static_cast<float>(positions));
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / cb, block = u % cb;
    const float* src = x + u * positions * kB;
    // Four partial sums per half, as the AVX-512 kernel keeps four: the same additions.
    Block16 acc[4] = {zero16(), zero16(), zero16(), zero16()};
    int64_t p = 0;
    for (; p + 4 <= positions; p += 4)
      for (int i = 0; i < 4; ++i) acc[i] = add16(acc[i], load16(src + (p + i) * kB));
    for (; p < positions; ++p) acc[0] = add16(acc[0], load16(src + p * kB));
    const Block16 sum = add16(add16(acc[0], acc[1]), add16(acc[2], acc[3]));
    const int64_t n = std::min(kB, c - block * kB);
    float* out = y + image * c + block * kB;
    _mm256_maskstore_ps(out, lane_mask(static_cast<int>(std::min<int64_t>(n, 8))), _mm256_mul_ps(sum.lo, inv));
    if (n > 8) _mm256_maskstore_ps(out + 8, lane_mask(static_cast<int>(n - 8)), _mm256_mul_ps(sum.hi, inv));
  }
}

// ---- depthwise ---------------------------------------------------------------------------

namespace {

struct DwRow {
  const ConvGeometry2d* g;
  const float* x;  // the input plane
  const float* w;  // the block's packed taps
  Block16 bias;
  const float* residual;  // the output row, or null
  float* y;               // the output row
  int64_t ky0, ky1;       // taps whose input row exists
  int64_t iy0;            // input row of tap 0
  RealLanes real;
};

// V output positions from ox, every tap inside the input row. KH/KW/S = 0: from the geometry.
template <int KH, int KW, int S, int V, Activation A>
inline void dw_interior(const DwRow& r, int64_t ox, const ActivationParams256& k) {
  const ConvGeometry2d& g = *r.g;
  const int64_t kw = KW ? KW : g.kw;
  const int64_t s = S ? S : g.sw;
  Block16 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = r.bias;
  for (int64_t ky = r.ky0; ky < r.ky1; ++ky) {
    const float* row = r.x + ((r.iy0 + ky) * g.iw + ox * s - g.pw) * kB;
    const float* wrow = r.w + ky * kw * kB;
    for (int64_t kx = 0; kx < kw; ++kx) {
      const Block16 wv = load16(wrow + kx * kB);
      for (int v = 0; v < V; ++v) acc[v] = fmadd16(load16(row + (v * s + kx) * kB), wv, acc[v]);
    }
  }
  store_run<A>(acc, r.residual ? r.residual + ox * kB : nullptr, r.y + ox * kB, r.real, k);
}

// One output position whose window may leave the input row.
template <Activation A>
inline void dw_border(const DwRow& r, int64_t ox, const ActivationParams256& k) {
  const ConvGeometry2d& g = *r.g;
  Block16 acc[1] = {r.bias};
  const int64_t ix0 = ox * g.sw - g.pw;
  const int64_t kx0 = std::max<int64_t>(0, -ix0), kx1 = std::min(g.kw, g.iw - ix0);
  for (int64_t ky = r.ky0; ky < r.ky1; ++ky) {
    const float* row = r.x + (r.iy0 + ky) * g.iw * kB;
    for (int64_t kx = kx0; kx < kx1; ++kx)
      acc[0] = fmadd16(load16(row + (ix0 + kx) * kB), load16(r.w + (ky * g.kw + kx) * kB), acc[0]);
  }
  store_run<A>(acc, r.residual ? r.residual + ox * kB : nullptr, r.y + ox * kB, r.real, k);
}

// Output positions [ox, end) of a row, all interior: four at a time, the rest together (a 7x7
// plane's rows are 4 + 3: one position at a time, each tap's chain of FMAs waits on the last).
template <int KH, int KW, int S, Activation A>
inline void dw_interior_run(const DwRow& r, int64_t ox, int64_t end, const ActivationParams256& k) {
  for (; ox + 4 <= end; ox += 4) dw_interior<KH, KW, S, 4, A>(r, ox, k);
  switch (end - ox) {
    case 3: return dw_interior<KH, KW, S, 3, A>(r, ox, k);
    case 2: return dw_interior<KH, KW, S, 2, A>(r, ox, k);
    case 1: return dw_interior<KH, KW, S, 1, A>(r, ox, k);
    default: return;
  }
}

// As in the AVX-512 file: small planes under 5x5 unit-stride kernels are copied into a
// zero-padded plane first, so that every output position takes the interior path.
constexpr int64_t kDwPaddedFloats = 16384;  // 64 KiB, on the stack

// Copies the input plane x (ih x iw blocks) into pad (plane_h x plane_w blocks, input (0, 0)
// at (ph, pw)), zero outside the input.
inline void pad_plane(const ConvGeometry2d& g, const float* x, int64_t plane_h, int64_t plane_w, float* pad) {
  const Block16 zero = zero16();
  for (int64_t i = 0; i < plane_h; ++i) {
    const int64_t iy = i - g.ph;
    for (int64_t j = 0; j < plane_w; ++j) {
      const int64_t ix = j - g.pw;
      const bool inside = iy >= 0 && iy < g.ih && ix >= 0 && ix < g.iw;
      store16(pad + (i * plane_w + j) * kB, inside ? load16(x + (iy * g.iw + ix) * kB) : zero);
    }
  }
}

template <int KH, int KW, int S, Activation A>
void dw_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams256 k(*a.act);
  const int64_t blocks = channel_blocks(a.m);
  const int64_t taps = g.kh * g.kw;
  // Output columns whose whole window lies inside the input row: [lo, hi).
  const int64_t lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
  const int64_t hi = std::max(lo, std::min(g.ow, g.iw - g.kw + g.pw >= 0 ? (g.iw - g.kw + g.pw) / g.sw + 1 : 0));
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
    r.bias = bias_of(a.bias, block * kB);
    const int64_t yoff = (plane * g.oh + oy) * g.ow * kB;
    r.residual = a.residual ? a.residual + yoff : nullptr;
    r.y = a.y + yoff;
    r.real = real_lanes(block, a.m);
    if (padded) {
      if (plane != padded_plane) {
        pad_plane(g, r.x, gp.ih, gp.iw, pad);
        padded_plane = plane;
      }
      r.g = &gp;
      r.x = pad;
      r.iy0 = oy * g.sh;
      r.ky0 = 0;
      r.ky1 = g.kh;
      dw_interior_run<KH, KW, S, A>(r, 0, g.ow, k);
      continue;
    }
    r.iy0 = oy * g.sh - g.ph;
    r.ky0 = std::max<int64_t>(0, -r.iy0);
    r.ky1 = std::min(g.kh, g.ih - r.iy0);
    int64_t ox = 0;
    for (; ox < lo; ++ox) dw_border<A>(r, ox, k);
    dw_interior_run<KH, KW, S, A>(r, lo, hi, k);
    for (ox = hi; ox < g.ow; ++ox) dw_border<A>(r, ox, k);
  }
}

// Taps [k0, k1) of a kernel of k taps dilated by d whose input index i0 + tap * d lies in [0, n).
inline void dw_dilated_taps(int64_t i0, int64_t d, int64_t k, int64_t n, int64_t& k0, int64_t& k1) {
  k0 = i0 >= 0 ? 0 : (-i0 + d - 1) / d;
  k1 = i0 > n - 1 ? 0 : std::min(k, (n - 1 - i0) / d + 1);
  k0 = std::min(k0, k1);
}

// V output positions from ox of a dilated kernel over a zero-padded plane (every tap inside).
template <int V, Activation A>
inline void dw_dilated_padded(const ConvGeometry2d& g, const float* plane, int64_t plane_w, const float* w,
                              Block16 bias, const float* residual, float* y, const RealLanes& real, int64_t oy,
                              int64_t ox, const ActivationParams256& k) {
  Block16 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = bias;
  for (int64_t ky = 0; ky < g.kh; ++ky) {
    const float* row = plane + ((oy * g.sh + ky * g.dh) * plane_w + ox * g.sw) * kB;
    for (int64_t kx = 0; kx < g.kw; ++kx) {
      const Block16 wv = load16(w + (ky * g.kw + kx) * kB);
      const float* at = row + kx * g.dw * kB;
      for (int v = 0; v < V; ++v) acc[v] = fmadd16(load16(at + v * g.sw * kB), wv, acc[v]);
    }
  }
  store_run<A>(acc, residual ? residual + ox * kB : nullptr, y + ox * kB, real, k);
}

template <Activation A>
void dw_rows_dilated(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams256 k(*a.act);
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
    const Block16 bias = bias_of(a.bias, block * kB);
    const int64_t yoff = (plane * g.oh + oy) * g.ow * kB;
    const float* residual = a.residual ? a.residual + yoff : nullptr;
    float* y = a.y + yoff;
    const RealLanes real = real_lanes(block, a.m);
    if (padded) {
      if (plane != padded_plane) {
        pad_plane(g, x, plane_h, plane_w, pad);
        padded_plane = plane;
      }
      int64_t ox = 0;
      for (; ox + 4 <= g.ow; ox += 4)
        dw_dilated_padded<4, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k);
      switch (g.ow - ox) {
        case 3: dw_dilated_padded<3, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k); break;
        case 2: dw_dilated_padded<2, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k); break;
        case 1: dw_dilated_padded<1, A>(g, pad, plane_w, w, bias, residual, y, real, oy, ox, k); break;
        default: break;
      }
      continue;
    }
    const int64_t iy0 = oy * g.sh - g.ph;
    int64_t ky0 = 0, ky1 = 0;
    dw_dilated_taps(iy0, g.dh, g.kh, g.ih, ky0, ky1);
    for (int64_t ox = 0; ox < g.ow; ++ox) {
      const int64_t ix0 = ox * g.sw - g.pw;
      int64_t kx0 = 0, kx1 = 0;
      dw_dilated_taps(ix0, g.dw, g.kw, g.iw, kx0, kx1);
      Block16 acc[1] = {bias};
      for (int64_t ky = ky0; ky < ky1; ++ky) {
        const float* xrow = x + ((iy0 + ky * g.dh) * g.iw + ix0) * kB;
        for (int64_t kx = kx0; kx < kx1; ++kx)
          acc[0] = fmadd16(load16(xrow + kx * g.dw * kB), load16(w + (ky * g.kw + kx) * kB), acc[0]);
      }
      store_run<A>(acc, residual ? residual + ox * kB : nullptr, y + ox * kB, real, k);
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

void blocked_depthwise_avx2(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { dw_select<A>(g, a, r0, r1); });
}

// ---- windows: plain input (stems) and blocked input (dense and grouped) -------------------
//
// As in the AVX-512 file, with the pointwise tile's AVX2 shape: 6 output positions x one block
// of 16 channels, the taps (input channel, ky, kx) as its depth: per tap one broadcast of each
// position's input against the tap's 16 weights. A stem reads plain NCHW input (a tap is one
// float of a channel plane; positions kw apart are sw floats apart); a dense or grouped
// convolution reads blocked input (a tap is one lane of an input block's position; positions
// are sw * 16 floats apart). Both take W packed as the stem is (conv_blocked_pack.cc): per pair
// of output blocks, a row of 32 weights per tap. Stems list only a row's taps whose input row
// exists, and columns whose window leaves the input row go one position at a time; the others
// read a zero-padded copy of their input (blocked_pad_planes), so that every position, small
// planes' included, runs in tiles (of 1 to 6 positions at a row's end).

namespace {

// The taps of one output row (conv_blocked.h); a stem's lists only the input rows that exist.
using WindowRow = BlockedWindowRow;

template <int P, Activation A>
inline void window_store(const WindowRow& r, int64_t ox, int64_t block, const Block16 (&acc)[P],
                         const ActivationParams256& k) {
  const ConvGeometry2d& g = *r.g;
  const BlockedConvArgs& a = *r.a;
  const int64_t off = (r.image * channel_blocks(a.m) + block) * g.oh * g.ow * kB + (r.oy * g.ow + ox) * kB;
  store_run<A>(acc, a.residual ? a.residual + off : nullptr, a.y + off, real_lanes(block, a.m), k);
}

// P output positions from ox whose taps all lie inside the input (a stem's row, or a padded
// input); S = the column stride in floats (0: r.col).
template <int P, int S, Activation A>
void window_tile(const WindowRow& r, int64_t ox, int64_t block, const ActivationParams256& k) {
  const int64_t s = S != 0 ? S : r.col;
  const float* w = r.a->w + block / 2 * r.w_pair + block % 2 * kB;
  const float* x = r.x + ox * s;
  Block16 acc[P];
  const Block16 bias = bias_of(r.a->bias, block * kB);
  for (int p = 0; p < P; ++p) acc[p] = bias;
  for (int64_t t = 0; t < r.taps; ++t) {
    const float* xt = x + r.x_off[t];
    const Block16 wv = load16(w + r.w_row[t] * kPairFloats);
    for (int p = 0; p < P; ++p) acc[p] = fmadd16(_mm256_broadcast_ss(xt + p * s), wv, acc[p]);
  }
  window_store<P, A>(r, ox, block, acc, k);
}

// One position whose window may leave the input row.
template <Activation A>
void window_edge(const WindowRow& r, int64_t ox, int64_t block, const ActivationParams256& k) {
  const ConvGeometry2d& g = *r.g;
  const float* w = r.a->w + block / 2 * r.w_pair + block % 2 * kB;
  Block16 acc[1] = {bias_of(r.a->bias, block * kB)};
  const int64_t ix0 = ox * g.sw - g.pw;
  for (int64_t t = 0; t < r.taps; ++t) {
    const int64_t kx = r.w_row[t] % g.kw;
    if (ix0 + kx < 0 || ix0 + kx >= g.iw) continue;
    acc[0] = fmadd16(_mm256_broadcast_ss(r.x + r.x_off[t] + ox * r.col), load16(w + r.w_row[t] * kPairFloats), acc[0]);
  }
  window_store<1, A>(r, ox, block, acc, k);
}

// Output blocks [b0, b1) of one row: edges, tiles of kTileP, edges. S1 and S2 are the column
// strides in floats of strides 1 and 2.
template <int S1, int S2, Activation A>
void window_blocks(const WindowRow& r, int64_t b0, int64_t b1, const ActivationParams256& k) {
  const ConvGeometry2d& g = *r.g;
  // Output columns whose window lies inside the input row: [lo, hi).
  const int64_t lo = std::min(g.ow, (g.pw + g.sw - 1) / g.sw);
  const int64_t hi = std::max(lo, std::min(g.ow, g.iw - g.kw + g.pw >= 0 ? (g.iw - g.kw + g.pw) / g.sw + 1 : 0));
  for (int64_t block = b0; block < b1; ++block) {
    int64_t ox = 0;
    for (; ox < lo; ++ox) window_edge<A>(r, ox, block, k);
    for (; ox + kTileP <= hi; ox += kTileP) {
      if (g.sw == 1)
        window_tile<kTileP, S1, A>(r, ox, block, k);
      else if (g.sw == 2)
        window_tile<kTileP, S2, A>(r, ox, block, k);
      else
        for (int64_t q = ox; q < ox + kTileP; ++q) window_edge<A>(r, q, block, k);
    }
    for (; ox < g.ow; ++ox) window_edge<A>(r, ox, block, k);
  }
}

// The input rows of output row oy that exist: [ky0, ky1).
inline void row_taps(const ConvGeometry2d& g, int64_t oy, int64_t& iy0, int64_t& ky0, int64_t& ky1) {
  iy0 = oy * g.sh - g.ph;
  ky0 = std::max<int64_t>(0, -iy0);
  ky1 = std::min(g.kh, g.ih - iy0);
}

template <Activation A>
void plain_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams256 k(*a.act);
  int64_t x_off[kBlockedPlainMaxTaps], w_row[kBlockedPlainMaxTaps];
  for (int64_t row = r0; row < r1; ++row) {
    WindowRow r;
    r.g = &g;
    r.a = &a;
    r.x = a.x;
    r.col = g.sw;
    r.w_pair = a.c * g.kh * g.kw * kPairFloats;
    r.image = row / g.oh;
    r.oy = row % g.oh;
    int64_t iy0 = 0, ky0 = 0, ky1 = 0;
    row_taps(g, r.oy, iy0, ky0, ky1);
    for (int64_t c = 0; c < a.c; ++c)
      for (int64_t ky = ky0; ky < ky1; ++ky)
        for (int64_t kx = 0; kx < g.kw; ++kx) {
          x_off[r.taps] = ((r.image * a.c + c) * g.ih + iy0 + ky) * g.iw - g.pw + kx;
          w_row[r.taps++] = (c * g.kh + ky) * g.kw + kx;
        }
    r.x_off = x_off;
    r.w_row = w_row;
    window_blocks<1, 2, A>(r, 0, channel_blocks(a.m), k);
  }
}

template <int S, Activation A>
void direct_blocks(const WindowRow& r, int64_t b0, int64_t b1, const ActivationParams256& k) {
  const int64_t ow = r.g->ow;
  for (int64_t block = b0; block < b1; ++block) {
    int64_t ox = 0;
    for (; ox + kTileP <= ow; ox += kTileP) window_tile<kTileP, S, A>(r, ox, block, k);
    switch (ow - ox) {
      case 5: window_tile<5, S, A>(r, ox, block, k); break;
      case 4: window_tile<4, S, A>(r, ox, block, k); break;
      case 3: window_tile<3, S, A>(r, ox, block, k); break;
      case 2: window_tile<2, S, A>(r, ox, block, k); break;
      case 1: window_tile<1, S, A>(r, ox, block, k); break;
      default: break;
    }
  }
}

template <Activation A>
void direct_rows(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  const ActivationParams256 k(*a.act);
  blocked_direct_walk(g, a, r0, r1,
                      [&]<int S>(const WindowRow& r, int64_t b0, int64_t b1) { direct_blocks<S, A>(r, b0, b1, k); });
}

}  // namespace

void blocked_plain_avx2(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { plain_rows<A>(g, a, r0, r1); });
}

void blocked_direct_avx2(const ConvGeometry2d& g, const BlockedConvArgs& a, int64_t r0, int64_t r1) {
  with_activation(a.act->act, [&]<Activation A>() { direct_rows<A>(g, a, r0, r1); });
}

}  // namespace ignis::kernels::x86
