// SPDX-License-Identifier: Apache-2.0
// The int8 GEMM tiles for AVX2 CPUs without VNNI. vpmaddubsw (u8 x s8 pairs summed in int16)
// saturates when two large products meet, so each tile keeps the sums exact its own way:
// - split_tile, for int8 A (Int8GemmArgs::a_signed: quantized weights, or activations with the
//   few values outside [-127, 127] held one step nearer zero and corrected after the sums)
//   whose pairs mostly allow it: B's bytes as uint8 times A's as int8, each unsafe pair of A
//   split off beforehand (Int8PairSplit, gemm_int8_split_avx2.cc) and run as a further step
//   for its row. Three vector instructions per 32 multiply-adds; 6 rows x 16 columns, the
//   depth loop in assembly.
// - sign_tile, for int8 A whose pairs do not allow it (activations bunched at one end of the
//   range): each product w x with B's stored bytes x in [-128, 127] is |x| * (w with x's
//   sign), a pair at most 2 * 128 * 127 = 32512 in int16. Four vector instructions per 32
//   multiply-adds; 5 rows x 16 columns, the depth loop in assembly.
// - tile, for uint8 A: each packed quad row of 4 columns (16 bytes) widened to int16 and
//   multiplied by the row's 4 bytes of A (widened likewise) with vpmaddwd, giving per column two
//   int32 partial sums added at the end. 3 rows x 4 accumulators per row use 12 of the 16 ymm
//   registers.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

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

alignas(32) constexpr int16_t kOnes16[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
alignas(32) constexpr uint8_t kFlip8[32] = {128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128,
                                            128, 128, 128, 128, 128, 128, 128, 128, 128, 128, 128,
                                            128, 128, 128, 128, 128, 128, 128, 128, 128, 128};

// The start of an assembly depth loop of n steps (label 1; 2 follows it).
#define IGNIS_INT8_LOOP_START "test %[n], %[n]\n\tjz 2f\n\t.p2align 4\n1:\n\t"
// ROW(source of the row's broadcast quad, its two accumulators) for the first five rows of A,
// at a0 and a3 (rows 0 and 3) with leading dimension lda.
#define IGNIS_INT8_ROWS_5(ROW)                                                                      \
  ROW("(%[a0])", "0", "1") ROW("(%[a0],%[lda])", "2", "3") ROW("(%[a0],%[lda],2)", "4", "5")          \
  ROW("(%[a3])", "6", "7") ROW("(%[a3],%[lda])", "8", "9")
// The end of an assembly depth loop over A at a0 and a3 (rows 0 and 3) and B at b: the next
// quad, the loop back, then ymm0-ymm9 stored to out (what a 6-row loop adds follows).
#define IGNIS_INT8_LOOP_END_STORE_10                                                                \
  "add $4, %[a0]\n\t"                                                                               \
  "add $4, %[a3]\n\t"                                                                               \
  "sub $-128, %[b]\n\t"                                                                             \
  "dec %[n]\n\t"                                                                                    \
  "jnz 1b\n"                                                                                         \
  "2:\n\t"                                                                                          \
  "vmovdqa %%ymm0, (%[out])\n\tvmovdqa %%ymm1, 32(%[out])\n\tvmovdqa %%ymm2, 64(%[out])\n\t"            \
  "vmovdqa %%ymm3, 96(%[out])\n\tvmovdqa %%ymm4, 128(%[out])\n\tvmovdqa %%ymm5, 160(%[out])\n\t"        \
  "vmovdqa %%ymm6, 192(%[out])\n\tvmovdqa %%ymm7, 224(%[out])\n\tvmovdqa %%ymm8, 256(%[out])\n\t"       \
  "vmovdqa %%ymm9, 288(%[out])\n"
#define IGNIS_INT8_CLOBBERS                                                                         \
  "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", \
      "xmm12", "xmm13", "xmm14", "xmm15"

// acc[r][v] = the 8 sums an assembly depth loop stored at sums + 16r + 8v.
template <int kR>
[[gnu::always_inline]] inline void load_sums(const int32_t* sums, __m256i (&acc)[kR][2]) {
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) {
    acc[r][0] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sums + 16 * r));
    acc[r][1] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sums + 16 * r + 8));
  }
}

// The end of a signed tile of kR rows from row i0 over the half panel at bp (columns j0..,
// `cols` of them real), acc holding the sums against B's stored bytes: the held values' fixes,
// then the stores.
template <int kR>
[[gnu::always_inline]] inline void finish_signed_tile(const Int8GemmArgs& g, const int8_t* bp, int64_t i0, int64_t j0,
                                                      int64_t cols, __m256i (&acc)[kR][2]) {
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

// --- The sign tile: int8 A as given -----------------------------------------------------
// Each product w x with B's stored bytes x in [-128, 127] is |x| * (w with x's sign)
// (vpabsb once per B vector, vpsignb per row), a pair at most 2 * 128 * 127 = 32512 in int16;
// vpmaddwd against ones adds the pairs into int32. Four vector instructions per 32
// multiply-adds: the split tile below needs three where A's pairs allow it.

constexpr int kSignRows = 5;

// One row of the sign tile's depth step: row r's 4 values of A broadcast (ymm13), given B's
// signs per column (vpsignb against the stored bytes), multiplied with |B| (ymm11, ymm12),
// summed into int32 against ones (ymm10) and added to the row's two accumulators.
#define IGNIS_INT8_SIGN_ROW(SRC, ACC0, ACC1)                                                         \
  "vpbroadcastd " SRC ", %%ymm13\n\t"                                                                \
  "vpsignb (%[b]), %%ymm13, %%ymm14\n\t"                                                             \
  "vpsignb 32(%[b]), %%ymm13, %%ymm15\n\t"                                                           \
  "vpmaddubsw %%ymm14, %%ymm11, %%ymm14\n\t"                                                         \
  "vpmaddubsw %%ymm15, %%ymm12, %%ymm15\n\t"                                                         \
  "vpmaddwd %%ymm10, %%ymm14, %%ymm14\n\t"                                                           \
  "vpmaddwd %%ymm10, %%ymm15, %%ymm15\n\t"                                                           \
  "vpaddd %%ymm14, %%ymm" ACC0 ", %%ymm" ACC0 "\n\t"                                                 \
  "vpaddd %%ymm15, %%ymm" ACC1 ", %%ymm" ACC1 "\n\t"

// The depth loop of a full 5-row sign tile over `quads` quads: out[2r + v] (8 int32
// each, 32-byte aligned) = the sums of row r of A (int8, leading dimension lda) against the
// half panel's vector v. In assembly so that the 16 ymm registers hold exactly the 10
// accumulators, the ones, |B| and three temporaries (compiled from intrinsics, a 6-row loop
// spilled accumulators on every step and ran at about 0.75x this one in L1 on Zen 3).
[[gnu::noinline]] void sign_depth_loop_5x16(int64_t quads, const int8_t* a, int64_t lda, const int8_t* b,
                                            int32_t* out) {
  static_assert(kSignRows == 5, "the assembly loop hard-codes 5 rows");
  const int8_t* a3 = a + 3 * lda;
  asm volatile(
      "vmovdqa %[ones], %%ymm10\n\t"
      "vpxor %%ymm0, %%ymm0, %%ymm0\n\tvpxor %%ymm1, %%ymm1, %%ymm1\n\tvpxor %%ymm2, %%ymm2, %%ymm2\n\t"
      "vpxor %%ymm3, %%ymm3, %%ymm3\n\tvpxor %%ymm4, %%ymm4, %%ymm4\n\tvpxor %%ymm5, %%ymm5, %%ymm5\n\t"
      "vpxor %%ymm6, %%ymm6, %%ymm6\n\tvpxor %%ymm7, %%ymm7, %%ymm7\n\tvpxor %%ymm8, %%ymm8, %%ymm8\n\t"
      "vpxor %%ymm9, %%ymm9, %%ymm9\n\t"
      IGNIS_INT8_LOOP_START
      "vpabsb (%[b]), %%ymm11\n\t"
      "vpabsb 32(%[b]), %%ymm12\n\t"
      IGNIS_INT8_ROWS_5(IGNIS_INT8_SIGN_ROW)
      IGNIS_INT8_LOOP_END_STORE_10
      : [a0] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(quads)
      : [lda] "r"(lda), [out] "r"(out), [ones] "m"(kOnes16)
      : IGNIS_INT8_CLOBBERS);
}
#undef IGNIS_INT8_SIGN_ROW

// kR rows of int8 A as given (rows i0.. of `s`, not split) times a half panel of B.
template <int kR>
void sign_tile(const Int8GemmArgs& g, const Int8PairSplit& s, int64_t i0, int64_t panel, int half) {
  const HalfPanel hp(*g.b, panel, half);
  const int8_t* const bp = hp.bp;
  const int64_t quads = hp.quads, j0 = hp.j0, cols = hp.cols;
  const int8_t* a = s.main.data() + (i0 - s.i0) * s.ld;
  __m256i acc[kR][2];
  if constexpr (kR == kSignRows) {
    alignas(32) int32_t sums[kR * 2 * 8];
    sign_depth_loop_5x16(quads, a, s.ld, bp, sums);
    load_sums<kR>(sums, acc);
  } else {
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    const __m256i ones = _mm256_set1_epi16(1);
    for (int64_t q = 0; q < quads; ++q) {
      const __m256i x0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128));
      const __m256i x1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128 + 32));
      const __m256i abs0 = _mm256_abs_epi8(x0), abs1 = _mm256_abs_epi8(x1);
      #pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) {
        int32_t quad;
        std::memcpy(&quad, a + r * s.ld + q * kInt8Quad, sizeof quad);
        const __m256i w = _mm256_set1_epi32(quad);
        acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(_mm256_maddubs_epi16(abs0, _mm256_sign_epi8(w, x0)), ones));
        acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(_mm256_maddubs_epi16(abs1, _mm256_sign_epi8(w, x1)), ones));
      }
    }
  }
  finish_signed_tile<kR>(g, bp, i0, j0, cols, acc);
}

// --- The split tile: int8 A split into safe pairs (Int8PairSplit) ------------------------
// B's bytes as uint8 (the stored int8 flipped back) times A's as int8 with vpmaddubsw, the
// pairs summed into int32 with vpmaddwd.

constexpr int kSplitRows = 6;

// One row of the split tile's depth step in assembly: row r's 4 values of A broadcast
// (ymm14), multiplied with B as uint8 (ymm12, ymm13) into int16 pairs, summed into int32
// against ones and added to the row's two accumulators.
#define IGNIS_INT8_SPLIT_ROW(SRC, ACC0, ACC1)                                                       \
  "vpbroadcastd " SRC ", %%ymm14\n\t"                                                                \
  "vpmaddubsw %%ymm14, %%ymm12, %%ymm15\n\t"                                                         \
  "vpmaddwd %[ones], %%ymm15, %%ymm15\n\t"                                                           \
  "vpaddd %%ymm15, %%ymm" ACC0 ", %%ymm" ACC0 "\n\t"                                                 \
  "vpmaddubsw %%ymm14, %%ymm13, %%ymm15\n\t"                                                         \
  "vpmaddwd %[ones], %%ymm15, %%ymm15\n\t"                                                           \
  "vpaddd %%ymm15, %%ymm" ACC1 ", %%ymm" ACC1 "\n\t"

// The depth loop of a full 6-row split tile: out[2r + v] (8 int32 each, 32-byte aligned) =
// init[r] + the sums of row r of A (int8, leading dimension lda, `quads` quads) times the half
// panel's vector v read as uint8. Three vector instructions per 32 multiply-adds
// (vpmaddubsw, vpmaddwd, vpaddd), two of them on the two pipes that multiply: that is the
// bound, reached in L1 (~31 multiply-adds per cycle on Zen 3, against ~24 for the 4-instruction
// vpsignb form this replaced). Written in assembly so that the 16 ymm registers hold the 12
// accumulators, B's two vectors and two temporaries, the ones and the flip read as memory
// operands; compiled from intrinsics, a loop of this size spilled accumulators to the stack on
// every step.
[[gnu::noinline]] void split_depth_loop_6x16(int64_t quads, const int8_t* a, int64_t lda, const int8_t* b,
                                              const int32_t* init, int32_t* out) {
  static_assert(kSplitRows == 6, "the assembly loop hard-codes 6 rows");
  const int8_t* a3 = a + 3 * lda;
  asm volatile(
      "vpbroadcastd (%[init]), %%ymm0\n\tvmovdqa %%ymm0, %%ymm1\n\t"
      "vpbroadcastd 4(%[init]), %%ymm2\n\tvmovdqa %%ymm2, %%ymm3\n\t"
      "vpbroadcastd 8(%[init]), %%ymm4\n\tvmovdqa %%ymm4, %%ymm5\n\t"
      "vpbroadcastd 12(%[init]), %%ymm6\n\tvmovdqa %%ymm6, %%ymm7\n\t"
      "vpbroadcastd 16(%[init]), %%ymm8\n\tvmovdqa %%ymm8, %%ymm9\n\t"
      "vpbroadcastd 20(%[init]), %%ymm10\n\tvmovdqa %%ymm10, %%ymm11\n\t"
      IGNIS_INT8_LOOP_START
      "vmovdqu (%[b]), %%ymm12\n\t"
      "vpxor %[flip], %%ymm12, %%ymm12\n\t"
      "vmovdqu 32(%[b]), %%ymm13\n\t"
      "vpxor %[flip], %%ymm13, %%ymm13\n\t"
      IGNIS_INT8_ROWS_5(IGNIS_INT8_SPLIT_ROW)
      IGNIS_INT8_SPLIT_ROW("(%[a3],%[lda],2)", "10", "11")
      IGNIS_INT8_LOOP_END_STORE_10 "\tvmovdqa %%ymm10, 320(%[out])\n\tvmovdqa %%ymm11, 352(%[out])\n"
      : [a0] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(quads)
      : [lda] "r"(lda), [init] "r"(init), [out] "r"(out), [ones] "m"(kOnes16), [flip] "m"(kFlip8)
      : IGNIS_INT8_CLOBBERS);
}
#undef IGNIS_INT8_SPLIT_ROW
#undef IGNIS_INT8_LOOP_END_STORE_10
#undef IGNIS_INT8_CLOBBERS
#undef IGNIS_INT8_LOOP_START
#undef IGNIS_INT8_ROWS_5

// B's quad q of the half panel as uint8 (the stored int8 flipped back): two vectors.
[[gnu::always_inline]] inline void load_b_unsigned(const int8_t* bp, int64_t q, __m256i& u0, __m256i& u1) {
  const __m256i flip = _mm256_load_si256(reinterpret_cast<const __m256i*>(kFlip8));
  u0 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128)), flip);
  u1 = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bp + q * 128 + 32)), flip);
}

// acc[0..1] += the products of one broadcast quad of A with B's quad (u0, u1), as uint8.
[[gnu::always_inline]] inline void add_quad(__m256i (&acc)[2], __m256i w, __m256i u0, __m256i u1) {
  const __m256i ones = _mm256_set1_epi16(1);
  acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(_mm256_maddubs_epi16(u0, w), ones));
  acc[1] = _mm256_add_epi32(acc[1], _mm256_madd_epi16(_mm256_maddubs_epi16(u1, w), ones));
}

// kR rows of split signed A (rows i0.. of `s`) times a half panel of B. The sums against B as
// uint8 are the sums against the stored int8 bytes plus 128 times the row's sum: the
// accumulators start at -128 times it.
template <int kR>
void split_tile(const Int8GemmArgs& g, const Int8PairSplit& s, int64_t i0, int64_t panel, int half) {
  const HalfPanel hp(*g.b, panel, half);
  const int8_t* const bp = hp.bp;
  const int64_t quads = hp.quads, j0 = hp.j0, cols = hp.cols;
  const int64_t r0 = i0 - s.i0;
  const int8_t* a = s.main.data() + r0 * s.ld;
  __m256i acc[kR][2];
  if constexpr (kR == kSplitRows) {
    alignas(32) int32_t sums[kR * 2 * 8];
    int32_t init[kR];
    for (int r = 0; r < kR; ++r) init[r] = -128 * s.sums[static_cast<size_t>(r0 + r)];
    split_depth_loop_6x16(quads, a, s.ld, bp, init, sums);
    load_sums<kR>(sums, acc);
  } else {
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) acc[r][0] = acc[r][1] = _mm256_set1_epi32(-128 * s.sums[static_cast<size_t>(r0 + r)]);
    for (int64_t q = 0; q < quads; ++q) {
      __m256i u0, u1;
      load_b_unsigned(bp, q, u0, u1);
      #pragma GCC unroll 16
      for (int r = 0; r < kR; ++r) {
        int32_t quad;
        std::memcpy(&quad, a + r * s.ld + q * kInt8Quad, sizeof quad);
        add_quad(acc[r], _mm256_set1_epi32(quad), u0, u1);
      }
    }
  }
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) {
    for (int32_t e = s.start[static_cast<size_t>(r0 + r)]; e < s.start[static_cast<size_t>(r0 + r) + 1]; ++e) {
      __m256i u0, u1;
      load_b_unsigned(bp, s.quad[static_cast<size_t>(e)], u0, u1);
      add_quad(acc[r], _mm256_set1_epi32(s.word[static_cast<size_t>(e)]), u0, u1);
    }
  }
  finish_signed_tile<kR>(g, bp, i0, j0, cols, acc);
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
    thread_local Int8PairSplit split_now;
    if (!g.a_split) int8_split_pairs(g.a_signed, g.lda, g.b->k(), i0, i1, split_now);
    const Int8PairSplit& split = g.a_split ? *g.a_split : split_now;
    if (!split.split) {
      walk<kSignRows>(g, i0, i1, p0, p1, [&](int64_t rows, int64_t i, int64_t p, int half) {
        with_rows<kSignRows>(rows, [&](auto r) { sign_tile<decltype(r)::value>(g, split, i, p, half); });
      });
      return;
    }
    walk<kSplitRows>(g, i0, i1, p0, p1, [&](int64_t rows, int64_t i, int64_t p, int half) {
      with_rows<kSplitRows>(rows, [&](auto r) { split_tile<decltype(r)::value>(g, split, i, p, half); });
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
