// SPDX-License-Identifier: Apache-2.0
// How an AVX-512 GEMM tile of up to 8 rows x 32 columns lands in C: alpha, beta, the epilogue
// (bias, residual, activation) on the accumulators, then one store per row. Shared by the
// float32 tiles (gemm_avx512.cc), the bfloat16 tiles (gemm_avx512bf16.cc) and the half-weight
// tiles (gemm_f16w_avx512.cc), whose accumulators are float32 as well; the depth loop with
// float32 A (micro_tile_8x32) by the float32 and half-weight ones. For *_avx512*.cc files only; everything has internal
// linkage (see gemm_blocked.h).
#pragma once

#include <immintrin.h>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/gemm_blocked.h"

namespace ignis::kernels::x86 {
namespace {

constexpr int kTileRows512 = 8;
constexpr int kTileCols512 = 32;

// Lanes [0, n) of a 16-lane vector, n clamped to [0, 16].
inline __mmask16 tail_mask(int n) {
  if (n >= 16) return 0xFFFF;
  return n <= 0 ? 0 : static_cast<__mmask16>((1u << n) - 1);
}

// What the stores of one finished tile need, broadcast once per tile.
template <bool kTail>
struct TileStore {
  __mmask16 m0, m1;  // the valid columns of each 16-column half
  __m512 alpha, beta, scale;
  ActivationParams512 act;
  TileStore(const TileParams& t, int cols)
      : m0(kTail ? tail_mask(cols) : 0xFFFF),
        m1(kTail ? tail_mask(cols - 16) : 0xFFFF),
        alpha(_mm512_set1_ps(t.alpha)),
        beta(_mm512_set1_ps(t.beta)),
        scale(_mm512_set1_ps(t.e.bias_scale)),
        act(t.e) {}
};

// One finished row of the tile to C (ci = row `row` at column col0): v = alpha * acc
// (+ beta * C_old); when kFinish (last depth slice) then v += bias_scale * bias,
// v += residual, v = A(v); then one store of the final values.
template <Activation A, bool kFinish, bool kTail>
[[gnu::always_inline]] inline void store_row(__m512 acc0, __m512 acc1, float* ci, const TileParams& t,
                                             const TileStore<kTail>& s, int64_t row, int64_t col0) {
  __m512 v0 = _mm512_mul_ps(acc0, s.alpha), v1 = _mm512_mul_ps(acc1, s.alpha);
  if (t.read_c) {
    v0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(s.m0, ci), s.beta, v0);
    v1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(s.m1, ci + 16), s.beta, v1);
  }
  if constexpr (kFinish) {
    const GemmEpilogue& e = t.e;
    if (e.bias) {
      const float* b = e.bias + row * e.bias_rs;
      if (e.bias_cs == 0) {
        const __m512 bv = _mm512_set1_ps(*b);
        v0 = _mm512_fmadd_ps(bv, s.scale, v0);
        v1 = _mm512_fmadd_ps(bv, s.scale, v1);
      } else {
        v0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(s.m0, b + col0), s.scale, v0);
        v1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(s.m1, b + col0 + 16), s.scale, v1);
      }
    }
    if (e.residual) {
      const float* z = e.residual + row * e.residual_ld + col0;
      v0 = _mm512_add_ps(v0, _mm512_maskz_loadu_ps(s.m0, z));
      v1 = _mm512_add_ps(v1, _mm512_maskz_loadu_ps(s.m1, z + 16));
    }
    v0 = activate_avx512<A>(v0, s.act);
    v1 = activate_avx512<A>(v1, s.act);
  }
  if (kTail) {
    _mm512_mask_storeu_ps(ci, s.m0, v0);
    _mm512_mask_storeu_ps(ci + 16, s.m1, v1);
  } else {
    _mm512_storeu_ps(ci, v0);
    _mm512_storeu_ps(ci + 16, v1);
  }
}

// Calls f.template operator()<A, kFinish>() for the tile's epilogue: kFinish on the last
// depth slice, A the activation then. One switch per tile; each activation gets its own copy
// of the row loop.
template <class F>
[[gnu::always_inline]] inline void with_epilogue(const TileParams& t, F&& f) {
  using enum Activation;
  if (!t.finish) return f.template operator()<None, false>();
  switch (t.e.act) {
    case None: return f.template operator()<None, true>();
    case Relu: return f.template operator()<Relu, true>();
    case Clip: return f.template operator()<Clip, true>();
    case LeakyRelu: return f.template operator()<LeakyRelu, true>();
    case Sigmoid: return f.template operator()<Sigmoid, true>();
    case HardSigmoid: return f.template operator()<HardSigmoid, true>();
    case HardSwish: return f.template operator()<HardSwish, true>();
    case SiLU: return f.template operator()<SiLU, true>();
    case Gelu: return f.template operator()<Gelu, true>();
    case GeluTanh: return f.template operator()<GeluTanh, true>();
  }
}

// The rows of a partial-height tile, its accumulators spilled to acc[i][0..1]: one copy of
// this loop serves every height (a copy per height and activation would add ~300 KiB of code
// for tiles that only cover the last rows of C).
template <bool kTail>
void store_partial_tile(const __m512 (*acc)[2], int rows, float* c, int64_t ldc, const TileParams& t, int64_t row0,
                        int64_t col0, int cols) {
  const TileStore<kTail> s(t, cols);
  with_epilogue(t, [&]<Activation A, bool kFinish>() {
    for (int i = 0; i < rows; ++i)
      store_row<A, kFinish, kTail>(acc[i][0], acc[i][1], c + i * ldc, t, s, row0 + i, col0);
  });
}

// Stores a finished tile of M rows (M <= 8; all 32 columns, or the first `cols` when kTail)
// held in acc0 (columns 0-15) and acc1 (16-31) of each row.
template <int M, bool kTail>
[[gnu::always_inline]] inline void store_tile(const __m512 (&acc0)[M], const __m512 (&acc1)[M], float* c,
                                              int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0,
                                              int cols) {
  const TileParams t = tp;
  if (!kTail && !t.read_c && !t.finish && t.alpha == 1.0f) {  // the common first slice: plain stores
    for (int i = 0; i < M; ++i) {
      _mm512_storeu_ps(c + i * ldc, acc0[i]);
      _mm512_storeu_ps(c + i * ldc + 16, acc1[i]);
    }
    return;
  }
  if constexpr (M == kTileRows512) {
    // Full height, the common case: straight from the accumulators (spilling them first cost
    // ~10% on a 1x1 conv 16->96 at 112x112 with bias and Relu).
    const TileStore<kTail> s(t, cols);
    with_epilogue(t, [&]<Activation A, bool kFinish>() {
      for (int i = 0; i < M; ++i) store_row<A, kFinish, kTail>(acc0[i], acc1[i], c + i * ldc, t, s, row0 + i, col0);
    });
  } else {
    alignas(64) __m512 spilled[M][2];
    for (int i = 0; i < M; ++i) {
      spilled[i][0] = acc0[i];
      spilled[i][1] = acc1[i];
    }
    store_partial_tile<kTail>(spilled, M, c, ldc, t, row0, col0, cols);
  }
}

// The depth loop and the store of a tile of M rows, A's value for row i at depth step p being
// a(i, p).
template <class BRow, int M, bool kTail, class AOf>
[[gnu::always_inline]] inline void tile_8x32(int64_t kc, const AOf& a, const typename BRow::Elem* __restrict b,
                                             float* c, int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0,
                                             int cols, const char* pf, int64_t pf_lines) {
  __m512 acc0[M], acc1[M];
  for (int i = 0; i < M; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  // Touch the C tile early so its lines arrive while the depth loop runs.
  for (int i = 0; i < M; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + kTileCols512 - 1), _MM_HINT_T0);
  }
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    if ((p & 1) == 0 && pf_lines > 0) {
      _mm_prefetch(pf, _MM_HINT_T1);
      pf += 64;
      --pf_lines;
    }
    const __m512 b0 = BRow::lo(b), b1 = BRow::hi(b);
    for (int i = 0; i < M; ++i) {
      const __m512 ai = _mm512_set1_ps(a(i, p));
      acc0[i] = _mm512_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm512_fmadd_ps(ai, b1, acc1[i]);
    }
    b += kTileCols512;
  }
  for (; pf_lines > 0; --pf_lines, pf += 64) _mm_prefetch(pf, _MM_HINT_T1);
  store_tile<M, kTail>(acc0, acc1, c, ldc, tp, row0, col0, cols);
}

// C[0:M, 0:32] (or its first `cols` columns when kTail) from a float32 A panel (stride 8 per
// depth step) and a B panel (stride 32) whose rows BRow loads: BRow::Elem is the panel's
// element type, BRow::lo / hi(b) give columns 0-15 / 16-31 of the row at b as floats (float32
// panels in gemm_avx512.cc, half panels in gemm_f16w_avx512.cc). Prefetches the pf_lines
// lines at pf into L2, one every other depth step (the rest, if any, after the loop).
template <class BRow, int M, bool kTail>
void micro_tile_8x32(int64_t kc, const float* __restrict a, const typename BRow::Elem* __restrict b, float* c,
                     int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0, int cols, const char* pf,
                     int64_t pf_lines) {
  const auto panel = [a](int i, int64_t p) { return a[p * kTileRows512 + i]; };
  tile_8x32<BRow, M, kTail>(kc, panel, b, c, ldc, tp, row0, col0, cols, pf, pf_lines);
}

// micro_tile_8x32 reading A in place: row i of the tile at a + i * lda (depth step p at
// a[i * lda + p]), for the A operands the blocked loop does not pack (gemm_blocked.h,
// T::macro_kernel_a_in_place).
template <class BRow, int M, bool kTail>
void micro_tile_8x32_rows(int64_t kc, const float* __restrict a, int64_t lda, const typename BRow::Elem* __restrict b,
                          float* c, int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0, int cols,
                          const char* pf, int64_t pf_lines) {
  const float* rows[M];
  for (int i = 0; i < M; ++i) rows[i] = a + i * lda;
  const auto in_place = [&rows](int i, int64_t p) { return rows[i][p]; };
  tile_8x32<BRow, M, kTail>(kc, in_place, b, c, ldc, tp, row0, col0, cols, pf, pf_lines);
}

}  // namespace
}  // namespace ignis::kernels::x86
