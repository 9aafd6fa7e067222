// SPDX-License-Identifier: Apache-2.0
// finite_range_avx2 (finite_range_avx2.h): two accumulators of each kind so that the loop is
// bound by loads; a non-finite value (v - v is NaN) is replaced by the identity of each
// reduction before it enters.
#include "kernels/x86/finite_range_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <limits>

namespace ignis::kernels::x86 {

void finite_range_avx2(const float* x, int64_t n, float* min_out, float* max_out) {
  const float inf = std::numeric_limits<float>::infinity();
  const __m256 pos = _mm256_set1_ps(inf), neg = _mm256_set1_ps(-inf), zero = _mm256_setzero_ps();
  __m256 lo0 = pos, lo1 = pos, hi0 = neg, hi1 = neg;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i), b = _mm256_loadu_ps(x + i + 8);
    const __m256 fa = _mm256_cmp_ps(_mm256_sub_ps(a, a), zero, _CMP_EQ_OQ);
    const __m256 fb = _mm256_cmp_ps(_mm256_sub_ps(b, b), zero, _CMP_EQ_OQ);
    lo0 = _mm256_min_ps(lo0, _mm256_blendv_ps(pos, a, fa));
    hi0 = _mm256_max_ps(hi0, _mm256_blendv_ps(neg, a, fa));
    lo1 = _mm256_min_ps(lo1, _mm256_blendv_ps(pos, b, fb));
    hi1 = _mm256_max_ps(hi1, _mm256_blendv_ps(neg, b, fb));
  }
  alignas(32) float lo[8], hi[8];
  _mm256_store_ps(lo, _mm256_min_ps(lo0, lo1));
  _mm256_store_ps(hi, _mm256_max_ps(hi0, hi1));
  float mn = inf, mx = -inf;
  for (int k = 0; k < 8; ++k) {
    mn = std::min(mn, lo[k]);
    mx = std::max(mx, hi[k]);
  }
  for (; i < n; ++i) {
    const float v = x[i];
    if (v - v != 0.0f) continue;
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  *min_out = mn;
  *max_out = mx;
}

}  // namespace ignis::kernels::x86
