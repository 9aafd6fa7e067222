// SPDX-License-Identifier: Apache-2.0
// AVX2 row primitives of Pad and BatchNormalization (pad_norm_avx2.h): a constant fill in
// 8-lane stores with a masked tail around a memcpy of the row, and a per-row x * a + b in
// four independent 8-lane FMAs per step, also with a masked tail.
#include "kernels/x86/pad_norm_avx2.h"

#include <immintrin.h>

#include <cstring>

namespace ignis::kernels::x86 {

namespace {

alignas(64) constexpr int32_t kTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, n) set, n in [0, 8].
inline __m256i tail_mask(int64_t n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kTailMask + 8 - n)); }

void fill_f32(float* dst, int64_t n, __m256 v) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, v);
  if (i < n) _mm256_maskstore_ps(dst + i, tail_mask(n - i), v);
}

}  // namespace

void pad_f32_row_avx2(float* dst, int64_t n, const float* src, int64_t begin, int64_t count, float fill) {
  const __m256 v = _mm256_set1_ps(fill);
  fill_f32(dst, begin, v);
  if (count > 0) std::memcpy(dst + begin, src, static_cast<size_t>(count) * sizeof(float));
  fill_f32(dst + begin + count, n - begin - count, v);
}

void scale_shift_f32_avx2(const float* x, float* y, int64_t n, float a, float b) {
  const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m256 r0 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i), va, vb);
    const __m256 r1 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 8), va, vb);
    const __m256 r2 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 16), va, vb);
    const __m256 r3 = _mm256_fmadd_ps(_mm256_loadu_ps(x + i + 24), va, vb);
    _mm256_storeu_ps(y + i, r0);
    _mm256_storeu_ps(y + i + 8, r1);
    _mm256_storeu_ps(y + i + 16, r2);
    _mm256_storeu_ps(y + i + 24, r3);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), va, vb));
  if (i < n) {
    const __m256i m = tail_mask(n - i);
    _mm256_maskstore_ps(y + i, m, _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), va, vb));
  }
}

}  // namespace ignis::kernels::x86
