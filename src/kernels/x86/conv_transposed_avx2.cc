// SPDX-License-Identifier: Apache-2.0
// The store half of the transposed convolution (conv_transposed.h) on AVX2: 8 positions x 8
// channels of C^T are loaded as 8 rows, transposed in registers (transpose8: 24 shuffles per
// 64 values) and each resulting channel row gets bias, residual and activation before one
// store of 8 positions. Tails are masked loads and stores, so nothing outside [j0, j1) x
// [c0, c1) is read from C^T or written to y.
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/conv_transposed.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

void conv_f32_store_transposed_avx2(const float* ct, int64_t ldct, int64_t j0, int64_t j1, int64_t c0, int64_t c1,
                                    const GemmEpilogue& e, float* y, int64_t ldy) {
  const float* bias = e.bias;
  const float* residual = e.residual;
  const int64_t rld = e.residual_ld;
  for (int64_t c = c0; c < c1; c += 8) {
    const int channels = static_cast<int>(std::min<int64_t>(8, c1 - c));
    const __m256i cmask = lane_mask(channels);
    for (int64_t j = j0; j < j1; j += 8) {
      const int positions = static_cast<int>(std::min<int64_t>(8, j1 - j));
      const __m256i jmask = lane_mask(positions);
      __m256 r[8];
      for (int q = 0; q < 8; ++q)
        r[q] = q >= positions ? _mm256_setzero_ps()
               : channels == 8 ? _mm256_loadu_ps(ct + (j + q) * ldct + c)
                               : _mm256_maskload_ps(ct + (j + q) * ldct + c, cmask);
      transpose8(r);
      for (int q = 0; q < channels; ++q) {
        __m256 v = r[q];
        if (bias) v = _mm256_add_ps(v, _mm256_broadcast_ss(bias + c + q));
        float* out = y + (c + q) * ldy + j;
        if (positions == 8) {
          if (residual) v = _mm256_add_ps(v, _mm256_loadu_ps(residual + (c + q) * rld + j));
          _mm256_storeu_ps(out, activate_avx2(v, e));
        } else {
          if (residual) v = _mm256_add_ps(v, _mm256_maskload_ps(residual + (c + q) * rld + j, jmask));
          _mm256_maskstore_ps(out, jmask, activate_avx2(v, e));
        }
      }
    }
  }
}

}  // namespace ignis::kernels::x86
