// SPDX-License-Identifier: Apache-2.0
// AVX-512 direct depthwise convolution: one channel plane at a time on phase planes for large
// planes, 16 channels per vector ("channels in lanes", below) for outputs up to 56x56.
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
// 7x7) stay at 6-17: per-row work (fill, masked stores) outweighs their 49 outputs; they go
// to the channels-in-lanes path.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/conv_depthwise_avx512.h"
#include "kernels/x86/conv_depthwise_lanes.h"
#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/simd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

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
    _mm512_storeu_ps(j.y + off, activate_avx512(acc, *j.e));
    return;
  }
  if (j.residual) {
    __m512 z = _mm512_setzero_ps();
    const float* res = j.residual;
    for_each_row_piece(j, at, [&](int64_t off, __mmask16 m) { z = _mm512_mask_loadu_ps(z, m, res + off); });
    acc = _mm512_add_ps(acc, z);
  }
  const __m512 out = activate_avx512(acc, *j.e);
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

// ---- channels in lanes -------------------------------------------------------------------
//
// For small planes: 16 channels at a time, their zero-padded input planes transposed into one
// [rows][cols][16] buffer (channel in the lane), the weights into [kh * kw][16]. Each output
// pixel of the 16 channels is then kh * kw full-vector FMAs at one offset per tap, for any
// stride, without row tails or masks; V = 8 pixels per pass (running across output rows) keep
// eight FMA chains in flight. The results ([pixels][16]) are transposed back 16 pixels at a
// time, adding the residual and applying the activation on the NCHW vectors as they are
// stored. Transposes are 16x16 in registers (64 shuffles per 256 floats), paid once per input
// and output element instead of per output row as the phase-plane fill and masked stores are.
// (Building the transpose's 128-bit lane crossings from 4-float loads instead, 32 shuffles
// and 48 inserts, measured no faster.)
//
// Where it wins, single thread, loaded machine, mobilenet_v2 and efficientnet_b0 layers with
// Clip or SiLU, GFLOP/s (phase planes -> channels in lanes):
// 3x3 s1 7x7 9.4 -> 25, 14x14 18.6 -> 31, 28x28 21 -> 33, 56x56 26 -> 30, 112x112 25 -> 22;
// 3x3 s2 to 7x7 5.7 -> 16, to 14x14 9.7 -> 16, to 28x28 11.5 -> 16, to 56x56 11.6 -> 12.2;
// 5x5 s1 7x7 11.7 -> 36, 14x14 21.5 -> 46, 28x28 33 -> 50; 5x5 s2 to 7x7 10 -> 28, to 28x28
// 21 -> 31. So outputs up to 56x56 (at either stride) take this path; 112x112, where the
// 830 KB transposed plane leaves L1/L2 behind, stays on phase planes.

// r[i] = elements k0 + i of the 16 planes src[0 .. channels) (zero for i >= count and for
// lanes >= channels): element k0 + i of every channel as one vector.
inline void gather16(const float* const* src, int channels, int64_t k0, int count, __m512 r[16]) {
  const __mmask16 m = lanes(0, count);
  for (int l = 0; l < 16; ++l)
    r[l] = l >= channels ? _mm512_setzero_ps()
           : count == 16 ? _mm512_loadu_ps(src[l] + k0)
                         : _mm512_maskz_loadu_ps(m, src[l] + k0);
  transpose16(r);
}

// Largest output plane (oh * ow) the channels-in-lanes path takes: 56x56, by the measurements
// above.
constexpr int64_t kLanesMaxOutput = 56 * 56;

// 16 channels per vector (conv_depthwise_lanes.h).
struct Simd512 {
  using Vec = __m512;
  static constexpr int kWidth = 16;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
  static __m512 fmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
};

// Transposes the results of one unit ([pixels][16]) back into the output planes of channels
// t0 .. t0 + channels (planes of `plane` floats), adding the residual and applying the
// activation (the loop is compiled per activation: a switch per vector cost 10% on 7x7 planes).
void store_unit(const GemmEpilogue& e, const float* out, const float* residual, float* y, int64_t t0, int channels,
                int64_t plane) {
  const ActivationParams512 k(e);
  with_activation(e.act, [&]<Activation A>() {
    __m512 r[16];
    for (int64_t k0 = 0; k0 < plane; k0 += 16) {
      const int count = static_cast<int>(std::min<int64_t>(16, plane - k0));
      const __mmask16 pm = lanes(0, count);
      for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(out + (k0 + i) * 16);
      transpose16(r);
      for (int c = 0; c < channels; ++c) {
        const int64_t off = (t0 + c) * plane + k0;
        __m512 v = r[c];
        if (count == 16) {
          if (residual) v = _mm512_add_ps(v, _mm512_loadu_ps(residual + off));
          _mm512_storeu_ps(y + off, activate_avx512<A>(v, k));
        } else {
          if (residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(pm, residual + off));
          _mm512_mask_storeu_ps(y + off, pm, activate_avx512<A>(v, k));
        }
      }
    }
  });
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

bool conv_f32_depthwise_avx512_lanes(const ConvGeometry2d& g) {
  return g.oh * g.ow <= kLanesMaxOutput;
}

size_t conv_f32_depthwise_avx512_lanes_scratch(const ConvGeometry2d& g) {
  if (g.oh <= 0 || g.ow <= 0) return 0;
  const LanesLayout l = lanes_layout<16>(g);
  // Input buffer, results, weights, placement table (int32, one per input element).
  return static_cast<size_t>((l.rows * l.cols + l.out_pixels + g.kh * g.kw) * 16 + (g.ih * g.iw + 15) / 16 * 16);
}

void conv_f32_depthwise_lanes_avx512(const ConvGeometry2d& g, const DepthwisePlanes& d, int64_t u0, int64_t u1,
                                     float* scratch) {
  if (g.oh <= 0 || g.ow <= 0 || u0 >= u1) return;
  const LanesLayout lay = lanes_layout<16>(g);
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow, taps = g.kh * g.kw;
  const int64_t groups = (d.m + 15) / 16;
  float* in = scratch;
  float* out = in + lay.rows * lay.cols * 16;
  float* wbuf = out + lay.out_pixels * 16;
  // Where input element k of a plane goes in `in` (floats): a table, so that placing the 16
  // transposed vectors of a block takes no per-pixel row arithmetic.
  int32_t* place = reinterpret_cast<int32_t*>(wbuf + taps * 16);
  for (int64_t iy = 0, k = 0; iy < g.ih; ++iy)
    for (int64_t ix = 0; ix < g.iw; ++ix, ++k)
      place[k] = static_cast<int32_t>(((iy + g.ph) * lay.cols + ix + g.pw) * 16);
  // The padding stays zero: every unit writes the same interior pixels.
  for (int64_t i = 0; i < lay.rows * lay.cols; ++i) _mm512_storeu_ps(in + i * 16, _mm512_setzero_ps());
  LanesJob<Simd512> j{in, wbuf, _mm512_setzero_ps(), lay.cols, g.oh, g.ow, g.sh, g.sw, static_cast<int>(g.kh),
                      static_cast<int>(g.kw), out};
  const auto compute = lanes_compute_for<Simd512>(g);
  __m512 r[16];
  const float* src[16];
  for (int64_t u = u0; u < u1; ++u) {
    const int64_t image = u / groups, o0 = (u % groups) * 16;
    const int channels = static_cast<int>(std::min<int64_t>(16, d.m - o0));
    // Weights: the units' rows of kh * kw floats, transposed to [kh * kw][16].
    for (int l = 0; l < channels; ++l) src[l] = d.w + (o0 + l) * taps;
    for (int64_t k0 = 0; k0 < taps; k0 += 16) {
      const int count = static_cast<int>(std::min<int64_t>(16, taps - k0));
      gather16(src, channels, k0, count, r);
      for (int i = 0; i < count; ++i) _mm512_storeu_ps(wbuf + (k0 + i) * 16, r[i]);
    }
    j.bias = d.bias ? _mm512_maskz_loadu_ps(lanes(0, channels), d.bias + o0) : _mm512_setzero_ps();
    // Input planes (output channel o reads input channel o / mg), transposed into `in`.
    for (int l = 0; l < channels; ++l) src[l] = d.x + (image * d.c + (o0 + l) / d.mg) * in_plane;
    int64_t k0 = 0;
    for (; k0 + 16 <= in_plane; k0 += 16) {
      gather16(src, channels, k0, 16, r);
      for (int i = 0; i < 16; ++i) _mm512_storeu_ps(in + place[k0 + i], r[i]);
    }
    if (k0 < in_plane) {
      const int count = static_cast<int>(in_plane - k0);
      gather16(src, channels, k0, count, r);
      for (int i = 0; i < count; ++i) _mm512_storeu_ps(in + place[k0 + i], r[i]);
    }
    compute(j);
    store_unit(*d.act, out, d.residual, d.y, image * d.m + o0, channels, out_plane);
  }
}

}  // namespace ignis::kernels::x86
