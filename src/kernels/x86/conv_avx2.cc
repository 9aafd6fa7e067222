// SPDX-License-Identifier: Apache-2.0
// AVX2 im2col packing and direct depthwise convolution.
//
// im2col packing: the GEMM asks for a (kc x nc) block of the virtual im2col matrix in its
// 16-column panel layout. Row p is one (channel, ky, kx) tap; its columns are output
// positions, which run along output rows. Each output row contributes a run of columns, cut
// at panel boundaries into pieces of at most 16; with unit stride a piece is a plain copy of
// input row floats (two 8-float moves, masked at the edges), padding becomes zeros.
//
// Depthwise: one channel plane at a time. The input plane is first copied into scratch with
// its padding materialized (and, for stride 2, split into even and odd columns), so the
// inner loop reads every tap with plain unaligned loads and no bounds checks: for each
// output row, 32 outputs at a time in four independent accumulators (FMA latency), one tap
// after another; a tail of single 8-wide vectors follows.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/conv_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kNr = kGemmNr;

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

alignas(64) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

inline __m256i lane_mask(int n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
}

// d[0, n) = s[0, n), n <= 16.
inline void copy_upto16(float* d, const float* s, int n) {
  if (n == 16) {
    _mm256_storeu_ps(d, _mm256_loadu_ps(s));
    _mm256_storeu_ps(d + 8, _mm256_loadu_ps(s + 8));
    return;
  }
  const __m256i m0 = lane_mask(std::min(n, 8));
  _mm256_maskstore_ps(d, m0, _mm256_maskload_ps(s, m0));
  if (n > 8) {
    const __m256i m1 = lane_mask(n - 8);
    _mm256_maskstore_ps(d + 8, m1, _mm256_maskload_ps(s + 8, m1));
  }
}

inline void zero_upto16(float* d, int n) {
  for (int i = 0; i < n; ++i) d[i] = 0.0f;
}

// One piece of a packed im2col row: n (<= 16) consecutive output columns ox in [a, a + n)
// of one output row, written to d. xrow is the input row (nullptr when the window row is
// in the padding); [lo, hi) are the ox whose tap lies inside the row.
inline void im2col_piece(float* d, int n, int64_t a, const float* xrow, int64_t lo, int64_t hi, int64_t sw,
                         int64_t off) {
  if (!xrow) return zero_upto16(d, n);
  const int64_t b = a + n;
  const int64_t v0 = std::clamp(lo, a, b), v1 = std::clamp(hi, v0, b);
  if (v0 > a) zero_upto16(d, static_cast<int>(v0 - a));
  if (v1 > v0) {
    float* dv = d + (v0 - a);
    if (sw == 1) {
      copy_upto16(dv, xrow + v0 + off, static_cast<int>(v1 - v0));
    } else {
      for (int64_t t = v0; t < v1; ++t) dv[t - v0] = xrow[t * sw + off];
    }
  }
  if (b > v1) zero_upto16(d + (v1 - a), static_cast<int>(b - v1));
}

}  // namespace

void conv_f32_pack_im2col(const void* source, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  const Im2colSource& s = *static_cast<const Im2colSource*>(source);
  const ConvGeometry2d& g = s.g;
  const int64_t taps = g.kh * g.kw, plane = g.ih * g.iw;
  const int64_t full = nc / kNr * kNr;
  // Columns past nc in the last panel are multiplied but never stored; keep them zero.
  if (full < nc) std::memset(dst + full * kc, 0, static_cast<size_t>(kc * kNr) * sizeof(float));
  const int64_t oy0 = j0 / g.ow, ox0 = j0 % g.ow;
  for (int64_t p = 0; p < kc; ++p) {
    const int64_t r = p0 + p, c = r / taps, ky = (r % taps) / g.kw, kx = r % g.kw;
    const float* xc = s.x + c * plane;
    const int64_t off = kx * g.dw - g.pw;  // input column = ox * sw + off
    const int64_t lo = std::max<int64_t>(0, ceil_div(-off, g.sw));
    const int64_t hi = std::max(lo, std::min(g.ow, floor_div(g.iw - 1 - off, g.sw) + 1));
    float* drow = dst + p * kNr;
    int64_t col = 0, oy = oy0, ox = ox0;
    while (col < nc) {
      const int64_t len = std::min(g.ow - ox, nc - col);
      const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
      const float* xrow = iy >= 0 && iy < g.ih ? xc + iy * g.iw : nullptr;
      // Cut the run [col, col + len) at panel boundaries.
      for (int64_t c0 = col; c0 < col + len;) {
        const int64_t lane = c0 % kNr;
        const int n = static_cast<int>(std::min(kNr - lane, col + len - c0));
        im2col_piece(drow + (c0 - lane) * kc + lane, n, ox + (c0 - col), xrow, lo, hi, g.sw, off);
        c0 += n;
      }
      col += len;
      ox = 0;
      ++oy;
    }
  }
}

// ---- depthwise ---------------------------------------------------------------------------

namespace {

// Layout of the padded copy of one input plane. Stride 1: one plane of `rows` x `width`.
// Stride 2: two planes (even input columns, then odd), each `rows` x `width`, so tap kx of
// output column ox reads plane kx % 2 at column ox + kx / 2.
struct PaddedPlane {
  int64_t rows = 0, width = 0;
  int planes = 1;
};

PaddedPlane padded_layout(const ConvGeometry2d& g) {
  PaddedPlane p;
  p.rows = (g.oh - 1) * g.sh + g.kh;
  const int64_t ow_pad = round_up(g.ow, 8);
  if (g.sw == 1) {
    p.width = round_up(ow_pad + g.kw, 8);
  } else {
    p.planes = 2;
    p.width = round_up(ow_pad + g.kw / 2 + 1, 8);
  }
  return p;
}

void fill_padded(const ConvGeometry2d& g, const PaddedPlane& p, const float* x, float* dst) {
  const int64_t total_cols = p.width * p.planes;  // padded columns covered (2 * width for stride 2)
  for (int64_t r = 0; r < p.rows; ++r) {
    const int64_t iy = r - g.ph;
    const float* xrow = iy >= 0 && iy < g.ih ? x + iy * g.iw : nullptr;
    // Padded column c holds input column c - pw.
    const int64_t c_lo = xrow ? std::clamp<int64_t>(g.pw, 0, total_cols) : total_cols;
    const int64_t c_hi = xrow ? std::clamp<int64_t>(g.pw + g.iw, c_lo, total_cols) : total_cols;
    if (p.planes == 1) {
      float* d = dst + r * p.width;
      std::fill(d, d + c_lo, 0.0f);
      if (c_hi > c_lo) std::memcpy(d + c_lo, xrow + (c_lo - g.pw), static_cast<size_t>(c_hi - c_lo) * sizeof(float));
      std::fill(d + c_hi, d + total_cols, 0.0f);
    } else {
      float* even = dst + r * p.width;
      float* odd = dst + (p.rows + r) * p.width;
      for (int64_t t = 0; t < p.width; ++t) {
        const int64_t ce = 2 * t, co = 2 * t + 1;
        even[t] = ce >= c_lo && ce < c_hi ? xrow[ce - g.pw] : 0.0f;
        odd[t] = co >= c_lo && co < c_hi ? xrow[co - g.pw] : 0.0f;
      }
    }
  }
}

inline __m256 activate(__m256 v, const GemmEpilogue& e) {
  switch (e.act) {
    case Activation::None: return v;
    case Activation::Relu: return _mm256_max_ps(_mm256_setzero_ps(), v);
    case Activation::Clip:
      return _mm256_min_ps(_mm256_set1_ps(e.act_hi), _mm256_max_ps(_mm256_set1_ps(e.act_lo), v));
    case Activation::LeakyRelu: {
      const __m256 neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
      return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(e.act_lo)), neg);
    }
  }
  return v;
}

// KH/KW = 0: kernel extents taken from g at run time. S: horizontal stride (1 or 2).
template <int KH, int KW, int S>
void depthwise_rows(const ConvGeometry2d& g, const PaddedPlane& p, const float* padded, const float* w, float bias,
                    const GemmEpilogue& e, float* y) {
  const int kh = KH ? KH : static_cast<int>(g.kh);
  const int kw = KW ? KW : static_cast<int>(g.kw);
  const float* odd_plane = padded + (S == 2 ? p.rows * p.width : 0);
  // Column offset of tap kx inside the plane it reads.
  auto tap_src = [&](const float* row_even, const float* row_odd, int kx) {
    return S == 1 ? row_even + kx : (kx % 2 == 0 ? row_even : row_odd) + kx / 2;
  };
  const __m256 vbias = _mm256_set1_ps(bias);
  for (int64_t oy = 0; oy < g.oh; ++oy) {
    float* yrow = y + oy * g.ow;
    const int64_t r0 = oy * g.sh;
    int64_t ox = 0;
    for (; ox + 32 <= g.ow; ox += 32) {
      __m256 a0 = vbias, a1 = vbias, a2 = vbias, a3 = vbias;
      for (int ky = 0; ky < kh; ++ky) {
        const float* re = padded + (r0 + ky) * p.width + ox;
        const float* ro = odd_plane + (r0 + ky) * p.width + ox;
        for (int kx = 0; kx < kw; ++kx) {
          const __m256 wv = _mm256_set1_ps(w[ky * kw + kx]);
          const float* s = tap_src(re, ro, kx);
          a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
          a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
          a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 16), a2);
          a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 24), a3);
        }
      }
      _mm256_storeu_ps(yrow + ox, activate(a0, e));
      _mm256_storeu_ps(yrow + ox + 8, activate(a1, e));
      _mm256_storeu_ps(yrow + ox + 16, activate(a2, e));
      _mm256_storeu_ps(yrow + ox + 24, activate(a3, e));
    }
    for (; ox < g.ow; ox += 8) {
      // Two partial sums (even and odd kernel rows) halve the dependency chain.
      __m256 a0 = vbias, a1 = _mm256_setzero_ps();
      for (int ky = 0; ky < kh; ++ky) {
        const float* re = padded + (r0 + ky) * p.width + ox;
        const float* ro = odd_plane + (r0 + ky) * p.width + ox;
        __m256& acc = ky % 2 == 0 ? a0 : a1;
        for (int kx = 0; kx < kw; ++kx)
          acc = _mm256_fmadd_ps(_mm256_set1_ps(w[ky * kw + kx]), _mm256_loadu_ps(tap_src(re, ro, kx)), acc);
      }
      const __m256 v = activate(_mm256_add_ps(a0, a1), e);
      if (ox + 8 <= g.ow) _mm256_storeu_ps(yrow + ox, v);
      else _mm256_maskstore_ps(yrow + ox, lane_mask(static_cast<int>(g.ow - ox)), v);
    }
  }
}

}  // namespace

bool conv_f32_depthwise_supported(const ConvGeometry2d& g) {
  return g.kh >= 1 && g.kw >= 1 && g.kh <= 7 && g.kw <= 7 && (g.sh == 1 || g.sh == 2) && (g.sw == 1 || g.sw == 2) &&
         g.dh == 1 && g.dw == 1;
}

size_t conv_f32_depthwise_scratch(const ConvGeometry2d& g) {
  if (g.oh <= 0 || g.ow <= 0) return 0;
  const PaddedPlane p = padded_layout(g);
  return static_cast<size_t>(p.rows * p.width * p.planes + 16);
}

void conv_f32_depthwise_plane(const ConvGeometry2d& g, const float* x, const float* w, float bias,
                              const GemmEpilogue& e, float* y, float* scratch) {
  if (g.oh <= 0 || g.ow <= 0) return;
  const PaddedPlane p = padded_layout(g);
  fill_padded(g, p, x, scratch);
  const bool square3 = g.kh == 3 && g.kw == 3, square5 = g.kh == 5 && g.kw == 5;
  if (g.sw == 1) {
    if (square3) return depthwise_rows<3, 3, 1>(g, p, scratch, w, bias, e, y);
    if (square5) return depthwise_rows<5, 5, 1>(g, p, scratch, w, bias, e, y);
    return depthwise_rows<0, 0, 1>(g, p, scratch, w, bias, e, y);
  }
  if (square3) return depthwise_rows<3, 3, 2>(g, p, scratch, w, bias, e, y);
  if (square5) return depthwise_rows<5, 5, 2>(g, p, scratch, w, bias, e, y);
  depthwise_rows<0, 0, 2>(g, p, scratch, w, bias, e, y);
}

}  // namespace ignis::kernels::x86
