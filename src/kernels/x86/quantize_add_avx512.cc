// SPDX-License-Identifier: Apache-2.0
// AVX-512 inner loop of QLinearAdd (quantize_add_avx2.cc holds the kernel): 16 lanes of the
// arithmetic of kernels/qlinear_add.h, in its order and without fused multiply-adds. Every
// intrinsic is the zero-masked form with all lanes set: the unmasked ones' undefined
// pass-through operand trips GCC 12's maybe-uninitialized warning.
#include <immintrin.h>

#include "kernels/x86/quantize_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr __mmask16 kAll = 0xFFFF;

__m512i widen(const uint8_t* p, bool is_signed) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return is_signed ? _mm512_maskz_cvtepi8_epi32(kAll, b) : _mm512_maskz_cvtepu8_epi32(kAll, b);
}

}  // namespace

int64_t qlinear_add_range_avx512(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t begin, int64_t end,
                                 const QLinearAddParams& p) {
  const __m512i za = _mm512_set1_epi32(p.a_zero_point), zb = _mm512_set1_epi32(p.b_zero_point);
  const __m512 sa = _mm512_set1_ps(p.a_ratio), sb = _mm512_set1_ps(p.b_ratio);
  const __m512 zc = _mm512_set1_ps(static_cast<float>(p.c_zero_point));
  const __m512 lo = _mm512_set1_ps(p.is_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps(p.is_signed ? 127.0f : 255.0f);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16) {
    const __m512 fa = _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_sub_epi32(kAll, widen(a + i, p.is_signed), za)), sa);
    const __m512 fb = _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_sub_epi32(kAll, widen(b + i, p.is_signed), zb)), sb);
    __m512 q = _mm512_maskz_roundscale_ps(kAll, _mm512_maskz_add_ps(kAll, fa, fb), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, _mm512_maskz_add_ps(kAll, q, zc), lo), hi);  // max(NaN, lo) is lo
    // In range already, so the truncating narrow keeps the values (and their two's complement).
    _mm_storeu_si128(reinterpret_cast<__m128i*>(c + i), _mm512_maskz_cvtepi32_epi8(kAll, _mm512_maskz_cvtps_epi32(kAll, q)));
  }
  return i;
}

}  // namespace ignis::kernels::x86
