// SPDX-License-Identifier: Apache-2.0
// AVX-512 inner loops of QLinearMul (quantize_mul_avx2.cc holds the kernel): 16 lanes of the
// arithmetic of kernels/qlinear_mul.h. The centered integer product is formed as the product of
// the two centered values in float32, which is exact (both are integers below 2^8 in magnitude,
// the product below 2^16) and so equals the float32 of the integer product the reference
// converts, without vpmulld. Every intrinsic is the zero-masked form with all lanes set: the
// unmasked ones' undefined pass-through operand trips GCC 12's maybe-uninitialized warning.
#include <immintrin.h>

#include "kernels/x86/quantize_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr __mmask16 kAll = 0xFFFF;

// 16 bytes at p, centered on zp, as float32.
__m512 centered(const uint8_t* p, bool is_signed, __m512i zp) {
  const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m512i v = is_signed ? _mm512_maskz_cvtepi8_epi32(kAll, b) : _mm512_maskz_cvtepu8_epi32(kAll, b);
  return _mm512_maskz_cvtepi32_ps(kAll, _mm512_maskz_sub_epi32(kAll, v, zp));
}

// 16 exact products to 16 bytes at c.
void store_products(__m512 products, const QLinearMulParams& p, uint8_t* c) {
  const __m512 zc = _mm512_set1_ps(static_cast<float>(p.c_zero_point));
  const __m512 lo = _mm512_set1_ps(p.is_signed ? -128.0f : 0.0f), hi = _mm512_set1_ps(p.is_signed ? 127.0f : 255.0f);
  const __m512 scaled = _mm512_maskz_mul_ps(kAll, products, _mm512_set1_ps(p.ratio));
  __m512 q = _mm512_maskz_roundscale_ps(kAll, scaled, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  q = _mm512_maskz_min_ps(kAll, _mm512_maskz_max_ps(kAll, _mm512_maskz_add_ps(kAll, q, zc), lo), hi);
  // In range already, so the truncating narrow keeps the values (and their two's complement).
  _mm_storeu_si128(reinterpret_cast<__m128i*>(c), _mm512_maskz_cvtepi32_epi8(kAll, _mm512_maskz_cvtps_epi32(kAll, q)));
}

}  // namespace

int64_t qlinear_mul_range_avx512(const uint8_t* a, const uint8_t* b, uint8_t* c, int64_t begin, int64_t end,
                                 const QLinearMulParams& p) {
  const __m512i za = _mm512_set1_epi32(p.a_zero_point), zb = _mm512_set1_epi32(p.b_zero_point);
  int64_t i = begin;
  for (; i + 16 <= end; i += 16)
    store_products(_mm512_maskz_mul_ps(kAll, centered(a + i, p.is_signed, za), centered(b + i, p.is_signed, zb)), p, c + i);
  return i;
}

int64_t qlinear_mul_run_avx512(const uint8_t* full, int32_t full_zero_point, int32_t one_centered, uint8_t* c,
                               int64_t n, const QLinearMulParams& p) {
  const __m512i zf = _mm512_set1_epi32(full_zero_point);
  const __m512 s = _mm512_set1_ps(static_cast<float>(one_centered));
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    store_products(_mm512_maskz_mul_ps(kAll, centered(full + i, p.is_signed, zf), s), p, c + i);
  return i;
}

}  // namespace ignis::kernels::x86
