// SPDX-License-Identifier: Apache-2.0
// The byte table lookup of ai.ignis QLinearLookup on AVX-512 VBMI: 64 bytes at a time, each
// looked up in both halves of the 256-entry table at once (vpermi2b indexes 128 bytes held in
// two registers by an index's low 7 bits), the half then chosen by the index's top bit.
#include <immintrin.h>

#include "kernels/x86/quantize_lookup.h"

namespace ignis::kernels::x86 {

void qlinear_lookup_avx512vbmi(const uint8_t* x, uint8_t flip, const uint8_t* table, uint8_t* y, int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
  for (int64_t i = 0; i < n; i += 64) {
    const __mmask64 live = n - i >= 64 ? ~__mmask64{0} : (__mmask64{1} << (n - i)) - 1;
    const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(live, x + i), f);
    const __m512i low = _mm512_permutex2var_epi8(t0, v, t1);
    const __m512i high = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_mask_storeu_epi8(y + i, live, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), low, high));
  }
}

}  // namespace ignis::kernels::x86
