// SPDX-License-Identifier: Apache-2.0
// Requantization of int32 sums to uint8 / int8 for the AVX2 translation units (the int8 GEMM
// tile and the depthwise int8 convolution): y = clamp(round_half_even(double(acc) * double(m)
// + zp), lo, hi), in float64 so that the bytes equal the reference QLinearConv's and
// QLinearMatMul's; or the same bytes at float32 cost (RequantAvx2::bytes8 with float32
// multipliers: rounded in float32, the lanes near a tie redone in float64, as
// requantize_avx512.h explains). Include only from files compiled with AVX2 flags.
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
  __m256 zp_f, lo_f, hi_f;
  bool is_signed;
  RequantAvx2(int32_t zero_point, int32_t q_min, int32_t q_max, bool signed_out)
      : zp(_mm256_set1_pd(zero_point)),
        lo(_mm256_set1_pd(q_min)),
        hi(_mm256_set1_pd(q_max)),
        zp_f(_mm256_set1_ps(static_cast<float>(zero_point))),
        lo_f(_mm256_set1_ps(static_cast<float>(q_min))),
        hi_f(_mm256_set1_ps(static_cast<float>(q_max))),
        is_signed(signed_out) {}

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
  __m128i bytes8(__m256i acc, __m256d m_lo, __m256d m_hi) const { return as_bytes(values8(acc, m_lo, m_hi)); }

  // The same values with float32 multipliers (one per lane), computed in float32 with one
  // fused multiply-add (a rounding fewer than requantize_avx512.h counts, so its bound holds
  // lane by lane): a lane farther than 2^-9 from a half-integer rounds as the float64
  // expression does; otherwise (about one lane in 250, or NaN and infinite values) the eight
  // go through the float64 path.
  __m256i values8(__m256i acc, __m256 m) const {
    __m256 r;
    if (unsure(acc, m, r))
      return values8(acc, _mm256_cvtps_pd(_mm256_castps256_ps128(m)), _mm256_cvtps_pd(_mm256_extractf128_ps(m, 1)));
    return clamped(r);
  }

  __m128i bytes8(__m256i acc, __m256 m) const { return as_bytes(values8(acc, m)); }

  // Sixteen sums (acc0 with multipliers m0, acc1 with m1) as 16 bytes, one test for both.
  __m128i bytes16(__m256i acc0, __m256 m0, __m256i acc1, __m256 m1) const {
    __m256 r0, r1;
    const bool unsure0 = unsure(acc0, m0, r0), unsure1 = unsure(acc1, m1, r1);
    if (unsure0 || unsure1) return _mm_unpacklo_epi64(bytes8(acc0, m0), bytes8(acc1, m1));
    // packs interleaves the 128-bit halves: [v0 0-3, v1 0-3 | v0 4-7, v1 4-7] as int16.
    const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(clamped(r0), clamped(r1)), 0xD8);
    const __m128i lo = _mm256_castsi256_si128(w16), hi = _mm256_extracti128_si256(w16, 1);
    return is_signed ? _mm_packs_epi16(lo, hi) : _mm_packus_epi16(lo, hi);
  }

 private:
  // r = round(acc * m + zp) in float32 (one fused multiply-add); whether a lane lies within
  // 2^-9 of a half-integer or is not finite: not (|vf - r| <= 0.5 - 2^-9), NaN included.
  bool unsure(__m256i acc, __m256 m, __m256& r) const {
    const __m256 vf = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc), m, zp_f);
    r = _mm256_round_ps(vf, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), _mm256_sub_ps(vf, r));
    return _mm256_movemask_ps(_mm256_cmp_ps(frac, _mm256_set1_ps(0.5f - 1.0f / 512), _CMP_NLE_UQ)) != 0;
  }

  __m256i clamped(__m256 r) const { return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(r, lo_f), hi_f)); }

  __m128i as_bytes(__m256i v) const {
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
