// SPDX-License-Identifier: Apache-2.0
// The exact small-M path of the x86 MatMulNBits with AVX-512 (layout and algebra:
// matmul_nbits.h): a 64-byte chunk holds 16 columns x 8 depths; each depth's codes are one
// shift away from the low four bits of the lanes, which vpermps reads as an index into the
// floats 0..15, so a code becomes a float in two operations and meets its row of A in an FMA.
// Four accumulator chains per row (one per byte of the lane) keep the FMAs off each other's
// latency. The zero point and scale are applied once per block and column.
#include <immintrin.h>

#include "kernels/x86/matmul_nbits_avx512.h"

namespace ignis::kernels::x86 {

namespace {

// The masked conversions with every lane set: the unmasked intrinsics trip GCC 12's
// maybe-uninitialized false positive (their pass-through operand is left undefined).
constexpr __mmask16 kAll = 0xFFFF;

// The codes in bits [shift, shift + 4) of each lane as floats (vpermps reads the low 4 bits of
// each index lane).
template <unsigned Shift>
inline __m512 codes_at(__m512i v, __m512 codes_as_float) {
  return _mm512_maskz_permutexvar_ps(kAll, _mm512_maskz_srli_epi32(kAll, v, Shift), codes_as_float);
}

template <int R>
void float_rows(const Int4Weights& w, const FloatRows& a, const float* bias, float* y, int64_t ldy, int64_t g0,
                int64_t g1) {
  const __m512 codes_as_float = _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const int64_t chunks = w.block / 8, kpad = w.blocks * w.block;
  for (int64_t g = g0; g < g1; ++g) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t b = 0; b < w.blocks; ++b) {
      __m512 dot[R][4];
      for (int r = 0; r < R; ++r)
        for (int q = 0; q < 4; ++q) dot[r][q] = _mm512_setzero_ps();
      const uint8_t* c = w.chunk(g, b);
      for (int64_t p = 0; p < chunks; ++p, c += kNbitsChunkBytes) {
        const __m512i v = _mm512_loadu_si512(c);
        // Byte q of each lane: depth 8p + q in its low nibble, 8p + q + 4 in its high one.
        const __m512 lo[4] = {codes_at<0>(v, codes_as_float), codes_at<8>(v, codes_as_float),
                              codes_at<16>(v, codes_as_float), codes_at<24>(v, codes_as_float)};
        const __m512 hi[4] = {codes_at<4>(v, codes_as_float), codes_at<12>(v, codes_as_float),
                              codes_at<20>(v, codes_as_float), codes_at<28>(v, codes_as_float)};
        for (int r = 0; r < R; ++r) {
          const float* ar = a.a + r * kpad + b * w.block + 8 * p;
          for (int q = 0; q < 4; ++q) {
            dot[r][q] = _mm512_fmadd_ps(lo[q], _mm512_set1_ps(ar[q]), dot[r][q]);
            dot[r][q] = _mm512_fmadd_ps(hi[q], _mm512_set1_ps(ar[q + 4]), dot[r][q]);
          }
        }
      }
      const int64_t at = (g * w.blocks + b) * kNbitsGroupCols;
      const __m512 z = _mm512_maskz_cvtepi32_ps(
          kAll, _mm512_maskz_cvtepu8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.zero + at))));
      const __m512 s = _mm512_loadu_ps(w.scale + at);
      for (int r = 0; r < R; ++r) {
        const __m512 dot_sum = _mm512_add_ps(_mm512_add_ps(dot[r][0], dot[r][1]), _mm512_add_ps(dot[r][2], dot[r][3]));
        const __m512 centred = _mm512_fnmadd_ps(z, _mm512_set1_ps(a.sum[r * w.blocks + b]), dot_sum);
        acc[r] = _mm512_fmadd_ps(s, centred, acc[r]);
      }
    }
    store_group_avx512<R>(acc, bias, y, ldy, g * kNbitsGroupCols, w.n);
  }
}

}  // namespace

void matmul_nbits_float_rows_avx512(const Int4Weights& w, const FloatRows& a, const float* bias, float* y,
                                    int64_t ldy, int64_t g0, int64_t g1) {
  with_row_count(a.rows, [&]<int R>() { float_rows<R>(w, a, bias, y, ldy, g0, g1); });
}

}  // namespace ignis::kernels::x86
