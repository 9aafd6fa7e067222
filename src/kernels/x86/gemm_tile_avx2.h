// SPDX-License-Identifier: Apache-2.0
// How an AVX2 GEMM tile of up to 4 rows x 24 columns lands in C: alpha, beta, the epilogue
// (bias, residual, activation) per 8-column vector, then the store. Shared by the float32
// tiles (gemm_avx2.cc) and the half-weight tiles (gemm_f16w_avx2.cc). For *_avx2.cc files
// only; everything has internal linkage (see gemm_blocked.h).
#pragma once

#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/gemm_blocked.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {
namespace {

// Finishes 8 columns of row `row` (columns col .. col + 7 of C, `mask` selecting the valid
// ones when kTail) and stores them.
template <bool kTail>
inline void store8(__m256 acc, float* c, const TileParams& t, int64_t row, int64_t col, __m256i mask) {
  __m256 v = _mm256_mul_ps(acc, _mm256_set1_ps(t.alpha));
  if (t.read_c) {
    const __m256 old = kTail ? _mm256_maskload_ps(c, mask) : _mm256_loadu_ps(c);
    v = _mm256_fmadd_ps(old, _mm256_set1_ps(t.beta), v);
  }
  if (t.finish) {
    const GemmEpilogue& e = t.e;
    if (e.bias) {
      const float* b = e.bias + row * e.bias_rs;
      __m256 bv;
      if (e.bias_cs == 0) bv = _mm256_broadcast_ss(b);
      else bv = kTail ? _mm256_maskload_ps(b + col, mask) : _mm256_loadu_ps(b + col);
      v = _mm256_fmadd_ps(bv, _mm256_set1_ps(e.bias_scale), v);
    }
    if (e.residual) {
      const float* z = e.residual + row * e.residual_ld + col;
      v = _mm256_add_ps(v, kTail ? _mm256_maskload_ps(z, mask) : _mm256_loadu_ps(z));
    }
    v = activate_avx2(v, e);
  }
  if (kTail) _mm256_maskstore_ps(c, mask, v);
  else _mm256_storeu_ps(c, v);
}

// Touches the M rows of a C tile (a 96-byte row spans two or three cache lines) so their lines
// arrive while the depth loop runs; on the last depth slice also the residual's rows, which
// the epilogue reads.
template <int M>
[[gnu::always_inline]] inline void prefetch_rows_4x24(const float* c, int64_t ldc) {
  for (int i = 0; i < M; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 12), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + kGemmNr - 1), _MM_HINT_T0);
  }
}
template <int M>
[[gnu::always_inline]] inline void prefetch_tile_4x24(const float* c, int64_t ldc, const TileParams& tp,
                                                      int64_t row0, int64_t col0) {
  prefetch_rows_4x24<M>(c, ldc);
  if (tp.finish && tp.e.residual) prefetch_rows_4x24<M>(tp.e.residual + row0 * tp.e.residual_ld + col0, tp.e.residual_ld);
}

// acc[i][v] += sum_p A[i, p] * B[p, 8v : 8v + 8] for the first M rows of a float32 A panel
// (stride kGemmMr per depth step) and a B panel (stride kGemmNr) whose rows BRow loads:
// BRow::Elem is the panel's element type, BRow::load(b) the 8 columns at b as floats (float32
// panels in gemm_avx2.cc, half panels in gemm_f16w_avx2.cc). The lines [pf, pf + 64 *
// pf_lines) are prefetched into L2 along the way, two every four depth steps (what is left at
// the end, at once): spread out, they do not stall the FMAs as a burst would.
template <class BRow, int M>
[[gnu::always_inline]] inline void depth_loop_4x24_rows(int64_t kc, const float* __restrict a,
                                                        const typename BRow::Elem* __restrict b,
                                                        __m256 (&acc)[kGemmMr][3], const char* pf = nullptr,
                                                        int64_t pf_lines = 0) {
  auto step = [&] {
    const __m256 b0 = BRow::load(b), b1 = BRow::load(b + 8), b2 = BRow::load(b + 16);
    for (int i = 0; i < M; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm256_fmadd_ps(ai, b2, acc[i][2]);
    }
    a += kGemmMr;
    b += kGemmNr;
  };
  const char* const pf_end = pf + 64 * pf_lines;
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    step();
    step();
    if (pf < pf_end) {
      _mm_prefetch(pf, _MM_HINT_T1);
      _mm_prefetch(pf + 64, _MM_HINT_T1);
      pf += 128;
    }
    step();
    step();
  }
  for (; p < kc; ++p) step();
  for (; pf < pf_end; pf += 64) _mm_prefetch(pf, _MM_HINT_T1);
}

// Stores a finished tile of M rows (M <= 4; all 24 columns, or the first `cols` when kTail)
// held in acc[i][0..2] (8 columns each).
template <int M, bool kTail>
inline void store_tile_4x24(const __m256 (&acc)[kGemmMr][3], float* c, int64_t ldc, const TileParams& tp,
                            int64_t row0, int64_t col0, int cols) {
  const TileParams t = tp;
  if (!kTail && !t.read_c && !t.finish && t.alpha == 1.0f) {  // the common first slice: plain stores
    for (int i = 0; i < M; ++i)
      for (int v = 0; v < 3; ++v) _mm256_storeu_ps(c + i * ldc + 8 * v, acc[i][v]);
    return;
  }
  __m256i mask[3] = {};
  if (kTail)
    for (int v = 0; v < 3; ++v) mask[v] = lane_mask(std::clamp(cols - 8 * v, 0, 8));
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc;
    for (int v = 0; v < 3; ++v)
      if (!kTail || cols > 8 * v) store8<kTail>(acc[i][v], ci + 8 * v, t, row0 + i, col0 + 8 * v, mask[v]);
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
