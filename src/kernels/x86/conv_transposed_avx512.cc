// SPDX-License-Identifier: Apache-2.0
// The store half of the transposed convolution (conv_transposed.h): 16 positions x 16
// channels of C^T are loaded as 16 rows, transposed in registers (unpack, shuffle, then
// 128-bit block shuffles: 64 shuffles per 256 values) and each resulting channel row gets
// bias, residual and activation before one store of 16 positions. Tails are masked loads
// and stores, so nothing outside [j0, j1) x [c0, c1) is read from C^T or written to y.
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/activation_avx512.h"
#include "kernels/x86/conv_transposed.h"
#include "kernels/x86/simd_avx512.h"

namespace ignis::kernels::x86 {

namespace {

__mmask16 first_lanes(int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1u); }

template <Activation A>
void store_transposed(const float* ct, int64_t ldct, int64_t j0, int64_t j1, int64_t c0, int64_t c1,
                      const GemmEpilogue& e, float* y, int64_t ldy) {
  const ActivationParams512 k(e);
  const float* bias = e.bias;
  const float* residual = e.residual;
  const int64_t rld = e.residual_ld;
  for (int64_t c = c0; c < c1; c += 16) {
    const int64_t channels = std::min<int64_t>(16, c1 - c);
    const __mmask16 cmask = first_lanes(channels);
    for (int64_t j = j0; j < j1; j += 16) {
      const int64_t positions = std::min<int64_t>(16, j1 - j);
      const __mmask16 jmask = first_lanes(positions);
      __m512 r[16];
      for (int q = 0; q < 16; ++q)
        r[q] = q < positions ? _mm512_maskz_loadu_ps(cmask, ct + (j + q) * ldct + c) : _mm512_setzero_ps();
      transpose16(r);
      for (int q = 0; q < channels; ++q) {
        __m512 v = r[q];
        if (bias) v = _mm512_add_ps(v, _mm512_set1_ps(bias[c + q]));
        if (residual) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(jmask, residual + (c + q) * rld + j));
        // A masked store that splits a cache line costs several times a plain one.
        if (positions == 16) _mm512_storeu_ps(y + (c + q) * ldy + j, activate_avx512<A>(v, k));
        else _mm512_mask_storeu_ps(y + (c + q) * ldy + j, jmask, activate_avx512<A>(v, k));
      }
    }
  }
}

}  // namespace

void conv_f32_store_transposed_avx512(const float* ct, int64_t ldct, int64_t j0, int64_t j1, int64_t c0, int64_t c1,
                                      const GemmEpilogue& e, float* y, int64_t ldy) {
  with_activation(e.act, [&]<Activation A>() { store_transposed<A>(ct, ldct, j0, j1, c0, c1, e, y, ldy); });
}

}  // namespace ignis::kernels::x86
