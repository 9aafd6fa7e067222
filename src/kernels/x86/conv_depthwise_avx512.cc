// SPDX-License-Identifier: Apache-2.0
// AVX-512 direct depthwise convolution, one channel plane at a time.
//
// Phase planes: the zero-padded input plane is split by row and column parity of the stride
// (sh * sw planes; one for stride 1) into planes of `width` >= ow + (kw - 1) / sw columns and
// `rows` = oh + (kh - 1) / sh rows: phase (a, b) holds padded element (sh * i + a, sw * j + b)
// at (i, j). Tap (ky, kx) of output (oy, ox) is then phase (ky % sh, kx % sw) at
// (oy + ky / sh, ox + kx / sw). Numbering outputs q = oy * width + ox (each output row padded
// to `width`, the last width - ow columns unused), tap (ky, kx) of output q is phase element
// q + (ky / sh) * width + kx / sw: one linear offset per tap. So 16 consecutive q are one
// unaligned load per tap for any stride and plane size, without per-row tails: vectors run
// straight across row ends, wasting only (kw - 1) / sw lanes per row (a 7x7 output uses 49 of
// 64 lanes where one vector per row would use 49 of 112). The planes are built with masked
// loads (lanes outside the input row read nothing and are zero) and, for stride 2, an even/odd
// column split by permutes; built once, they stay in L1/L2 for the kh taps that read each row.
//
// Compute: blocks of V = 8 vectors (128 outputs, eight independent FMA chains), then 4, 2, 1
// for the rest; each weight is broadcast once per block and used V times. The epilogue adds
// residual, applies the activation in registers and stores each vector's lanes row by row
// with masks (one full store when the vector lies inside one output row).
//
// Rows of 40 or more columns are padded to a multiple of 16 floats, so that the fill's
// stores (four per output vector at stride 2) and the taps at kx / sw == 0 are aligned; that
// gained ~20% on 112x112 stride 2 for <= 12% more lanes. Narrower rows keep the minimal width.
//
// Single thread, loaded machine, Clip activation, GFLOP/s (AVX2 padded-plane kernel -> this):
// 3x3 s1 112x112 21 -> 27, 56x56 21 -> 28, 28x28 16 -> 23, 14x14 13 -> 19, 7x7 8 -> 10;
// 3x3 s2 112x112 9 -> 11, 56x56 7.5 -> 12, 28x28 4.5 -> 10, 14x14 2.5 -> 6;
// 5x5 s1 28x28 30 -> 42, 14x14 24 -> 27, 7x7 12 -> 17; 5x5 s2 56x56 16 -> 26, 14x14 5.5 -> 13.
// A plain FMA loop peaks at ~35 GFLOP/s on the same machine. Small planes (7x7, stride 2 to
// 7x7) stay at 6-17: per-row work (fill, masked stores) outweighs their 49 outputs.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/conv_depthwise_avx512.h"

namespace ignis::kernels::x86 {

namespace {

// Lanes [lo, hi) of 16.
inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 16);
  hi = std::clamp<int64_t>(hi, lo, 16);
  return static_cast<__mmask16>(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// ---- activations on 16 lanes -------------------------------------------------------------
// Same formulas as activation_avx2.h (which documents their accuracy). max/min return their
// second operand when either is NaN: v goes second so that NaN propagates. The maskz_ forms
// avoid GCC 12's false maybe-uninitialized warnings on the unmasked forms.

constexpr __mmask16 kAll = 0xFFFF;

inline __m512 max16(__m512 a, __m512 b) { return _mm512_maskz_max_ps(kAll, a, b); }
inline __m512 min16(__m512 a, __m512 b) { return _mm512_maskz_min_ps(kAll, a, b); }

inline __m512 exp16(__m512 x) {
  x = min16(_mm512_set1_ps(88.3f), max16(_mm512_set1_ps(-87.3f), x));
  const __m512 n = _mm512_maskz_roundscale_ps(kAll, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);  // ln 2 in two parts
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_maskz_scalef_ps(kAll, p, n);  // p * 2^n
}

inline __m512 sigmoid16(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

inline __m512 erf16(__m512 x) {
  const __m512i sign_bit = _mm512_set1_epi32(static_cast<int>(0x80000000u));
  const __m512i xi = _mm512_castps_si512(x);
  const __m512i sign = _mm512_maskz_and_epi32(kAll, xi, sign_bit);
  const __m512 z = _mm512_castsi512_ps(_mm512_maskz_andnot_epi32(kAll, sign_bit, xi));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(z, _mm512_set1_ps(0.3275911f), one));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z)));
  const __m512 y = _mm512_fnmadd_ps(p, e, one);  // erf(|x|)
  return _mm512_castsi512_ps(_mm512_maskz_or_epi32(kAll, _mm512_castps_si512(y), sign));
}

inline __m512 activate16(__m512 v, const GemmEpilogue& e) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  switch (e.act) {
    case Activation::None: return v;
    case Activation::Relu: return max16(zero, v);
    case Activation::Clip: return min16(_mm512_set1_ps(e.act_hi), max16(_mm512_set1_ps(e.act_lo), v));
    case Activation::LeakyRelu: {
      const __mmask16 neg = _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ);
      return _mm512_mask_mul_ps(v, neg, v, _mm512_set1_ps(e.act_alpha));
    }
    case Activation::Sigmoid: return sigmoid16(v);
    case Activation::HardSigmoid:
      return max16(zero, min16(one, _mm512_fmadd_ps(v, _mm512_set1_ps(e.act_alpha), _mm512_set1_ps(e.act_beta))));
    case Activation::HardSwish: {
      const __m512 gate = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
      return _mm512_mul_ps(v, max16(zero, min16(one, gate)));
    }
    case Activation::SiLU: return _mm512_mul_ps(v, sigmoid16(v));
    case Activation::Gelu: {
      const __m512 half_v = _mm512_mul_ps(v, _mm512_set1_ps(0.5f));
      const __m512 erf = erf16(_mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f)));
      return _mm512_fmadd_ps(half_v, erf, half_v);
    }
    case Activation::GeluTanh: {
      // 0.5 v (1 + tanh(u)) = v * sigmoid(2u), u = sqrt(2 / pi) (v + 0.044715 v^3)
      const __m512 v2 = _mm512_mul_ps(v, v);
      const __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(v2, v), _mm512_set1_ps(0.044715f), v);
      return _mm512_mul_ps(v, sigmoid16(_mm512_mul_ps(inner, _mm512_set1_ps(2.0f * 0.7978845608028654f))));
    }
  }
  return v;
}

// ---- phase planes ------------------------------------------------------------------------

// Floats read past the last row of a phase plane: a vector of 16 starting at the last output
// reaches 15 floats further; rounded up with room to spare.
constexpr int64_t kPlaneSlack = 32;

constexpr int64_t kAlignWidth = 40;

struct PhaseLayout {
  int64_t rows = 0, width = 0;
  int64_t stride = 0;  // floats from one phase plane to the next (a multiple of 16)
};

PhaseLayout phase_layout(const ConvGeometry2d& g) {
  PhaseLayout p;
  // Strides are 1 or 2: shifts rather than divisions, which would cost more than a 7x7 plane's
  // fill.
  p.rows = g.oh + ((g.kh - 1) >> (g.sh - 1));
  p.width = g.ow + ((g.kw - 1) >> (g.sw - 1));
  if (p.width >= kAlignWidth) p.width = (p.width + 15) / 16 * 16;
  p.stride = (p.rows * p.width + kPlaneSlack + 15) / 16 * 16;
  return p;
}

// Writes the sh * sw phase planes of input plane x. Every row is written with whole vectors
// (the tail spills into the next row, which is written afterwards, or into the slack), so rows
// are visited in increasing order within each plane.
void fill_phases(const ConvGeometry2d& g, const PhaseLayout& p, const float* x, float* dst) {
  const __m512 zero = _mm512_setzero_ps();
  const __m512i even_idx = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd_idx = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
  for (int64_t a = 0; a < g.sh; ++a) {
    float* plane0 = dst + a * g.sw * p.stride;  // phase (a, 0); phase (a, 1) follows for sw = 2
    for (int64_t i = 0; i < p.rows; ++i) {
      const int64_t iy = g.sh * i + a - g.ph;
      float* d0 = plane0 + i * p.width;
      if (iy < 0 || iy >= g.ih) {
        for (int64_t b = 0; b < g.sw; ++b)
          for (int64_t j = 0; j < p.width; j += 16) _mm512_storeu_ps(d0 + b * p.stride + j, zero);
        continue;
      }
      const float* xrow = x + iy * g.iw;
      // Three runs of whole vectors: masked loads before the row's first input column, plain
      // loads while the vector lies inside the input row, masked loads to the end.
      if (g.sw == 1) {
        // Padded column j is input column j - pw.
        auto masked = [&](int64_t j) {
          const int64_t c = j - g.pw;
          _mm512_storeu_ps(d0 + j, _mm512_maskz_loadu_ps(lanes(-c, g.iw - c), xrow + c));
        };
        int64_t j = 0;
        for (; j < p.width && j < g.pw; j += 16) masked(j);
        for (; j < p.width && j - g.pw + 16 <= g.iw; j += 16) _mm512_storeu_ps(d0 + j, _mm512_loadu_ps(xrow + j - g.pw));
        for (; j < p.width; j += 16) masked(j);
      } else {
        float* d1 = d0 + p.stride;
        // Padded columns 2j .. 2j + 31 (input columns c ..), split into even and odd.
        auto split = [&](int64_t j, __m512 lo, __m512 hi) {
          _mm512_storeu_ps(d0 + j, _mm512_permutex2var_ps(lo, even_idx, hi));
          _mm512_storeu_ps(d1 + j, _mm512_permutex2var_ps(lo, odd_idx, hi));
        };
        auto masked = [&](int64_t j) {
          const int64_t c = 2 * j - g.pw;
          split(j, _mm512_maskz_loadu_ps(lanes(-c, g.iw - c), xrow + c),
                _mm512_maskz_loadu_ps(lanes(-c - 16, g.iw - c - 16), xrow + c + 16));
        };
        int64_t j = 0;
        for (; j < p.width && 2 * j < g.pw; j += 16) masked(j);
        for (; j < p.width && 2 * j - g.pw + 32 <= g.iw; j += 16) {
          const float* src = xrow + 2 * j - g.pw;
          split(j, _mm512_loadu_ps(src), _mm512_loadu_ps(src + 16));
        }
        for (; j < p.width; j += 16) masked(j);
      }
    }
    for (int64_t b = 0; b < g.sw; ++b) {
      float* tail = plane0 + b * p.stride + p.rows * p.width;
      for (int64_t j = 0; j < kPlaneSlack; j += 16) _mm512_storeu_ps(tail + j, zero);
    }
  }
}

// ---- compute -----------------------------------------------------------------------------

struct Job {
  const float* phases;
  int64_t stride, width;  // of the phase planes
  int64_t oh, ow;
  int kh, kw;
  const float* w;
  float bias;
  const float* residual;  // laid out like y, or null
  const GemmEpilogue* e;
  float* y;
};

// Output position of lane 0 of a vector: output row r, column col of the padded row (col may
// be past ow, in the unused columns).
struct Cursor {
  int64_t r = 0, col = 0;
};

inline void advance(const Job& j, Cursor& at) {
  at.col += 16;
  while (at.col >= j.width) {
    at.col -= j.width;
    ++at.r;
  }
}

// Calls f(offset, mask) for each output row the vector at `at` covers: the lanes in `mask`
// belong to output elements offset + lane of y (offset may be negative for rows after the
// first; masked-off lanes are never touched).
template <class F>
inline void for_each_row_piece(const Job& j, Cursor at, F&& f) {
  int64_t lane = 0;
  while (lane < 16 && at.r < j.oh) {
    if (at.col < j.ow) f(at.r * j.ow + at.col - lane, lanes(lane, lane + j.ow - at.col));
    lane += j.width - at.col;
    at.col = 0;
    ++at.r;
  }
}

inline void store_vector(const Job& j, __m512 acc, Cursor at) {
  if (at.col + 16 <= j.ow) {  // inside one output row
    const int64_t off = at.r * j.ow + at.col;
    if (j.residual) acc = _mm512_add_ps(acc, _mm512_loadu_ps(j.residual + off));
    _mm512_storeu_ps(j.y + off, activate16(acc, *j.e));
    return;
  }
  if (j.residual) {
    __m512 z = _mm512_setzero_ps();
    const float* res = j.residual;
    for_each_row_piece(j, at, [&](int64_t off, __mmask16 m) { z = _mm512_mask_loadu_ps(z, m, res + off); });
    acc = _mm512_add_ps(acc, z);
  }
  const __m512 out = activate16(acc, *j.e);
  float* y = j.y;
  for_each_row_piece(j, at, [&](int64_t off, __mmask16 m) { _mm512_mask_storeu_ps(y + off, m, out); });
}

// V vectors of outputs starting at position q. KH/KW = 0: kernel extents from the job.
template <int KH, int KW, int SH, int SW, int V>
inline void depthwise_block(const Job& j, int64_t q, Cursor& at) {
  const int kh = KH ? KH : j.kh;
  const int kw = KW ? KW : j.kw;
  __m512 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm512_set1_ps(j.bias);
  for (int ky = 0; ky < kh; ++ky) {
    for (int kx = 0; kx < kw; ++kx) {
      const float* src = j.phases + ((ky % SH) * SW + kx % SW) * j.stride + (ky / SH) * j.width + kx / SW + q;
      const __m512 wv = _mm512_set1_ps(j.w[ky * kw + kx]);
      for (int v = 0; v < V; ++v) acc[v] = _mm512_fmadd_ps(wv, _mm512_loadu_ps(src + 16 * v), acc[v]);
    }
  }
  for (int v = 0; v < V; ++v) {
    store_vector(j, acc[v], at);
    advance(j, at);
  }
}

template <int KH, int KW, int SH, int SW>
void depthwise_phases(const Job& j) {
  const int64_t n = (j.oh - 1) * j.width + j.ow;  // positions up to the last output
  const int64_t nvec = (n + 15) / 16;
  int64_t v = 0;
  Cursor at;
  for (; v + 8 <= nvec; v += 8) depthwise_block<KH, KW, SH, SW, 8>(j, 16 * v, at);
  if (v + 4 <= nvec) {
    depthwise_block<KH, KW, SH, SW, 4>(j, 16 * v, at);
    v += 4;
  }
  if (v + 2 <= nvec) {
    depthwise_block<KH, KW, SH, SW, 2>(j, 16 * v, at);
    v += 2;
  }
  if (v < nvec) depthwise_block<KH, KW, SH, SW, 1>(j, 16 * v, at);
}

template <int SH, int SW>
void (*select_phases(const Job& j))(const Job&) {
  if (j.kh == 3 && j.kw == 3) return depthwise_phases<3, 3, SH, SW>;
  if (j.kh == 5 && j.kw == 5) return depthwise_phases<5, 5, SH, SW>;
  return depthwise_phases<0, 0, SH, SW>;
}

}  // namespace

size_t conv_f32_depthwise_avx512_scratch(const ConvGeometry2d& g) {
  if (g.oh <= 0 || g.ow <= 0) return 0;
  const PhaseLayout p = phase_layout(g);
  return static_cast<size_t>(g.sh * g.sw * p.stride);
}

void conv_f32_depthwise_planes_avx512(const ConvGeometry2d& g, const DepthwisePlanes& d, int64_t t0, int64_t t1,
                                      float* scratch) {
  if (g.oh <= 0 || g.ow <= 0) return;
  const PhaseLayout p = phase_layout(g);
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow, taps = g.kh * g.kw;
  Job j{scratch, p.stride, p.width, g.oh, g.ow, static_cast<int>(g.kh), static_cast<int>(g.kw),
        nullptr, 0.0f, nullptr, d.act, nullptr};
  void (*compute)(const Job&) = depthwise_phases<0, 0, 2, 1>;
  if (g.sh == 1 && g.sw == 1) compute = select_phases<1, 1>(j);
  else if (g.sh == 2 && g.sw == 2) compute = select_phases<2, 2>(j);
  else if (g.sh == 1) compute = depthwise_phases<0, 0, 1, 2>;
  for (int64_t t = t0; t < t1; ++t) {
    const int64_t image = t / d.m, o = t % d.m;
    fill_phases(g, p, d.x + (image * d.c + o / d.mg) * in_plane, scratch);
    j.w = d.w + o * taps;
    j.bias = d.bias ? d.bias[o] : 0.0f;
    j.residual = d.residual ? d.residual + t * out_plane : nullptr;
    j.y = d.y + t * out_plane;
    compute(j);
  }
}

}  // namespace ignis::kernels::x86
