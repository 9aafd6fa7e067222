// SPDX-License-Identifier: Apache-2.0
// AVX2 parts of the x86 MatMulNBits (layout and algebra: matmul_nbits.h): the int8 path for a
// few rows of A (vpmaddubsw + vpmaddwd on the repacked codes), the exact float path for a few
// rows (codes converted to float in registers), and the float GEMM path's packing
// callback, which dequantizes 8 columns at one depth per step straight into the GEMM's panels.
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/matmul_nbits.h"

namespace ignis::kernels::x86 {

namespace {

// Stores the first `count` of 8 floats (count <= 8).
inline void store_first(float* dst, __m256 v, int64_t count) {
  if (count >= 8) {
    _mm256_storeu_ps(dst, v);
    return;
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, v);
  std::memcpy(dst, tmp, static_cast<size_t>(std::max<int64_t>(count, 0)) * sizeof(float));
}

// Y[r][j0 + j] = acc[r][j / 8][j % 8] + bias[j0 + j] for the columns below n: one 16-column
// group of R rows.
template <int R>
void store_rows(const __m256 (&acc)[R][2], const float* bias, float* y, int64_t ldy, int64_t j0, int64_t n) {
  for (int h = 0; h < 2; ++h) {
    const int64_t col = j0 + 8 * h, count = std::min<int64_t>(8, n - col);
    if (count <= 0) break;
    __m256 b8 = _mm256_setzero_ps();
    if (bias != nullptr) {
      alignas(32) float tmp[8] = {};
      std::memcpy(tmp, bias + col, static_cast<size_t>(count) * sizeof(float));
      b8 = _mm256_load_ps(tmp);
    }
    for (int r = 0; r < R; ++r) store_first(y + r * ldy + col, _mm256_add_ps(acc[r][h], b8), count);
  }
}

inline __m256i broadcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, sizeof(v));
  return _mm256_set1_epi32(v);
}

// R rows of A at once, so each code chunk is unpacked once for all of them.
template <int R>
void int8_rows(const Int4Weights& w, const Int8Rows& a, const float* bias, float* y, int64_t ldy, int64_t g0,
               int64_t g1) {
  const __m256i low = _mm256_set1_epi8(0x0F);
  const __m256i ones = _mm256_set1_epi16(1);
  const int64_t chunks = w.block / 8, kpad = w.blocks * w.block;
  for (int64_t g = g0; g < g1; ++g) {
    __m256 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < w.blocks; ++b) {
      __m256i dot[R][2];
      for (int r = 0; r < R; ++r) dot[r][0] = dot[r][1] = _mm256_setzero_si256();
      const uint8_t* c = w.chunk(g, b);
      for (int64_t p = 0; p < chunks; ++p, c += kNbitsChunkBytes) {
        __m256i a_lo[R], a_hi[R];
        for (int r = 0; r < R; ++r) {
          const int8_t* ar = a.aq + r * kpad + b * w.block + 8 * p;
          a_lo[r] = broadcast4(ar);
          a_hi[r] = broadcast4(ar + 4);
        }
        for (int h = 0; h < 2; ++h) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
          const __m256i lo = _mm256_and_si256(v, low);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), low);
          for (int r = 0; r < R; ++r) {
            const __m256i s = _mm256_add_epi16(_mm256_maddubs_epi16(lo, a_lo[r]), _mm256_maddubs_epi16(hi, a_hi[r]));
            dot[r][h] = _mm256_add_epi32(dot[r][h], _mm256_madd_epi16(s, ones));
          }
        }
      }
      const float* sc = w.scale + (g * w.blocks + b) * kNbitsGroupCols;
      const uint8_t* zp = w.zero + (g * w.blocks + b) * kNbitsGroupCols;
      for (int h = 0; h < 2; ++h) {
        const __m256i z = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zp + 8 * h)));
        const __m256 s = _mm256_loadu_ps(sc + 8 * h);
        for (int r = 0; r < R; ++r) {
          const __m256i t = _mm256_sub_epi32(dot[r][h], _mm256_mullo_epi32(z, _mm256_set1_epi32(a.sum[r * w.blocks + b])));
          acc[r][h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(s, _mm256_set1_ps(a.scale[r * w.blocks + b])),
                                      acc[r][h]);
        }
      }
    }
    store_rows<R>(acc, bias, y, ldy, g * kNbitsGroupCols, w.n);
  }
}

// The exact small-M path (matmul_nbits.h, FloatRows): per 32-byte half of a chunk (8 columns x
// 8 depths), each depth's codes shifted to the low nibble, masked and converted to float, then
// one FMA per row of A; two chains per row and half (low and high nibbles).
template <int R>
void float_rows(const Int4Weights& w, const FloatRows& a, const float* bias, float* y, int64_t ldy, int64_t g0,
                int64_t g1) {
  const __m256i low = _mm256_set1_epi32(0x0F);
  const int64_t chunks = w.block / 8, kpad = w.blocks * w.block;
  for (int64_t g = g0; g < g1; ++g) {
    __m256 acc[R][2];
    for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
    for (int64_t b = 0; b < w.blocks; ++b) {
      __m256 dot[R][2][2];
      for (int r = 0; r < R; ++r) dot[r][0][0] = dot[r][0][1] = dot[r][1][0] = dot[r][1][1] = _mm256_setzero_ps();
      const uint8_t* c = w.chunk(g, b);
      for (int64_t p = 0; p < chunks; ++p, c += kNbitsChunkBytes) {
        for (int h = 0; h < 2; ++h) {
          const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + 32 * h));
          for (int q = 0; q < 4; ++q) {
            const __m256 lo = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(v, 8 * q), low));
            const __m256 hi = _mm256_cvtepi32_ps(_mm256_and_si256(_mm256_srli_epi32(v, 8 * q + 4), low));
            for (int r = 0; r < R; ++r) {
              const float* ar = a.a + r * kpad + b * w.block + 8 * p;
              dot[r][h][0] = _mm256_fmadd_ps(lo, _mm256_broadcast_ss(ar + q), dot[r][h][0]);
              dot[r][h][1] = _mm256_fmadd_ps(hi, _mm256_broadcast_ss(ar + q + 4), dot[r][h][1]);
            }
          }
        }
      }
      const float* sc = w.scale + (g * w.blocks + b) * kNbitsGroupCols;
      const uint8_t* zp = w.zero + (g * w.blocks + b) * kNbitsGroupCols;
      for (int h = 0; h < 2; ++h) {
        const __m256 z = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zp + 8 * h))));
        const __m256 s = _mm256_loadu_ps(sc + 8 * h);
        for (int r = 0; r < R; ++r) {
          const __m256 centred = _mm256_fnmadd_ps(z, _mm256_set1_ps(a.sum[r * w.blocks + b]),
                                                  _mm256_add_ps(dot[r][h][0], dot[r][h][1]));
          acc[r][h] = _mm256_fmadd_ps(s, centred, acc[r][h]);
        }
      }
    }
    store_rows<R>(acc, bias, y, ldy, g * kNbitsGroupCols, w.n);
  }
}

// Dequantized W^T[kk][col .. col + 8) (col a multiple of 8, all < N).
inline __m256 dequant8(const Int4Weights& w, int64_t kk, int64_t col) {
  const int64_t g = col / kNbitsGroupCols, h = (col % kNbitsGroupCols) / 8;
  const int64_t b = kk / w.block, i = kk % w.block;
  const uint8_t* c = w.chunk(g, b) + (i / 8) * kNbitsChunkBytes + 32 * h;
  const int r = static_cast<int>(i % 8);
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c));
  const __m256i q = _mm256_and_si256(_mm256_srl_epi32(v, _mm_cvtsi32_si128(8 * (r % 4) + 4 * (r / 4))),
                                     _mm256_set1_epi32(0x0F));
  const int64_t at = (g * w.blocks + b) * kNbitsGroupCols + 8 * h;
  const __m256i z = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w.zero + at)));
  return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(q, z)), _mm256_loadu_ps(w.scale + at));
}

inline float dequant1(const Int4Weights& w, int64_t kk, int64_t col) {
  const int64_t g = col / kNbitsGroupCols, j = col % kNbitsGroupCols;
  const int64_t b = kk / w.block, i = kk % w.block;
  const uint8_t byte = w.chunk(g, b)[(i / 8) * kNbitsChunkBytes + 4 * j + i % 4];
  const int q = (i % 8) < 4 ? byte & 0x0F : byte >> 4;
  const int64_t at = (g * w.blocks + b) * kNbitsGroupCols + j;
  return static_cast<float>(q - static_cast<int>(w.zero[at])) * w.scale[at];
}

}  // namespace

void matmul_nbits_int8_avx2(const Int4Weights& w, const Int8Rows& a, const float* bias, float* y, int64_t ldy,
                            int64_t g0, int64_t g1) {
  with_row_count(a.rows, [&]<int R>() { int8_rows<R>(w, a, bias, y, ldy, g0, g1); });
}

void matmul_nbits_float_rows_avx2(const Int4Weights& w, const FloatRows& a, const float* bias, float* y, int64_t ldy,
                                  int64_t g0, int64_t g1) {
  with_row_count(a.rows, [&]<int R>() { float_rows<R>(w, a, bias, y, ldy, g0, g1); });
}

void matmul_nbits_pack_b_avx2(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0,
                              int64_t nc, float* dst) {
  const Int4Weights& w = *static_cast<const Int4Weights*>(ctx);
  const int64_t nr = backend.nr;
  const int64_t padded = (nc + nr - 1) / nr * nr;
  for (int64_t jj = 0; jj < padded; jj += 8) {
    float* out = dst + (jj / nr) * kc * nr + jj % nr;
    const int64_t col = j0 + jj;
    if (col % 8 == 0 && col + 8 <= w.n && jj + 8 <= nc) {
      for (int64_t p = 0; p < kc; ++p) _mm256_storeu_ps(out + p * nr, dequant8(w, p0 + p, col));
      continue;
    }
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t e = 0; e < 8; ++e)
        out[p * nr + e] = jj + e < nc && col + e < w.n ? dequant1(w, p0 + p, col + e) : 0.0f;
  }
}

}  // namespace ignis::kernels::x86
