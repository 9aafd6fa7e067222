// SPDX-License-Identifier: Apache-2.0
// Packing a [K x N] matrix given as row pointers (a convolution's input channels, its im2col
// rows, or shifted views of its padded input) into the int8 GEMM's B layout (gemm_int8.h) at run time. Four rows of 32 bytes become one
// packed quad row of a panel by two rounds of byte / word interleaving and a lane swap; the
// column sums come from the same registers (vpmaddubsw against ones, then vpmaddwd: exact).
// Also the signed copy of a run-time A for the AVX2 vpmaddubsw tile (int8_signed_rows).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/gemm_int8.h"

namespace ignis::kernels::x86 {

namespace {

// Interleaves rows r0..r3 (32 columns each) into four vectors holding columns 0-7, 8-15,
// 16-23 and 24-31 as 4-byte quads (depth-minor), flips uint8 to the stored int8 form, stores
// them at `out` and adds each column's sum of the stored bytes to sums[0..3] (8 columns each).
template <bool kSums>
inline void pack_quad_row(__m256i r0, __m256i r1, __m256i r2, __m256i r3, __m256i flip, int8_t* out, __m256i* sums) {
  const __m256i t0 = _mm256_unpacklo_epi8(r0, r1), t1 = _mm256_unpackhi_epi8(r0, r1);
  const __m256i u0 = _mm256_unpacklo_epi8(r2, r3), u1 = _mm256_unpackhi_epi8(r2, r3);
  const __m256i q0 = _mm256_unpacklo_epi16(t0, u0), q1 = _mm256_unpackhi_epi16(t0, u0);
  const __m256i q2 = _mm256_unpacklo_epi16(t1, u1), q3 = _mm256_unpackhi_epi16(t1, u1);
  const __m256i o[4] = {_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q2, q3, 0x20),
                        _mm256_permute2x128_si256(q0, q1, 0x31), _mm256_permute2x128_si256(q2, q3, 0x31)};
  const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1);
  for (int c = 0; c < 4; ++c) {
    const __m256i stored = _mm256_xor_si256(o[c], flip);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + c * 32), stored);
    if constexpr (kSums) sums[c] = _mm256_add_epi32(sums[c], _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, stored), ones16));
  }
}

}  // namespace

void int8_pack_rows(const uint8_t* const* rows, int64_t col0, int64_t k, int64_t n, bool is_unsigned, int8_t* out,
                    int32_t* col_sums) {
  const int64_t quads = (k + kInt8Quad - 1) / kInt8Quad;
  const int64_t panel_bytes = quads * kInt8Quad * kInt8PanelCols;
  // Stored bytes are the values minus 128 for uint8 (flipping the top bit): a missing row or
  // column is stored as 0, i.e. read as the raw value `pad`.
  const uint8_t pad = is_unsigned ? 0x80 : 0x00;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(pad));
  const __m256i pad_row = flip;
  alignas(32) uint8_t tail[4][32];
  for (int64_t j0 = 0; j0 < n; j0 += kInt8PanelCols) {
    const int64_t cols = std::min<int64_t>(kInt8PanelCols, n - j0);
    int8_t* panel = out + j0 / kInt8PanelCols * panel_bytes;
    __m256i sums[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    for (int64_t q = 0; q < quads; ++q) {
      __m256i r[4];
      for (int rr = 0; rr < 4; ++rr) {
        const int64_t kk = q * kInt8Quad + rr;
        if (kk >= k) {
          r[rr] = pad_row;
        } else if (cols == kInt8PanelCols) {
          r[rr] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[kk] + col0 + j0));
        } else {
          std::memset(tail[rr], pad, sizeof tail[rr]);
          std::memcpy(tail[rr], rows[kk] + col0 + j0, static_cast<size_t>(cols));
          r[rr] = _mm256_load_si256(reinterpret_cast<const __m256i*>(tail[rr]));
        }
      }
      if (col_sums) pack_quad_row<true>(r[0], r[1], r[2], r[3], flip, panel + q * kInt8Quad * kInt8PanelCols, sums);
      else pack_quad_row<false>(r[0], r[1], r[2], r[3], flip, panel + q * kInt8Quad * kInt8PanelCols, sums);
    }
    if (!col_sums) continue;
    // The sums were of stored bytes; the uint8 values are 128 more per real row.
    alignas(32) int32_t s[32];
    for (int c = 0; c < 4; ++c) _mm256_store_si256(reinterpret_cast<__m256i*>(s + c * 8), sums[c]);
    const int32_t shift = is_unsigned ? static_cast<int32_t>(128 * k) : 0;
    for (int64_t c = 0; c < cols; ++c) col_sums[j0 + c] = s[c] + shift;
  }
}

int int8_signed_rows(const uint8_t* a, bool is_unsigned, int64_t m, int64_t k, int8_t* out, int32_t* held) {
  const uint8_t flip_byte = is_unsigned ? 0x80 : 0;
  const __m256i flip = _mm256_set1_epi8(static_cast<char>(flip_byte));
  const auto count_of = [&](const uint8_t* src, int8_t value) {
    const __m256i target = _mm256_set1_epi8(value);
    int64_t count = 0, kk = 0;
    for (; kk + 32 <= k; kk += 32) {
      const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + kk)), flip);
      count += __builtin_popcount(static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, target))));
    }
    for (; kk < k; ++kk) count += static_cast<int8_t>(src[kk] ^ flip_byte) == value;
    return count;
  };
  int64_t lowest = 0, highest = 0;
  for (int64_t i = 0; i < m; ++i) {
    lowest += count_of(a + i * k, -128);
    highest += count_of(a + i * k, 127);
  }
  const int shift = highest < lowest ? 1 : 0;
  const __m256i floor = _mm256_set1_epi8(-127), one = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < m; ++i) {
    const uint8_t* src = a + i * k;
    int8_t* dst = out + i * k;
    held[i] = static_cast<int32_t>(count_of(src, shift ? 127 : -128));
    int64_t kk = 0;
    for (; kk + 32 <= k; kk += 32) {
      const __m256i v = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + kk)), flip);
      // v + 1 saturates 128 to 127; max keeps -128 at -127.
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + kk), shift ? _mm256_adds_epi8(v, one) : _mm256_max_epi8(v, floor));
    }
    for (; kk < k; ++kk) {
      const int v = static_cast<int8_t>(src[kk] ^ flip_byte) + shift;
      dst[kk] = static_cast<int8_t>(std::clamp(v, -127, 127));
    }
  }
  return shift;
}

}  // namespace ignis::kernels::x86
