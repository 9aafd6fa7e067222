// SPDX-License-Identifier: Apache-2.0
// The stride == kernel store of the x86 ConvTranspose (conv_transpose_avx2.h). For kw == 2
// the two taps of an output row interleave: 8 input positions of tap b = 0 and 8 of b = 1
// become 16 consecutive outputs (unpack, then a 128-bit lane swap).
#include "kernels/x86/conv_transpose_avx2.h"

#include <immintrin.h>

namespace ignis::kernels::x86 {

void conv_transpose_f32_store_tiles(const float* cols, int64_t ld, int64_t kh, int64_t kw, int64_t rows, int64_t iw,
                                    float bias, float* y) {
  const int64_t ow = iw * kw;
  const __m256 vb = _mm256_set1_ps(bias);
  for (int64_t a = 0; a < kh; ++a) {
    for (int64_t r = 0; r < rows; ++r) {
      float* yr = y + (r * kh + a) * ow;
      const float* src = cols + a * kw * ld + r * iw;
      if (kw == 2) {
        const float* s0 = src;
        const float* s1 = src + ld;
        int64_t j = 0;
        for (; j + 8 <= iw; j += 8) {
          const __m256 v0 = _mm256_add_ps(_mm256_loadu_ps(s0 + j), vb);
          const __m256 v1 = _mm256_add_ps(_mm256_loadu_ps(s1 + j), vb);
          const __m256 lo = _mm256_unpacklo_ps(v0, v1), hi = _mm256_unpackhi_ps(v0, v1);
          _mm256_storeu_ps(yr + 2 * j, _mm256_permute2f128_ps(lo, hi, 0x20));
          _mm256_storeu_ps(yr + 2 * j + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
        }
        for (; j < iw; ++j) {
          yr[2 * j] = s0[j] + bias;
          yr[2 * j + 1] = s1[j] + bias;
        }
        continue;
      }
      for (int64_t b = 0; b < kw; ++b) {
        const float* s = src + b * ld;
        for (int64_t j = 0; j < iw; ++j) yr[j * kw + b] = s[j] + bias;
      }
    }
  }
}

}  // namespace ignis::kernels::x86
