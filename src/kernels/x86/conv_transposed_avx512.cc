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

namespace ignis::kernels::x86 {

namespace {

__mmask16 first_lanes(int64_t n) { return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1u); }

// GCC 12 warns that the unmasked forms of these shuffles read an uninitialized pass-through
// operand; the all-lanes zero-masked forms are the same instructions.
constexpr __mmask16 kAll = 0xFFFF;

// r[i] = row i of a 16x16 block in, column i of it out. Every step rewrites the registers
// it reads in place (groups of 2, 4, then 4), so no second array of 16 competes for the 32
// zmm registers (that spilled and cost 3x).
inline void transpose16(__m512 r[16]) {
  for (int i = 0; i < 16; i += 2) {
    const __m512 lo = _mm512_maskz_unpacklo_ps(kAll, r[i], r[i + 1]);
    r[i + 1] = _mm512_maskz_unpackhi_ps(kAll, r[i], r[i + 1]);
    r[i] = lo;
  }
  // In each 128-bit block L, r[i + q] gets column 4L + q of rows i .. i + 3.
  for (int i = 0; i < 16; i += 4) {
    const __m512 a = r[i], b = r[i + 1], c = r[i + 2], d = r[i + 3];
    r[i] = _mm512_maskz_shuffle_ps(kAll, a, c, _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_maskz_shuffle_ps(kAll, a, c, _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_maskz_shuffle_ps(kAll, b, d, _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_maskz_shuffle_ps(kAll, b, d, _MM_SHUFFLE(3, 2, 3, 2));
  }
  // Column 4L + q is block L of r[q], r[4 + q], r[8 + q], r[12 + q].
  for (int q = 0; q < 4; ++q) {
    const __m512 x0 = _mm512_maskz_shuffle_f32x4(kAll, r[q], r[4 + q], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 x1 = _mm512_maskz_shuffle_f32x4(kAll, r[8 + q], r[12 + q], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 x2 = _mm512_maskz_shuffle_f32x4(kAll, r[q], r[4 + q], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 x3 = _mm512_maskz_shuffle_f32x4(kAll, r[8 + q], r[12 + q], _MM_SHUFFLE(3, 2, 3, 2));
    r[q] = _mm512_maskz_shuffle_f32x4(kAll, x0, x1, _MM_SHUFFLE(2, 0, 2, 0));
    r[4 + q] = _mm512_maskz_shuffle_f32x4(kAll, x0, x1, _MM_SHUFFLE(3, 1, 3, 1));
    r[8 + q] = _mm512_maskz_shuffle_f32x4(kAll, x2, x3, _MM_SHUFFLE(2, 0, 2, 0));
    r[12 + q] = _mm512_maskz_shuffle_f32x4(kAll, x2, x3, _MM_SHUFFLE(3, 1, 3, 1));
  }
}

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
