// SPDX-License-Identifier: Apache-2.0
// What the half-weight GEMM tiles (gemm_f16w_avx512.cc, gemm_f16w_avx2.cc) share: the packing
// of B panels as IEEE half, the conversion of a packing callback's float32 panels, and the row
// path for few rows of A against prepacked half panels. Only AVX2 and F16C instructions, so
// both files can include it; everything has internal linkage (see gemm_blocked.h).
//
// Packed B layout: that of the float32 backend with the same nr and kc (gemm.h, PackedMatrix),
// each element an IEEE half, offsets counted in halves. vcvtps2ph rounds to nearest even;
// values past the half range become infinities, as float_to_half (core/half.h) does.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "kernels/x86/gemm_blocked.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {
namespace {

inline constexpr int kHalfRound = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;

// d[0 : n) = half(s[0 : n)), ascending. In place (d == s as bytes) is safe: the 16 bytes
// written for floats [i, i + 8) end at byte 2i + 16, before float i + 8 (byte 4i + 32), the
// next one read.
inline void floats_to_halves(const float* s, uint16_t* d, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm256_cvtps_ph(_mm256_loadu_ps(s + i), kHalfRound));
  for (; i < n; ++i) d[i] = static_cast<uint16_t>(_cvtss_sh(s[i], kHalfRound));
}

// GemmBackend::pack_b for half panels of kNr columns: op(X)[p0 : p0 + kc, j0 : j0 + nc] at
// `dst` (read as halves), zero-padded to whole panels.
template <int kNr>
void pack_b_halves(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                   float* dst) {
  static_assert(kNr % 8 == 0);
  auto* d = reinterpret_cast<uint16_t*>(dst);
  if (!trans) {
    // Row by row: each panel row is kNr consecutive floats of an X row.
    const int64_t full = nc / kNr * kNr;
    const int tail = static_cast<int>(nc - full);
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = x + (p0 + p) * ld + j0;
      for (int64_t j = 0; j < full; j += kNr) floats_to_halves(src + j, d + j * kc + p * kNr, kNr);
      if (tail) {
        alignas(32) float row[kNr] = {};
        std::copy(src + full, src + full + tail, row);
        floats_to_halves(row, d + full * kc + p * kNr, kNr);
      }
    }
    return;
  }
  // op(B)[p][j] = X[j][p]: float32 panels of kChunk depth steps through pack_transposed_panel,
  // then converted (weights are packed once; this is not a hot path).
  constexpr int64_t kChunk = 64;
  alignas(32) float panel[kChunk * kNr];
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    for (int64_t q = 0; q < kc; q += kChunk) {
      const int64_t steps = std::min(kChunk, kc - q);
      pack_transposed_panel<kNr>(x + (j0 + jr) * ld + p0 + q, ld, cols, steps, panel);
      floats_to_halves(panel, d + jr * kc + q * kNr, steps * kNr);
    }
  }
}

// A B packing callback (GemmOperand::pack_fn) with its context.
struct HalfPackFn {
  GemmPackFn fn;
  const void* ctx;
};

// GemmPackFn for half panels of kNr columns: the wrapped callback writes float32 panels (the
// same element offsets, in floats), then they are converted in place. The float32 block fits
// the workspace, which blocked_workspace sizes in floats.
template <int kNr>
void pack_then_halve(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0, int64_t n,
                     float* dst) {
  const auto& w = *static_cast<const HalfPackFn*>(ctx);
  w.fn(w.ctx, backend, p0, kc, j0, n, dst);
  floats_to_halves(dst, reinterpret_cast<uint16_t*>(dst), round_up(n, kNr) * kc);
}

// GemmBackend::range for tile set T (half B panels): blocked_range with a B packing callback
// wrapped in pack_then_halve. A stays float32 whichever way it comes.
template <class T>
void f16w_range(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace) {
  if (!g.b.pack_fn) return blocked_range<T>(g, i0, i1, j0, j1, workspace);
  GemmArgs h = g;
  const HalfPackFn b{g.b.pack_fn, g.b.pack_ctx};
  h.b = {.pack_fn = pack_then_halve<T::kNr>, .pack_ctx = &b};
  blocked_range<T>(h, i0, i1, j0, j1, workspace);
}

// The row path's vectors, by ISA: the file including this header passes one of these (or its
// own with the same members) to narrow_rows_f16w.
struct F16wVec256 {
  using V = __m256;
  static constexpr int kLanes = 8;
  static V zero() { return _mm256_setzero_ps(); }
  static V load_half(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static V broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
};

// narrow_rows_panel (gemm_blocked.h) on half panels: C[kM rows, one panel of kNr columns],
// the depth split over kParts partial sums so that a single row still keeps several
// multiply-add chains in flight; each panel row is widened once for all kM rows. Vec is
// F16wVec256 or the AVX-512 file's 16-lane counterpart.
template <class Vec, int kNr, int64_t kKc, int kM>
void narrow_rows_panel_f16w(const GemmArgs& g, int64_t i0, int rows, int64_t jr, int cols, int64_t cols_pad) {
  using V = typename Vec::V;
  constexpr int kV = kNr / Vec::kLanes;
  constexpr int kParts = kM == 1 ? 4 : kM == 2 ? 2 : 1;
  static_assert(kNr % Vec::kLanes == 0);
  V acc[kM][kParts][kV];
  for (auto& row : acc)
    for (auto& part : row)
      for (auto& v : part) v = Vec::zero();
  // A[i0 + i, p] at a_row[i] + p * a_step; rows past the end repeat the last (not stored).
  const float* a_row[kM];
  for (int i = 0; i < kM; ++i) {
    const int64_t r = i0 + std::min(i, rows - 1);
    a_row[i] = g.a.trans ? g.a.data + r : g.a.data + r * g.a.ld;
  }
  const int64_t a_step = g.a.trans ? g.a.ld : 1;
  auto step = [&](const uint16_t* b, int64_t p, int u) {
    V bv[kV];
    for (int v = 0; v < kV; ++v) bv[v] = Vec::load_half(b + Vec::kLanes * v);
    for (int i = 0; i < kM; ++i) {
      const V a = Vec::broadcast(a_row[i] + p * a_step);
      for (int v = 0; v < kV; ++v) acc[i][u][v] = Vec::fma(a, bv[v], acc[i][u][v]);
    }
  };
  for (int64_t pc = 0; pc < g.k; pc += kKc) {
    const int64_t kc = std::min(kKc, g.k - pc);
    const uint16_t* bp = g.b.packed->halves() + pc * cols_pad + jr * kc;
    int64_t p = 0;
    for (; p + kParts <= kc; p += kParts)
      for (int u = 0; u < kParts; ++u) step(bp + (p + u) * kNr, pc + p + u, u);
    for (; p < kc; ++p) step(bp + p * kNr, pc + p, 0);
  }
  const GemmEpilogue& e = g.epilogue;
  const bool has_epilogue = e.bias || e.residual || e.act != Activation::None;
  // The sums leave registers through `out`, with every index of acc a constant: indexing it by
  // the runtime row count kept acc in memory, with a store per multiply-add in the depth loop
  // (the AVX2 4x24 row path took 74 us instead of 24 on 768x768, one thread).
  alignas(64) float out[kM][kNr];
#pragma GCC unroll 4
  for (int i = 0; i < kM; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < kV; ++v) {
      V s = acc[i][0][v];
#pragma GCC unroll 4
      for (int u = 1; u < kParts; ++u) s = Vec::add(s, acc[i][u][v]);
      Vec::store(out[i] + Vec::kLanes * v, s);
    }
  for (int i = 0; i < rows; ++i) {
    float* c = g.c + (i0 + i) * g.ldc + jr;
    for (int j = 0; j < cols; ++j) c[j] = g.alpha * out[i][j] + (g.beta == 0.0f ? 0.0f : g.beta * c[j]);
    if (has_epilogue) gemm_f32_apply_epilogue(e, i0 + i, jr, cols, c);
  }
}

// The row path on half panels (for_each_narrow_rows_panel's contract).
template <class Vec, int kNr, int64_t kKc>
bool narrow_rows_f16w(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  return for_each_narrow_rows_panel<kNr>(g, i0, i1, j0, j1, [&]<int kM>(int rows, int64_t jr, int cols, int64_t cols_pad) {
    narrow_rows_panel_f16w<Vec, kNr, kKc, kM>(g, i0, rows, jr, cols, cols_pad);
  });
}

}  // namespace
}  // namespace ignis::kernels::x86
