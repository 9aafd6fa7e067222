// SPDX-License-Identifier: Apache-2.0
// Requantization of 16 int32 sums to uint8 / int8 for the AVX-512 translation units (the VNNI
// GEMM tile, the AVX-512 depthwise convolution), with the bytes of the float64 reference
// (requantize_avx2.h) at float32 cost.
//
// The reference computes d = fl64(fl64(acc * m) + zp) and rounds it half to even. Here
// vf = fl32(fl32(float(acc) * m) + zp) is rounded instead. Against the exact value v = acc * m
// + zp, |vf - v| <= 2^-21 (|vf| + 256) (three float32 roundings of at most 2^-24 relative each,
// |zp| <= 255) and |d - v| is smaller still; so while |vf| <= 1024, when vf lies farther than
// 2^-9 from the nearest half-integer, v and d lie on the same side of it and round(vf) =
// round(d). Beyond 1024 both saturate alike (the bounds are within [-128, 255]). Lanes within
// 2^-9 of a half-integer (about one in 250), and NaN or infinite ones, send the 16 values
// through the float64 path. The clamp then acts on equal integers.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/requantize_avx2.h"

namespace ignis::kernels::x86 {

struct RequantAvx512 {
  __m512 zp, lo, hi;
  RequantAvx2 exact;
  RequantAvx512(int32_t zero_point, int32_t q_min, int32_t q_max, bool signed_out)
      : zp(_mm512_set1_ps(static_cast<float>(zero_point))),
        lo(_mm512_set1_ps(static_cast<float>(q_min))),
        hi(_mm512_set1_ps(static_cast<float>(q_max))),
        exact(zero_point, q_min, q_max, signed_out) {}

  // The 16 requantized values of acc (multipliers m, per lane) as int32 in range. (maskz forms:
  // GCC 12 warns that the plain ones read an undefined register.)
  __m512i values(__m512i acc, __m512 m) const {
    constexpr __mmask16 all = 0xFFFF;
    const __m512 vf = _mm512_add_ps(_mm512_mul_ps(_mm512_maskz_cvtepi32_ps(all, acc), m), zp);
    const __m512 r = _mm512_maskz_roundscale_ps(all, vf, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m512 frac =
        _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(_mm512_sub_ps(vf, r)), _mm512_set1_epi32(0x7FFFFFFF)));
    // Not (|vf - r| <= 0.5 - 2^-9), NaN included.
    const __mmask16 unsure = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f - 1.0f / 512), _CMP_NLE_UQ);
    if (unsure) return exact_values(acc, m);
    return _mm512_maskz_cvtps_epi32(all, _mm512_maskz_min_ps(all, _mm512_maskz_max_ps(all, r, lo), hi));
  }

 private:
  // The float64 path of requantize_avx2.h, eight lanes at a time.
  __m512i exact_values(__m512i acc, __m512 m) const {
    alignas(64) int32_t a[16];
    alignas(64) float ms[16];
    alignas(64) int32_t out[16];
    _mm512_store_si512(a, acc);
    _mm512_store_ps(ms, m);
    for (int h = 0; h < 2; ++h) {
      const __m256i a8 = _mm256_load_si256(reinterpret_cast<const __m256i*>(a + 8 * h));
      const __m256d m_lo = _mm256_cvtps_pd(_mm_load_ps(ms + 8 * h)), m_hi = _mm256_cvtps_pd(_mm_load_ps(ms + 8 * h + 4));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + 8 * h), exact.values8(a8, m_lo, m_hi));
    }
    return _mm512_load_si512(out);
  }
};

}  // namespace ignis::kernels::x86
