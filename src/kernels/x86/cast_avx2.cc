// SPDX-License-Identifier: Apache-2.0
// Cast from int32, uint8 and int8 to float32, 8 values per instruction (nn_cast.cc). The
// conversion rounds int32 to the nearest float32, ties to even, as static_cast does.
#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/cast_avx2.h"

namespace ignis::kernels::x86 {

void cast_to_f32_avx2(DType from, const void* in, float* out, int64_t n) {
  int64_t i = 0;
  if (from == DType::I32) {
    const auto* src = static_cast<const int32_t*>(in);
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i, _mm256_cvtepi32_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i))));
    for (; i < n; ++i) out[i] = static_cast<float>(src[i]);
  } else if (from == DType::U8) {
    const auto* src = static_cast<const uint8_t*>(in);
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i, _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i)))));
    for (; i < n; ++i) out[i] = static_cast<float>(src[i]);
  } else {
    const auto* src = static_cast<const int8_t*>(in);
    for (; i + 8 <= n; i += 8)
      _mm256_storeu_ps(out + i, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(src + i)))));
    for (; i < n; ++i) out[i] = static_cast<float>(src[i]);
  }
}

}  // namespace ignis::kernels::x86
