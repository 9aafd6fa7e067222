// SPDX-License-Identifier: Apache-2.0
// Requantization of 16 int32 sums to uint8 / int8 for the AVX-512 translation units (the VNNI
// GEMM tile, the AVX-512 depthwise convolutions): requantize_avx2.h's arithmetic (onnxruntime's,
// the reference's), 16 lanes at a time.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace ignis::kernels::x86 {

struct RequantAvx512 {
  __m512 lo, hi;  // q_min - zp, q_max - zp
  __m512i zp;
  bool is_signed;
  RequantAvx512(int32_t zero_point, int32_t q_min, int32_t q_max, bool signed_out)
      : lo(_mm512_set1_ps(static_cast<float>(q_min - zero_point))),
        hi(_mm512_set1_ps(static_cast<float>(q_max - zero_point))),
        zp(_mm512_set1_epi32(zero_point)),
        is_signed(signed_out) {}

  // The 16 requantized values of acc (multipliers m, per lane) as int32 in range: the product
  // clamped in float32 (max(NaN, lo) is lo, as in the reference), rounded half to even, plus
  // the zero point. (maskz forms: GCC 12 warns that the plain ones read an undefined register.)
  __m512i values(__m512i acc, __m512 m) const {
    constexpr __mmask16 all = 0xFFFF;
    const __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), m);
    const __m512 c = _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, v, lo), hi);
    return _mm512_add_epi32(_mm512_maskz_cvt_roundps_epi32(all, c, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC), zp);
  }

  // The same as 16 bytes (the values are in the output type's range, so truncating keeps them).
  __m128i bytes(__m512i acc, __m512 m) const { return _mm512_maskz_cvtepi32_epi8(0xFFFF, values(acc, m)); }
};

}  // namespace ignis::kernels::x86
