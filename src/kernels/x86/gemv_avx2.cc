// SPDX-License-Identifier: Apache-2.0
// Eight rows at a time, each with its own accumulator, so eight FMA chains run side by side;
// the 8x8 transpose then turns the eight accumulators into the eight row sums at once.
#include "kernels/x86/gemv_avx2.h"

#include <immintrin.h>

#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

void gemv_f32_avx2(const float* a, int64_t lda, int64_t rows, int64_t k, const float* x, float* y) {
  const int64_t k8 = k / 8 * 8;
  const int tail = static_cast<int>(k - k8);
  const __m256i mask = lane_mask(tail);
  int64_t i = 0;
  for (; i + 8 <= rows; i += 8) {
    __m256 acc[8];
    for (auto& v : acc) v = _mm256_setzero_ps();
    for (int64_t p = 0; p < k8; p += 8) {
      const __m256 xv = _mm256_loadu_ps(x + p);
      for (int r = 0; r < 8; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(a + (i + r) * lda + p), xv, acc[r]);
    }
    if (tail) {
      const __m256 xv = _mm256_maskload_ps(x + k8, mask);
      for (int r = 0; r < 8; ++r)
        acc[r] = _mm256_fmadd_ps(_mm256_maskload_ps(a + (i + r) * lda + k8, mask), xv, acc[r]);
    }
    transpose8(acc);
    __m256 sum = acc[0];
    for (int r = 1; r < 8; ++r) sum = _mm256_add_ps(sum, acc[r]);
    _mm256_storeu_ps(y + i, sum);
  }
  for (; i < rows; ++i) {
    __m256 acc = _mm256_setzero_ps();
    for (int64_t p = 0; p < k8; p += 8)
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i * lda + p), _mm256_loadu_ps(x + p), acc);
    if (tail) acc = _mm256_fmadd_ps(_mm256_maskload_ps(a + i * lda + k8, mask), _mm256_maskload_ps(x + k8, mask), acc);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc);
    float s = 0.0f;
    for (float v : lanes) s += v;
    y[i] = s;
  }
}

}  // namespace ignis::kernels::x86
