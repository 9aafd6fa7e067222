// SPDX-License-Identifier: Apache-2.0
// The int8 GEMM tiles for AVX2 CPUs without VNNI. vpmaddubsw (u8 x s8 pairs summed in int16)
// would saturate on uint8 A (255 * 127 * 2 > 32767), so each tile keeps the sums exact its own
// way:
// - signed_tile, for int8 A in [-127, 127] (Int8GemmArgs::a_signed: quantized weights, or
//   activations with the few values outside that range held one step nearer zero and
//   corrected after the sums): each
//   product w x with B's stored bytes x in [-128, 127] is |x| * (w with x's sign) (vpabsb once
//   per B vector, vpsignb per row), a pair at most 2 * 128 * 127 = 32512 in int16; vpmaddwd
//   against ones then adds the pairs into int32. 6 rows x 16 columns. In a register loop on
//   Zen 3, 1.5x the multiply-adds per second of the widening tile; 1.2-1.3x in the GEMM.
// - tile, for uint8 A: each packed quad row of 4 columns (16 bytes) widened to int16 and
//   multiplied by the row's 4 bytes of A (widened likewise) with vpmaddwd, giving per column two
//   int32 partial sums added at the end. 3 rows x 4 accumulators per row use 12 of the 16 ymm
//   registers.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/x86/gemm_int8.h"
#include "kernels/x86/requantize_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kRows = 3;
constexpr int kCols = 16;  // half a packed panel

// 4 bytes of A at `p`, of which only `valid` (1..4) may be read.
inline int32_t load_quad(const uint8_t* p, int valid) {
  int32_t v = 0;
  std::memcpy(&v, p, static_cast<size_t>(valid));
  return v;
}

// Requantizes 8 int32 sums of row i at column j (gemm_int8.h) and stores them as bytes.
inline void store_requantized8(const Int8GemmArgs& g, int64_t i, int64_t j, __m256i acc) {
  if (g.q_bias) acc = _mm256_add_epi32(acc, _mm256_set1_epi32(g.q_bias[i]));
  const __m256 m = g.q_row_scale ? _mm256_set1_ps(g.q_row_scale[i]) : _mm256_loadu_ps(g.q_col_scale + j);
  const RequantAvx2 rq(g.q_zero_point, g.q_min, g.q_max, g.q_signed);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(g.c_q) + i * g.ldc + j), rq.bytes8(acc, m));
}

// Eight full columns' sums of row i from column j with the zero-point corrections added.
[[gnu::always_inline]] inline __m256i corrected8(const Int8GemmArgs& g, int64_t i, int64_t j, __m256i acc) {
  if (g.row_sum && g.col_shift) {
    const __m256i shift = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.col_shift + j));
    acc = _mm256_add_epi32(acc, _mm256_mullo_epi32(shift, _mm256_set1_epi32(g.row_sum[i])));
  }
  if (g.row_zp && g.row_zp[i] != 0) {
    const __m256i corr = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.col_corr + j));
    acc = _mm256_sub_epi32(acc, _mm256_mullo_epi32(corr, _mm256_set1_epi32(g.row_zp[i])));
  }
  if (g.col_offset) acc = _mm256_add_epi32(acc, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(g.col_offset + j)));
  return acc;
}

// Requantizes 16 full columns of row i from column j (two vectors of sums) and stores them.
[[gnu::always_inline]] inline void store_requantized16(const Int8GemmArgs& g, const RequantAvx2& rq, int64_t i, int64_t j, __m256i acc0,
                                __m256i acc1) {
  acc0 = corrected8(g, i, j, acc0);
  acc1 = corrected8(g, i, j + 8, acc1);
  if (g.q_bias) {
    const __m256i bias = _mm256_set1_epi32(g.q_bias[i]);
    acc0 = _mm256_add_epi32(acc0, bias);
    acc1 = _mm256_add_epi32(acc1, bias);
  }
  const __m256 m0 = g.q_row_scale ? _mm256_set1_ps(g.q_row_scale[i]) : _mm256_loadu_ps(g.q_col_scale + j);
  const __m256 m1 = g.q_row_scale ? m0 : _mm256_loadu_ps(g.q_col_scale + j + 8);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(static_cast<uint8_t*>(g.c_q) + i * g.ldc + j), rq.bytes16(acc0, m0, acc1, m1));
}

// Stores 8 columns [j, j + valid) of row i: the correction, then int32, requantized or scaled
// float.
inline void store8(const Int8GemmArgs& g, int64_t i, int64_t j, __m256i acc, int valid) {
  if (valid < 8) {
    alignas(32) int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc);
    for (int c = 0; c < valid; ++c) {
      int32_t v = lanes[c];
      if (g.row_sum && g.col_shift) v += g.row_sum[i] * g.col_shift[j + c];
      if (g.row_zp) v -= g.row_zp[i] * g.col_corr[j + c];
      if (g.col_offset) v += g.col_offset[j + c];
      if (g.c_i32) {
        g.c_i32[i * g.ldc + j + c] = v;
      } else if (g.c_q) {
        const int32_t q = requantize_scalar(v + (g.q_bias ? g.q_bias[i] : 0),
                                            g.q_row_scale ? g.q_row_scale[i] : g.q_col_scale[j + c], g.q_zero_point,
                                            g.q_min, g.q_max);
        static_cast<uint8_t*>(g.c_q)[i * g.ldc + j + c] = static_cast<uint8_t>(q);
      } else {
        float f = static_cast<float>(v) * g.col_scale[j + c];
        if (g.row_scale) f *= g.row_scale[i];
        if (g.bias) f += g.bias[j + c];
        g.c_f32[i * g.ldc + j + c] = f;
      }
    }
    return;
  }
  acc = corrected8(g, i, j, acc);
  if (g.c_i32) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(g.c_i32 + i * g.ldc + j), acc);
    return;
  }
  if (g.c_q) {
    store_requantized8(g, i, j, acc);
    return;
  }
  __m256 v = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(g.col_scale + j));
  if (g.row_scale) v = _mm256_mul_ps(v, _mm256_set1_ps(g.row_scale[i]));
  if (g.bias) v = _mm256_add_ps(v, _mm256_loadu_ps(g.bias + j));
  _mm256_storeu_ps(g.c_f32 + i * g.ldc + j, v);
}

// Adds the two partial sums of each column: [c0 c0' c1 c1' c2 c2' c3 c3'] and the same for
// c4..c7 become [c0 .. c7].
inline __m256i fold_pairs(__m256i lo, __m256i hi) {
  return _mm256_permute4x64_epi64(_mm256_hadd_epi32(lo, hi), 0xD8);
}

// What a tile reads of B: 16 columns of one panel, from column j0, `cols` of them real.
struct HalfPanel {
  const int8_t* bp;
  int64_t k, quads, full;  // depth, quads of 4, whole quads
  int64_t j0, cols;
  HalfPanel(const PackedInt8B& b, int64_t panel, int half)
      : bp(b.panel(panel) + half * kCols * kInt8Quad),
        k(b.k()),
        quads(b.quads()),
        full(b.k() / kInt8Quad),
        j0(panel * kInt8PanelCols + half * kCols),
        cols(std::min<int64_t>(kCols, b.n() - j0)) {}
};

template <int kR>
void tile(const Int8GemmArgs& g, int64_t i0, int64_t panel, int half) {
  const HalfPanel hp(*g.b, panel, half);
  const int8_t* const bp = hp.bp;
  const int64_t k = hp.k, quads = hp.quads, full = hp.full, j0 = hp.j0, cols = hp.cols;
  __m256i acc[kR][4];
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 16
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_setzero_si256();
  const uint8_t* a = g.a + i0 * g.lda;
  for (int64_t q = 0; q < quads; ++q) {
    __m256i av[kR];
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      const uint8_t* src = a + r * g.lda + q * kInt8Quad;
      int32_t quad;
      if (q < full) std::memcpy(&quad, src, sizeof quad);
      else quad = load_quad(src, static_cast<int>(k - full * kInt8Quad));
      av[r] = _mm256_cvtepu8_epi16(_mm_set1_epi32(quad));
    }
    #pragma GCC unroll 16
    for (int c = 0; c < 4; ++c) {
      const __m256i bw =
          _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(bp + q * 128 + c * 16)));
      #pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(av[r], bw));
    }
  }
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) {
    store8(g, i0 + r, j0, fold_pairs(acc[r][0], acc[r][1]), static_cast<int>(std::min<int64_t>(8, cols)));
    if (cols > 8) store8(g, i0 + r, j0 + 8, fold_pairs(acc[r][2], acc[r][3]), static_cast<int>(cols - 8));
  }
}

constexpr int kSignedRows = 6;

template <int kR>
void signed_tile(const Int8GemmArgs& g, int64_t i0, int64_t panel, int half) {
  const HalfPanel hp(*g.b, panel, half);
  const int8_t* const bp = hp.bp;
  const int64_t k = hp.k, quads = hp.quads, full = hp.full, j0 = hp.j0, cols = hp.cols;
  __m256i acc[kR][2];
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  const int8_t* a = g.a_signed + i0 * g.lda;
  // One quad: `quad_of(r)` gives row r's 4 values of A, broadcast.
  const auto step = [&](int64_t q, auto quad_of) __attribute__((always_inline)) {
    const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128));
    const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128 + 32));
    const __m256i abs0 = _mm256_abs_epi8(x0), abs1 = _mm256_abs_epi8(x1);
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      const __m256i w = quad_of(r);
      acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(abs0, _mm256_sign_epi8(w, x0)), ones));
      acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(abs1, _mm256_sign_epi8(w, x1)), ones));
    }
  };
  for (int64_t q = 0; q < full; ++q) {
    step(q, [&](int r) {
      int32_t quad;
      std::memcpy(&quad, a + r * g.lda + q * kInt8Quad, sizeof quad);
      return _mm256_set1_epi32(quad);
    });
  }
  if (full < quads) {  // the values past K read as 0
    const int valid = static_cast<int>(k - full * kInt8Quad);
    step(full, [&](int r) {
      return _mm256_set1_epi32(load_quad(reinterpret_cast<const uint8_t*>(a + r * g.lda + full * kInt8Quad), valid));
    });
  }
  if (g.a_fix_start) {
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      for (int32_t f = g.a_fix_start[i0 + r]; f < g.a_fix_start[i0 + r + 1]; ++f) {
        // A's value at depth kk was multiplied one step nearer zero: B's row kk once more.
        const int32_t kk = g.a_fix_k[f];
        const int8_t* row = bp + kk / kInt8Quad * 128 + kk % kInt8Quad;
        alignas(32) int32_t b_row[kCols];
        for (int c = 0; c < kCols; ++c) b_row[c] = g.a_fix_up ? row[c * kInt8Quad] : -row[c * kInt8Quad];
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_load_si256(reinterpret_cast<const __m256i*>(b_row)));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_load_si256(reinterpret_cast<const __m256i*>(b_row + 8)));
      }
    }
  }
  if (g.c_q && cols == kCols) {
    const RequantAvx2 rq(g.q_zero_point, g.q_min, g.q_max, g.q_signed);
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) store_requantized16(g, rq, i0 + r, j0, acc[r][0], acc[r][1]);
    return;
  }
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) {
    store8(g, i0 + r, j0, acc[r][0], static_cast<int>(std::min<int64_t>(8, cols)));
    if (cols > 8) store8(g, i0 + r, j0 + 8, acc[r][1], static_cast<int>(cols - 8));
  }
}

// Calls tile(std::integral_constant<int, rows>) for 1 <= rows <= kMax.
template <int kMax, class Tile>
void with_rows(int64_t rows, Tile tile) {
  if constexpr (kMax > 1) {
    if (rows < kMax) {
      with_rows<kMax - 1>(rows, tile);
      return;
    }
  }
  tile(std::integral_constant<int, kMax>{});
}

// Rows [i0, i1) in blocks of kMax, each over the 16-column halves of panels [p0, p1):
// tile(rows, i, panel, half).
template <int kMax, class Tile>
void walk(const Int8GemmArgs& g, int64_t i0, int64_t i1, int64_t p0, int64_t p1, Tile tile) {
  for (int64_t i = i0; i < i1; i += kMax) {
    const int64_t rows = std::min<int64_t>(kMax, i1 - i);
    for (int64_t p = p0; p < p1; ++p) {
      for (int half = 0; half < 2; ++half) {
        if (p * kInt8PanelCols + half * kCols >= g.b->n()) break;
        tile(rows, i, p, half);
      }
    }
  }
}

void range(const Int8GemmArgs& g, int64_t i0, int64_t i1, int64_t p0, int64_t p1) {
  if (g.a_signed) {
    walk<kSignedRows>(g, i0, i1, p0, p1, [&](int64_t rows, int64_t i, int64_t p, int half) {
      with_rows<kSignedRows>(rows, [&](auto r) { signed_tile<decltype(r)::value>(g, i, p, half); });
    });
  } else {
    walk<kRows>(g, i0, i1, p0, p1, [&](int64_t rows, int64_t i, int64_t p, int half) {
      with_rows<kRows>(rows, [&](auto r) { tile<decltype(r)::value>(g, i, p, half); });
    });
  }
}

}  // namespace

const Int8GemmBackend& int8_gemm_backend_avx2() {
  static const Int8GemmBackend backend{.name = "avx2_3x16", .range = range, .signed_a = true};
  return backend;
}

}  // namespace ignis::kernels::x86
