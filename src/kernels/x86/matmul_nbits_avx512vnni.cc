// SPDX-License-Identifier: Apache-2.0
// The int8 path of the x86 MatMulNBits with AVX-512 VNNI (layout and algebra: matmul_nbits.h):
// one 64-byte chunk of codes feeds two vpdpbusd (low and high nibbles) per row of A, 16 columns
// x 4 depths each; per K block the int32 sums get the zero-point correction and are scaled
// into float accumulators.
#include <immintrin.h>

#include <cstring>

#include "kernels/x86/matmul_nbits_avx512.h"

namespace ignis::kernels::x86 {

namespace {

// The masked conversions with every lane set: the unmasked intrinsics trip GCC 12's
// maybe-uninitialized false positive (their pass-through operand is left undefined).
constexpr __mmask16 kAll = 0xFFFF;

inline __m512i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm512_set1_epi32(v);
}

template <int R>
void int8_rows(const Int4Weights& w, const Int8Rows& a, const float* bias, float* y, int64_t ldy, int64_t g0,
               int64_t g1) {
  const __m512i low = _mm512_set1_epi8(0x0F);
  const int64_t chunks = w.block / 8, kpad = w.blocks * w.block;
  for (int64_t g = g0; g < g1; ++g) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    for (int64_t b = 0; b < w.blocks; ++b) {
      // Two chains per row (low and high nibbles) halve the dependency on vpdpbusd's latency.
      __m512i dot_lo[R], dot_hi[R];
      for (int r = 0; r < R; ++r) dot_lo[r] = dot_hi[r] = _mm512_setzero_si512();
      const uint8_t* c = w.chunk(g, b);
      for (int64_t p = 0; p < chunks; ++p, c += kNbitsChunkBytes) {
        const __m512i v = _mm512_loadu_si512(c);
        const __m512i lo = _mm512_and_si512(v, low);
        const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(v, 4), low);
        for (int r = 0; r < R; ++r) {
          const int8_t* ar = a.aq + r * kpad + b * w.block + 8 * p;
          dot_lo[r] = _mm512_dpbusd_epi32(dot_lo[r], lo, broadcast4(ar));
          dot_hi[r] = _mm512_dpbusd_epi32(dot_hi[r], hi, broadcast4(ar + 4));
        }
      }
      const int64_t at = (g * w.blocks + b) * kNbitsGroupCols;
      const __m512i z = _mm512_maskz_cvtepu8_epi32(kAll, _mm_loadu_si128(reinterpret_cast<const __m128i*>(w.zero + at)));
      const __m512 s = _mm512_loadu_ps(w.scale + at);
      for (int r = 0; r < R; ++r) {
        const __m512i dot = _mm512_add_epi32(dot_lo[r], dot_hi[r]);
        const __m512i t = _mm512_sub_epi32(dot, _mm512_mullo_epi32(z, _mm512_set1_epi32(a.sum[r * w.blocks + b])));
        acc[r] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAll, t), _mm512_mul_ps(s, _mm512_set1_ps(a.scale[r * w.blocks + b])),
                                 acc[r]);
      }
    }
    store_group_avx512<R>(acc, bias, y, ldy, g * kNbitsGroupCols, w.n);
  }
}

}  // namespace

void matmul_nbits_int8_vnni(const Int4Weights& w, const Int8Rows& a, const float* bias, float* y, int64_t ldy,
                            int64_t g0, int64_t g1) {
  with_row_count(a.rows, [&]<int R>() { int8_rows<R>(w, a, bias, y, ldy, g0, g1); });
}

}  // namespace ignis::kernels::x86
