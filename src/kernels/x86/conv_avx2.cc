// SPDX-License-Identifier: Apache-2.0
// AVX2 im2col packing and direct depthwise convolution.
//
// im2col packing: the GEMM asks for a (kc x nc) block of the virtual im2col matrix in its
// backend's panel layout (24 or 32 columns). Row p is one (channel, ky, kx) tap; its columns
// are output positions, which run along output rows. Per chunk of up to 512 columns (whole
// panels), each row is built
// contiguously in a stack buffer (with unit stride, one vector copy of input floats per
// output row, zeros for padding), then dealt out to the panels 24 floats at a time; this
// beat writing panel pieces directly, which needs per-piece bookkeeping at every panel edge.
//
// Depthwise: one channel plane at a time. The input plane is first copied into scratch with
// its padding materialized (and, for stride 2, split into even and odd columns), so the
// inner loop reads every tap with plain unaligned loads and no bounds checks. The output is
// covered by strips of R rows x V 8-wide vectors (R * V <= 8 independent accumulators, for
// the FMA latency): column blocks of up to four vectors, two rows at a time, and narrow
// planes (7x7, 14x14) four to eight rows at a time. Each weight is broadcast once per strip
// and used R * V times.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  const int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }
int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// d[0, n) = s[0, n); masked loads never touch memory past s + n.
inline void copy_floats(float* d, const float* s, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_loadu_ps(s + i));
  if (i < n) {
    const __m256i m = lane_mask(static_cast<int>(n - i));
    _mm256_maskstore_ps(d + i, m, _mm256_maskload_ps(s + i, m));
  }
}

inline void zero_floats(float* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_setzero_ps());
  for (; i < n; ++i) d[i] = 0.0f;
}

// Floats of the row buffer of one packing chunk; a chunk is the largest multiple of the panel
// width that fits, so chunks start on panels.
constexpr int64_t kChunkFloats = 512;

// One row of the im2col matrix: input channel c, kernel tap (ky, kx). Rows are visited in
// order, so the packer steps taps instead of dividing the row index (integer divisions were
// most of the packing time on small images).
struct Tap {
  int64_t c = 0, ky = 0, kx = 0;

  Tap(const ConvGeometry2d& g, int64_t r) : c(r / (g.kh * g.kw)), ky((r / g.kw) % g.kh), kx(r % g.kw) {}
  void next(const ConvGeometry2d& g) {
    if (++kx < g.kw) return;
    kx = 0;
    if (++ky < g.kh) return;
    ky = 0;
    ++c;
  }
};

// Row `t` of the im2col matrix over output positions [j0, j0 + n) (j0 at output row oy0,
// column ox0), written contiguously to `row`.
void im2col_row(const Im2colSource& s, const Tap& t, int64_t oy0, int64_t ox0, int64_t n, float* row) {
  const ConvGeometry2d& g = s.g;
  const int64_t ky = t.ky;
  const float* xc = s.x + t.c * g.ih * g.iw;
  const int64_t off = t.kx * g.dw - g.pw;  // input column = ox * sw + off
  // Output columns [lo, hi) read inside the input row; the rest read padding.
  int64_t lo, hi;
  if (g.sw == 1) {
    lo = std::clamp<int64_t>(-off, 0, g.ow);
    hi = std::clamp<int64_t>(g.iw - off, lo, g.ow);
  } else {
    lo = std::min(g.ow, std::max<int64_t>(0, ceil_div(-off, g.sw)));
    hi = std::max(lo, std::min(g.ow, floor_div(g.iw - 1 - off, g.sw) + 1));
  }
  int64_t oy = oy0, ox = ox0;
  for (int64_t col = 0; col < n; ox = 0, ++oy) {
    // This output row's part of the chunk: output columns [ox, end) go to row[col, ...).
    const int64_t len = std::min(g.ow - ox, n - col), end = ox + len;
    float* d = row + col;
    col += len;
    const int64_t iy = oy * g.sh - g.ph + ky * g.dh;
    if (iy < 0 || iy >= g.ih) {
      zero_floats(d, len);
      continue;
    }
    const float* xrow = xc + iy * g.iw;
    const int64_t a = std::clamp(lo, ox, end), b = std::clamp(hi, a, end);
    zero_floats(d, a - ox);
    if (g.sw == 1) {
      copy_floats(d + (a - ox), xrow + a + off, b - a);
    } else {
      for (int64_t t = a; t < b; ++t) d[t - ox] = xrow[t * g.sw + off];
    }
    zero_floats(d + (b - ox), end - b);
  }
}

}  // namespace

void conv_f32_pack_im2col(const void* source, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                          int64_t nc, float* dst) {
  const Im2colSource& s = *static_cast<const Im2colSource*>(source);
  const int64_t nr = backend.nr;  // a multiple of 8
  const int64_t chunk = kChunkFloats / nr * nr;
  // Each im2col row of a chunk is built contiguously (long vector copies along output rows,
  // cheap to compute), then dealt out to the panels nr floats at a time.
  alignas(32) float row[kChunkFloats];
  for (int64_t c0 = 0; c0 < nc; c0 += chunk) {
    const int64_t n = std::min(chunk, nc - c0);
    const int64_t n_pad = (n + nr - 1) / nr * nr;
    // Columns past nc in the last panel are multiplied but never stored; keep them zero.
    zero_floats(row + n, n_pad - n);
    float* chunk_dst = dst + c0 * kc;
    const int64_t oy0 = (j0 + c0) / s.g.ow, ox0 = (j0 + c0) % s.g.ow;
    Tap t(s.g, p0);
    for (int64_t p = 0; p < kc; ++p, t.next(s.g)) {
      float* d = chunk_dst + p * nr;
      if (n_pad == nr) {
        // One panel (small images): its row p is contiguous, so build it in place. Through
        // the row buffer, every vector read of the row would wait for the masked stores
        // that wrote it (masked stores do not forward to loads).
        im2col_row(s, t, oy0, ox0, n, d);
        zero_floats(d + n, nr - n);
        continue;
      }
      im2col_row(s, t, oy0, ox0, n, row);
      for (int64_t j = 0; j < n_pad; j += nr, d += nr * kc)
        for (int64_t v = 0; v < nr; v += 8) _mm256_store_ps(d + v, _mm256_load_ps(row + j + v));
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
    // Padded column c holds input column c - pw; [c_lo, c_hi) are the columns with data.
    const int64_t c_lo = xrow ? std::clamp<int64_t>(g.pw, 0, total_cols) : total_cols;
    const int64_t c_hi = xrow ? std::clamp<int64_t>(g.pw + g.iw, c_lo, total_cols) : total_cols;
    if (p.planes == 1) {
      // Rows are short (tens of floats): inline vector moves beat memcpy/memset calls.
      float* d = dst + r * p.width;
      const __m256 zero = _mm256_setzero_ps();
      for (int64_t c = 0; c < c_lo; c += 8) _mm256_storeu_ps(d + c, zero);  // width is a multiple of 8
      const float* src = xrow ? xrow + (c_lo - g.pw) : nullptr;
      int64_t c = c_lo;
      for (; c + 8 <= c_hi; c += 8) _mm256_storeu_ps(d + c, _mm256_loadu_ps(src + (c - c_lo)));
      if (c < c_hi) {
        const __m256i m = lane_mask(static_cast<int>(c_hi - c));
        _mm256_storeu_ps(d + c, _mm256_maskload_ps(src + (c - c_lo), m));  // zeros past c_hi
        c += 8;
      }
      for (; c < total_cols; c += 8) _mm256_storeu_ps(d + c, zero);
      continue;
    }
    float* even = dst + r * p.width;
    float* odd = dst + (p.rows + r) * p.width;
    int64_t t = 0;
    auto scalar_until = [&](int64_t t_end) {
      for (; t < t_end; ++t) {
        const int64_t ce = 2 * t, co = 2 * t + 1;
        even[t] = ce >= c_lo && ce < c_hi ? xrow[ce - g.pw] : 0.0f;
        odd[t] = co >= c_lo && co < c_hi ? xrow[co - g.pw] : 0.0f;
      }
    };
    // Columns 2t .. 2t + 15 all inside the row: split 16 floats into 8 even and 8 odd.
    const int64_t t_vec = std::min(p.width, (c_lo + 1) / 2);
    scalar_until(t_vec);
    for (; 2 * t + 16 <= c_hi && t + 8 <= p.width; t += 8) {
      const float* src = xrow + (2 * t - g.pw);
      const __m256 a = _mm256_loadu_ps(src), b = _mm256_loadu_ps(src + 8);
      const __m256 ev = _mm256_shuffle_ps(a, b, 0x88), od = _mm256_shuffle_ps(a, b, 0xDD);
      _mm256_storeu_ps(even + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));
      _mm256_storeu_ps(odd + t, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(od), 0xD8)));
    }
    scalar_until(p.width);
  }
}

struct DepthwiseJob {
  const ConvGeometry2d* g;
  const PaddedPlane* p;
  const float* even;  // padded plane (stride 1) or its even columns (stride 2)
  const float* odd;   // odd columns (stride 2)
  const float* w;
  float bias;
  const GemmEpilogue* e;
  const float* residual;  // added before the activation; laid out like y, or null
  float* y;
};

// R output rows x V 8-wide vectors starting at (oy, ox): R * V independent accumulators.
// Taps are visited kernel row by kernel row; each weight is broadcast once per strip.
// KH/KW = 0: kernel extents from the geometry. S: horizontal stride (1 or 2).
template <int KH, int KW, int S, int R, int V>
void depthwise_strip(const DepthwiseJob& j, int64_t oy, int64_t ox) {
  const ConvGeometry2d& g = *j.g;
  const int kh = KH ? KH : static_cast<int>(g.kh);
  const int kw = KW ? KW : static_cast<int>(g.kw);
  const int64_t width = j.p->width;
  __m256 acc[R][V];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_set1_ps(j.bias);
  for (int ky = 0; ky < kh; ++ky) {
    const float* rows_e[R];
    const float* rows_o[R];
    for (int r = 0; r < R; ++r) {
      const int64_t row = (oy + r) * g.sh + ky;
      rows_e[r] = j.even + row * width + ox;
      rows_o[r] = j.odd + row * width + ox;
    }
    for (int kx = 0; kx < kw; ++kx) {
      const __m256 wv = _mm256_broadcast_ss(j.w + ky * kw + kx);
      for (int r = 0; r < R; ++r) {
        // Stride 2: tap kx of output column ox reads plane kx % 2 at column ox + kx / 2.
        const float* src = S == 1 ? rows_e[r] + kx : (kx % 2 == 0 ? rows_e[r] : rows_o[r]) + kx / 2;
        for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(src + 8 * v), acc[r][v]);
      }
    }
  }
  for (int r = 0; r < R; ++r) {
    const int64_t at = (oy + r) * g.ow + ox;
    for (int v = 0; v < V; ++v) {
      const int64_t left = g.ow - ox - 8 * v;
      const __m256i mask = lane_mask(static_cast<int>(std::min<int64_t>(left, 8)));
      __m256 out = acc[r][v];
      if (j.residual) {
        const float* z = j.residual + at + 8 * v;
        out = _mm256_add_ps(out, left >= 8 ? _mm256_loadu_ps(z) : _mm256_maskload_ps(z, mask));
      }
      out = activate_avx2(out, *j.e);
      if (left >= 8) _mm256_storeu_ps(j.y + at + 8 * v, out);
      else _mm256_maskstore_ps(j.y + at + 8 * v, mask, out);
    }
  }
}

// Rows [oy, oh) of one column block: strips of R rows, then the leftover rows with R / 2...
template <int KH, int KW, int S, int V, int R>
void depthwise_rows(const DepthwiseJob& j, int64_t oy, int64_t ox) {
  for (; oy + R <= j.g->oh; oy += R) depthwise_strip<KH, KW, S, R, V>(j, oy, ox);
  if constexpr (R > 1) depthwise_rows<KH, KW, S, V, R / 2>(j, oy, ox);
}

// Covers the output plane column block by column block (up to four vectors wide), each
// with strips of R rows so that about eight accumulators are live: a 3x3 tap chain per
// accumulator is nine dependent FMAs, and eight chains keep both FMA ports busy.
template <int KH, int KW, int S>
void depthwise_plane(const DepthwiseJob& j) {
  const int64_t nvec = (j.g->ow + 7) / 8;
  for (int64_t v = 0; v < nvec; v += 4) {
    switch (std::min<int64_t>(4, nvec - v)) {
      case 4: depthwise_rows<KH, KW, S, 4, 2>(j, 0, 8 * v); break;
      case 3: depthwise_rows<KH, KW, S, 3, 2>(j, 0, 8 * v); break;
      case 2: depthwise_rows<KH, KW, S, 2, 4>(j, 0, 8 * v); break;
      default: depthwise_rows<KH, KW, S, 1, 8>(j, 0, 8 * v); break;
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
                              const float* residual, const GemmEpilogue& e, float* y, float* scratch) {
  if (g.oh <= 0 || g.ow <= 0) return;
  const PaddedPlane p = padded_layout(g);
  fill_padded(g, p, x, scratch);
  const DepthwiseJob j{&g, &p, scratch, scratch + (p.planes == 2 ? p.rows * p.width : 0), w, bias, &e, residual, y};
  const bool square3 = g.kh == 3 && g.kw == 3, square5 = g.kh == 5 && g.kw == 5;
  if (g.sw == 1) {
    if (square3) return depthwise_plane<3, 3, 1>(j);
    if (square5) return depthwise_plane<5, 5, 1>(j);
    return depthwise_plane<0, 0, 1>(j);
  }
  if (square3) return depthwise_plane<3, 3, 2>(j);
  if (square5) return depthwise_plane<5, 5, 2>(j);
  depthwise_plane<0, 0, 2>(j);
}

}  // namespace ignis::kernels::x86
