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
