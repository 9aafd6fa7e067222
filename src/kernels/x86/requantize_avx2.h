// SPDX-License-Identifier: Apache-2.0
// Requantization of int32 sums to uint8 / int8 for the AVX2 translation units (the int8 GEMM
// tile, the int8 convolutions), in onnxruntime's arithmetic, which the reference QLinearConv and
// QLinearMatMul follow (kernels/ref/quantize_integer.cc):
//   y = clamp(round_half_even(fl32(float(acc) * m)) + zp, q_min, q_max)
// with m the float32 multiplier of the row or column. The product is clamped to
// [q_min - zp, q_max - zp] before the conversion to int32: rounding is monotonic and keeps
// integers, so clamping first gives the same value, and a product past int32 (or NaN) cannot
// wrap. Include only from files compiled with AVX2 flags.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace ignis::kernels::x86 {

// The constants of one requantization: zero point and clamp bounds.
struct RequantAvx2 {
  __m256 lo, hi;  // q_min - zp, q_max - zp
  __m256i zp;
  bool is_signed;
  RequantAvx2(int32_t zero_point, int32_t q_min, int32_t q_max, bool signed_out)
      : lo(_mm256_set1_ps(static_cast<float>(q_min - zero_point))),
        hi(_mm256_set1_ps(static_cast<float>(q_max - zero_point))),
        zp(_mm256_set1_epi32(zero_point)),
        is_signed(signed_out) {}

  // Eight sums with their multipliers (one per lane) as int32 values in range. max(NaN, lo) is
  // lo: NaN saturates low, as in the reference. cvtps rounds half to even (the default MXCSR
  // mode, which std::nearbyint in the reference also uses).
  __m256i values8(__m256i acc, __m256 m) const {
    const __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), m);
    return _mm256_add_epi32(_mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(v, lo), hi)), zp);
  }

  // The same as eight bytes in the low half.
  __m128i bytes8(__m256i acc, __m256 m) const { return as_bytes(values8(acc, m)); }

  // Sixteen sums (acc0 with multipliers m0, acc1 with m1) as 16 bytes.
  __m128i bytes16(__m256i acc0, __m256 m0, __m256i acc1, __m256 m1) const {
    // packs interleaves the 128-bit halves: [v0 0-3, v1 0-3 | v0 4-7, v1 4-7] as int16.
    const __m256i w16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(values8(acc0, m0), values8(acc1, m1)), 0xD8);
    const __m128i lo16 = _mm256_castsi256_si128(w16), hi16 = _mm256_extracti128_si256(w16, 1);
    return is_signed ? _mm_packs_epi16(lo16, hi16) : _mm_packus_epi16(lo16, hi16);
  }

 private:
  __m128i as_bytes(__m256i v) const {
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    // The values are already in the output type's range, so either pack keeps them.
    return is_signed ? _mm_packs_epi16(w16, w16) : _mm_packus_epi16(w16, w16);
  }
};

// One value, the scalar form of RequantAvx2::values8 (and of the reference).
inline int32_t requantize_scalar(int32_t acc, float m, int32_t zero_point, int32_t q_min, int32_t q_max) {
  const float r = std::nearbyint(static_cast<float>(acc) * m);
  if (!(r >= static_cast<float>(q_min - zero_point))) return q_min;
  if (r >= static_cast<float>(q_max - zero_point)) return q_max;
  return static_cast<int32_t>(r) + zero_point;
}

}  // namespace ignis::kernels::x86
