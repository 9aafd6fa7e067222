// SPDX-License-Identifier: Apache-2.0
// Requantization of int32 sums to uint8 / int8 for the AVX2 translation units (the int8 GEMM
// tile and the depthwise int8 convolution): y = clamp(round_half_even(double(acc) * double(m)
// + zp), lo, hi), in float64 so that the bytes equal the reference QLinearConv's and
// QLinearMatMul's. Include only from files compiled with AVX2 flags.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ignis::kernels::x86 {

// Hides `v` from the optimizer, so that a product is rounded before the next addition: GCC
// contracts _mm*_add_pd(_mm*_mul_pd(a, b), c) into one fused multiply-add, which rounds once
// and may then differ from the reference kernel's two roundings.
template <class V>
inline V rounded(V v) {
  asm("" : "+v"(v));
  return v;
}

// The constants of one requantization: zero point and clamp bounds.
struct RequantAvx2 {
  __m256d zp, lo, hi;
  bool is_signed;
  RequantAvx2(int32_t zero_point, int32_t q_min, int32_t q_max, bool signed_out)
      : zp(_mm256_set1_pd(zero_point)), lo(_mm256_set1_pd(q_min)), hi(_mm256_set1_pd(q_max)), is_signed(signed_out) {}

  // Eight sums, lanes 0-3 scaled by m_lo and 4-7 by m_hi, as int32 values in range.
  __m256i values8(__m256i acc, __m256d m_lo, __m256d m_hi) const {
    // max(NaN, lo) is lo: NaN saturates low, as in the reference.
    const auto four = [&](__m128i a, __m256d m) {
      __m256d v = _mm256_add_pd(rounded(_mm256_mul_pd(_mm256_cvtepi32_pd(a), m)), zp);
      v = _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
      return _mm256_cvtpd_epi32(_mm256_min_pd(_mm256_max_pd(v, lo), hi));
    };
    return _mm256_set_m128i(four(_mm256_extracti128_si256(acc, 1), m_hi), four(_mm256_castsi256_si128(acc), m_lo));
  }

  // The same as eight bytes in the low half.
  __m128i bytes8(__m256i acc, __m256d m_lo, __m256d m_hi) const {
    const __m256i v = values8(acc, m_lo, m_hi);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    // The values are already in the output type's range, so either pack keeps them.
    return is_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16);
  }
};

// One value, the scalar form of RequantAvx2::bytes8.
inline int32_t requantize_scalar(int32_t acc, float m, int32_t zero_point, int32_t q_min, int32_t q_max) {
  const double r = std::nearbyint(rounded(static_cast<double>(acc) * static_cast<double>(m)) + zero_point);
  if (!(r >= q_min)) return q_min;
  return static_cast<int32_t>(std::min(r, static_cast<double>(q_max)));
}

}  // namespace ignis::kernels::x86
