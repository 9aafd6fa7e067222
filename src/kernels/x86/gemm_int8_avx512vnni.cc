// SPDX-License-Identifier: Apache-2.0
// The int8 GEMM tile for AVX-512 VNNI: up to 6 rows x 2 panels (64 columns) of C in 24 zmm
// accumulators. Each depth quad broadcasts 4 bytes of a row of A and multiplies them into a
// packed quad row of each panel (32 columns x 4 depths = two zmm) with vpdpbusd, which sums
// the four u8 x s8 products exactly into each int32 lane. 24 independent accumulators hide
// vpdpbusd's latency; with the 4 B vectors and a broadcast they fit the 32 registers. Full
// 6-row tiles run their depth loop in assembly (the compiled loop reloaded row offsets from
// the stack and broadcast one row through a general register, a port-5 uop beside the
// vpdpbusd that port also runs). The small loops carry unroll pragmas: left rolled, GCC keeps
// the accumulator array in memory (measured 3-4x slower).
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/x86/gemm_int8.h"
#include "kernels/x86/requantize_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kRows = 6;

// 4 bytes of A at `p`, of which only `valid` (1..4) may be read.
inline int32_t load_quad(const uint8_t* p, int valid) {
  int32_t v = 0;
  std::memcpy(&v, p, static_cast<size_t>(valid));
  return v;
}

// Requantizes 16 int32 sums of row i at column j (gemm_int8.h; requantize_avx512.h) and
// stores them as bytes.
inline void store_requantized(const Int8GemmArgs& g, const RequantAvx512& rq, int64_t i, int64_t j, __m512i acc,
                              __mmask16 mask) {
  if (g.q_bias) acc = _mm512_add_epi32(acc, _mm512_set1_epi32(g.q_bias[i]));
  const __m512 m = g.q_row_scale ? _mm512_set1_ps(g.q_row_scale[i]) : _mm512_maskz_loadu_ps(mask, g.q_col_scale + j);
  _mm512_mask_cvtepi32_storeu_epi8(static_cast<uint8_t*>(g.c_q) + i * g.ldc + j, mask, rq.values(acc, m));
}

// Stores one 16-column half of row i: the correction, then int32, requantized or scaled float.
// `g` is the tile's own copy: byte stores through c_q may alias anything the caller's
// arguments point to, so fields read through a reference would be reloaded after every store.
inline void store_half(const Int8GemmArgs& g, const RequantAvx512& rq, int64_t i, int64_t j, __m512i acc,
                       __mmask16 mask) {
  if (g.row_sum && g.col_shift) {
    const __m512i shift = _mm512_maskz_loadu_epi32(mask, g.col_shift + j);
    acc = _mm512_add_epi32(acc, _mm512_mullo_epi32(shift, _mm512_set1_epi32(g.row_sum[i])));
  }
  if (g.row_zp && g.row_zp[i] != 0) {
    const __m512i corr = _mm512_maskz_loadu_epi32(mask, g.col_corr + j);
    acc = _mm512_sub_epi32(acc, _mm512_mullo_epi32(corr, _mm512_set1_epi32(g.row_zp[i])));
  }
  if (g.col_offset) acc = _mm512_add_epi32(acc, _mm512_maskz_loadu_epi32(mask, g.col_offset + j));
  if (g.c_i32) {
    _mm512_mask_storeu_epi32(g.c_i32 + i * g.ldc + j, mask, acc);
    return;
  }
  if (g.c_q) {
    store_requantized(g, rq, i, j, acc, mask);
    return;
  }
  // The maskz form: GCC 12 warns that the plain one reads an undefined register.
  __m512 v = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(0xFFFF, acc), _mm512_maskz_loadu_ps(mask, g.col_scale + j));
  if (g.row_scale) v = _mm512_mul_ps(v, _mm512_set1_ps(g.row_scale[i]));
  if (g.bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, g.bias + j));
  _mm512_mask_storeu_ps(g.c_f32 + i * g.ldc + j, mask, v);
}

// One row of an assembly depth step: the row's 4 bytes of A broadcast into BCAST and
// multiplied into its accumulators against the B vectors zmm24.. (2 per panel).
#define IGNIS_VNNI_ROW_2(SRC, BCAST, ACC0, ACC1)                                                    \
  "vpbroadcastd " SRC ", %%zmm" BCAST "\n\t"                                                         \
  "vpdpbusd %%zmm24, %%zmm" BCAST ", %%zmm" ACC0 "\n\t"                                              \
  "vpdpbusd %%zmm25, %%zmm" BCAST ", %%zmm" ACC1 "\n\t"
#define IGNIS_VNNI_ROW_4(SRC, BCAST, ACC0, ACC1, ACC2, ACC3)                                        \
  IGNIS_VNNI_ROW_2(SRC, BCAST, ACC0, ACC1)                                                           \
  "vpdpbusd %%zmm26, %%zmm" BCAST ", %%zmm" ACC2 "\n\t"                                              \
  "vpdpbusd %%zmm27, %%zmm" BCAST ", %%zmm" ACC3 "\n\t"
// The six rows' quads, at a0 and a3 (rows 0 and 3) with leading dimension lda.
#define IGNIS_VNNI_ROW0 "(%[a0])"
#define IGNIS_VNNI_ROW1 "(%[a0],%[lda])"
#define IGNIS_VNNI_ROW2 "(%[a0],%[lda],2)"
#define IGNIS_VNNI_ROW3 "(%[a3])"
#define IGNIS_VNNI_ROW4 "(%[a3],%[lda])"
#define IGNIS_VNNI_ROW5 "(%[a3],%[lda],2)"
#define IGNIS_VNNI_ZERO(R) "vpxord %%zmm" R ", %%zmm" R ", %%zmm" R "\n\t"
#define IGNIS_VNNI_STORE(R, OFF) "vmovdqa64 %%zmm" R ", " OFF "(%[out])\n\t"
// The accumulators zmm0..zmm11 (one panel) or zmm0..zmm23 (two) zeroed, and stored to out in order.
#define IGNIS_VNNI_ZERO_12                                                                          \
  IGNIS_VNNI_ZERO("0") IGNIS_VNNI_ZERO("1") IGNIS_VNNI_ZERO("2") IGNIS_VNNI_ZERO("3") IGNIS_VNNI_ZERO("4") \
  IGNIS_VNNI_ZERO("5") IGNIS_VNNI_ZERO("6") IGNIS_VNNI_ZERO("7") IGNIS_VNNI_ZERO("8") IGNIS_VNNI_ZERO("9") \
  IGNIS_VNNI_ZERO("10") IGNIS_VNNI_ZERO("11")
#define IGNIS_VNNI_ZERO_24                                                                          \
  IGNIS_VNNI_ZERO_12 IGNIS_VNNI_ZERO("12") IGNIS_VNNI_ZERO("13") IGNIS_VNNI_ZERO("14") IGNIS_VNNI_ZERO("15") \
  IGNIS_VNNI_ZERO("16") IGNIS_VNNI_ZERO("17") IGNIS_VNNI_ZERO("18") IGNIS_VNNI_ZERO("19")           \
  IGNIS_VNNI_ZERO("20") IGNIS_VNNI_ZERO("21") IGNIS_VNNI_ZERO("22") IGNIS_VNNI_ZERO("23")
#define IGNIS_VNNI_STORE_12                                                                         \
  IGNIS_VNNI_STORE("0", "0") IGNIS_VNNI_STORE("1", "64") IGNIS_VNNI_STORE("2", "128")               \
  IGNIS_VNNI_STORE("3", "192") IGNIS_VNNI_STORE("4", "256") IGNIS_VNNI_STORE("5", "320")            \
  IGNIS_VNNI_STORE("6", "384") IGNIS_VNNI_STORE("7", "448") IGNIS_VNNI_STORE("8", "512")            \
  IGNIS_VNNI_STORE("9", "576") IGNIS_VNNI_STORE("10", "640") IGNIS_VNNI_STORE("11", "704")
#define IGNIS_VNNI_STORE_24                                                                         \
  IGNIS_VNNI_STORE_12 IGNIS_VNNI_STORE("12", "768") IGNIS_VNNI_STORE("13", "832")                   \
  IGNIS_VNNI_STORE("14", "896") IGNIS_VNNI_STORE("15", "960") IGNIS_VNNI_STORE("16", "1024")        \
  IGNIS_VNNI_STORE("17", "1088") IGNIS_VNNI_STORE("18", "1152") IGNIS_VNNI_STORE("19", "1216")      \
  IGNIS_VNNI_STORE("20", "1280") IGNIS_VNNI_STORE("21", "1344") IGNIS_VNNI_STORE("22", "1408")      \
  IGNIS_VNNI_STORE("23", "1472")
// Steps the loop: the next quad of A and of B, n counted down to 0.
#define IGNIS_VNNI_LOOP_NEXT                                                                        \
  "add $4, %[a0]\n\t"                                                                               \
  "add $4, %[a3]\n\t"                                                                               \
  "sub $-128, %[b]\n\t"                                                                             \
  "dec %[n]\n\t"                                                                                    \
  "jnz 1b\n"                                                                                         \
  "2:\n\t"
#define IGNIS_VNNI_CLOBBERS                                                                         \
  "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", \
      "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23",  \
      "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31"

// `quads` depth quads of 6 rows of A (at a, leading dimension lda) times two panels of B (at
// b and b + panel_bytes), the 24 sums stored to out[r][c] (16 int32 each, r-major).
void depth_loop_6x64(int64_t quads, const uint8_t* a, int64_t lda, const int8_t* b, int64_t panel_bytes,
                     int32_t* out) {
  const uint8_t* a3 = a + 3 * lda;
  asm volatile(
      IGNIS_VNNI_ZERO_24
      "test %[n], %[n]\n\tjz 2f\n\t.p2align 5\n1:\n\t"
      "vmovdqu64 (%[b]), %%zmm24\n\t"
      "vmovdqu64 64(%[b]), %%zmm25\n\t"
      "vmovdqu64 (%[b],%[pb]), %%zmm26\n\t"
      "vmovdqu64 64(%[b],%[pb]), %%zmm27\n\t"
      IGNIS_VNNI_ROW_4(IGNIS_VNNI_ROW0, "28", "0", "1", "2", "3")
      IGNIS_VNNI_ROW_4(IGNIS_VNNI_ROW1, "29", "4", "5", "6", "7")
      IGNIS_VNNI_ROW_4(IGNIS_VNNI_ROW2, "30", "8", "9", "10", "11")
      IGNIS_VNNI_ROW_4(IGNIS_VNNI_ROW3, "31", "12", "13", "14", "15")
      IGNIS_VNNI_ROW_4(IGNIS_VNNI_ROW4, "28", "16", "17", "18", "19")
      IGNIS_VNNI_ROW_4(IGNIS_VNNI_ROW5, "29", "20", "21", "22", "23")
      IGNIS_VNNI_LOOP_NEXT
      IGNIS_VNNI_STORE_24
      : [a0] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(quads)
      : [lda] "r"(lda), [pb] "r"(panel_bytes), [out] "r"(out)
      : IGNIS_VNNI_CLOBBERS);
}

// The same for one panel of B: 12 sums, out[r][c] for c < 2.
void depth_loop_6x32(int64_t quads, const uint8_t* a, int64_t lda, const int8_t* b, int32_t* out) {
  const uint8_t* a3 = a + 3 * lda;
  asm volatile(
      IGNIS_VNNI_ZERO_12
      "test %[n], %[n]\n\tjz 2f\n\t.p2align 5\n1:\n\t"
      "vmovdqu64 (%[b]), %%zmm24\n\t"
      "vmovdqu64 64(%[b]), %%zmm25\n\t"
      IGNIS_VNNI_ROW_2(IGNIS_VNNI_ROW0, "28", "0", "1")
      IGNIS_VNNI_ROW_2(IGNIS_VNNI_ROW1, "29", "2", "3")
      IGNIS_VNNI_ROW_2(IGNIS_VNNI_ROW2, "30", "4", "5")
      IGNIS_VNNI_ROW_2(IGNIS_VNNI_ROW3, "31", "6", "7")
      IGNIS_VNNI_ROW_2(IGNIS_VNNI_ROW4, "28", "8", "9")
      IGNIS_VNNI_ROW_2(IGNIS_VNNI_ROW5, "29", "10", "11")
      IGNIS_VNNI_LOOP_NEXT
      IGNIS_VNNI_STORE_12
      : [a0] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n] "+r"(quads)
      : [lda] "r"(lda), [out] "r"(out)
      : IGNIS_VNNI_CLOBBERS);
}
// Indirect A (Int8GemmArgs::a_table): `taps` runs of `tap_quads` depth quads, the six rows'
// bytes of run t at table[t * stride + r] (stride_bytes = 8 * stride), B read straight on. The
// row pointers live in registers for one run; the sums are stored as depth_loop_6x64's.
#define IGNIS_VNNI_TAP_START                                                                        \
  "test %[t], %[t]\n\tjz 4f\n"                                                                       \
  "3:\n\t"                                                                                          \
  "mov (%[tab]), %[r0]\n\t"                                                                         \
  "mov 8(%[tab]), %[r1]\n\t"                                                                        \
  "mov 16(%[tab]), %[r2]\n\t"                                                                       \
  "mov 24(%[tab]), %[r3]\n\t"                                                                       \
  "mov 32(%[tab]), %[r4]\n\t"                                                                       \
  "mov 40(%[tab]), %[r5]\n\t"                                                                       \
  "add %[ts], %[tab]\n\t"                                                                           \
  "mov %[nq], %[n]\n\t"                                                                             \
  ".p2align 5\n1:\n\t"
#define IGNIS_VNNI_TAP_NEXT                                                                         \
  "add $4, %[r0]\n\t"                                                                               \
  "add $4, %[r1]\n\t"                                                                               \
  "add $4, %[r2]\n\t"                                                                               \
  "add $4, %[r3]\n\t"                                                                               \
  "add $4, %[r4]\n\t"                                                                               \
  "add $4, %[r5]\n\t"                                                                               \
  "sub $-128, %[b]\n\t"                                                                             \
  "dec %[n]\n\t"                                                                                    \
  "jnz 1b\n\t"                                                                                      \
  "dec %[t]\n\t"                                                                                    \
  "jnz 3b\n"                                                                                        \
  "4:\n\t"

void depth_loop_indirect_6x64(int64_t taps, int64_t tap_quads, const uint8_t* const* table, int64_t stride_bytes,
                              const int8_t* b, int64_t panel_bytes, int32_t* out) {
  const uint8_t *r0, *r1, *r2, *r3, *r4, *r5;
  int64_t n;
  asm volatile(
      IGNIS_VNNI_ZERO_24
      IGNIS_VNNI_TAP_START
      "vmovdqu64 (%[b]), %%zmm24\n\t"
      "vmovdqu64 64(%[b]), %%zmm25\n\t"
      "vmovdqu64 (%[b],%[pb]), %%zmm26\n\t"
      "vmovdqu64 64(%[b],%[pb]), %%zmm27\n\t"
      IGNIS_VNNI_ROW_4("(%[r0])", "28", "0", "1", "2", "3")
      IGNIS_VNNI_ROW_4("(%[r1])", "29", "4", "5", "6", "7")
      IGNIS_VNNI_ROW_4("(%[r2])", "30", "8", "9", "10", "11")
      IGNIS_VNNI_ROW_4("(%[r3])", "31", "12", "13", "14", "15")
      IGNIS_VNNI_ROW_4("(%[r4])", "28", "16", "17", "18", "19")
      IGNIS_VNNI_ROW_4("(%[r5])", "29", "20", "21", "22", "23")
      IGNIS_VNNI_TAP_NEXT
      IGNIS_VNNI_STORE_24
      : [tab] "+r"(table), [b] "+r"(b), [t] "+r"(taps), [n] "=&r"(n), [r0] "=&r"(r0), [r1] "=&r"(r1),
        [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [r5] "=&r"(r5)
      : [ts] "m"(stride_bytes), [nq] "m"(tap_quads), [pb] "r"(panel_bytes), [out] "r"(out)
      : IGNIS_VNNI_CLOBBERS);
}

// The same for one panel of B: 12 sums, out[r][c] for c < 2.
void depth_loop_indirect_6x32(int64_t taps, int64_t tap_quads, const uint8_t* const* table, int64_t stride_bytes,
                              const int8_t* b, int32_t* out) {
  const uint8_t *r0, *r1, *r2, *r3, *r4, *r5;
  int64_t n;
  asm volatile(
      IGNIS_VNNI_ZERO_12
      IGNIS_VNNI_TAP_START
      "vmovdqu64 (%[b]), %%zmm24\n\t"
      "vmovdqu64 64(%[b]), %%zmm25\n\t"
      IGNIS_VNNI_ROW_2("(%[r0])", "28", "0", "1")
      IGNIS_VNNI_ROW_2("(%[r1])", "29", "2", "3")
      IGNIS_VNNI_ROW_2("(%[r2])", "30", "4", "5")
      IGNIS_VNNI_ROW_2("(%[r3])", "31", "6", "7")
      IGNIS_VNNI_ROW_2("(%[r4])", "28", "8", "9")
      IGNIS_VNNI_ROW_2("(%[r5])", "29", "10", "11")
      IGNIS_VNNI_TAP_NEXT
      IGNIS_VNNI_STORE_12
      : [tab] "+r"(table), [b] "+r"(b), [t] "+r"(taps), [n] "=&r"(n), [r0] "=&r"(r0), [r1] "=&r"(r1),
        [r2] "=&r"(r2), [r3] "=&r"(r3), [r4] "=&r"(r4), [r5] "=&r"(r5)
      : [ts] "m"(stride_bytes), [nq] "m"(tap_quads), [out] "r"(out)
      : IGNIS_VNNI_CLOBBERS);
}
#undef IGNIS_VNNI_TAP_START
#undef IGNIS_VNNI_TAP_NEXT
#undef IGNIS_VNNI_ROW_2
#undef IGNIS_VNNI_ROW_4
#undef IGNIS_VNNI_ROW0
#undef IGNIS_VNNI_ROW1
#undef IGNIS_VNNI_ROW2
#undef IGNIS_VNNI_ROW3
#undef IGNIS_VNNI_ROW4
#undef IGNIS_VNNI_ROW5
#undef IGNIS_VNNI_ZERO
#undef IGNIS_VNNI_ZERO_12
#undef IGNIS_VNNI_ZERO_24
#undef IGNIS_VNNI_STORE_12
#undef IGNIS_VNNI_STORE_24
#undef IGNIS_VNNI_STORE
#undef IGNIS_VNNI_LOOP_NEXT
#undef IGNIS_VNNI_CLOBBERS

// The requantized bytes of a tile whose sums need no zero-point correction beyond the column
// offsets and row biases (every QLinearConv and QLinearMatMul with symmetric weights): what
// store_half does, with its per-vector branches decided once and each column vector's offset
// and multiplier loaded once for all kR rows (a 16-deep GEMM spends as long here as in its
// multiply-adds).
template <int kR, int kP>
[[gnu::always_inline]] inline void store_requantized_tile(const Int8GemmArgs& g, const RequantAvx512& rq, int64_t i0,
                                                          int64_t panel, const __m512i (&acc)[kR][2 * kP]) {
  const PackedInt8B& b = *g.b;
  __m512i row_bias[kR];
  __m512 row_m[kR];
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r) {
    row_bias[r] = _mm512_set1_epi32(g.q_bias ? g.q_bias[i0 + r] : 0);
    row_m[r] = _mm512_set1_ps(g.q_row_scale ? g.q_row_scale[i0 + r] : 0.0f);
  }
  #pragma GCC unroll 16
  for (int c = 0; c < 2 * kP; ++c) {
    const int64_t j = (panel + c / 2) * kInt8PanelCols + (c % 2) * 16;
    const int64_t cols = std::clamp<int64_t>(b.n() - j, 0, 16);
    if (cols == 0) continue;
    const auto mask = static_cast<__mmask16>(cols == 16 ? 0xFFFF : (1u << cols) - 1);
    const __m512i offset = g.col_offset ? _mm512_maskz_loadu_epi32(mask, g.col_offset + j) : _mm512_setzero_si512();
    const __m512 col_m = g.q_col_scale ? _mm512_maskz_loadu_ps(mask, g.q_col_scale + j) : _mm512_setzero_ps();
    uint8_t* out = static_cast<uint8_t*>(g.c_q) + i0 * g.ldc + j;
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      const __m512i sum = _mm512_add_epi32(_mm512_add_epi32(acc[r][c], offset), row_bias[r]);
      _mm512_mask_cvtepi32_storeu_epi8(out + r * g.ldc, mask, rq.values(sum, g.q_col_scale ? col_m : row_m[r]));
    }
  }
}

// kR rows x kP panels (32 columns each) of C.
template <int kR, int kP>
void tile(const Int8GemmArgs& g, int64_t i0, int64_t panel) {
  const PackedInt8B& b = *g.b;
  const int8_t* bp[kP];
  #pragma GCC unroll 16
  for (int p = 0; p < kP; ++p) bp[p] = b.panel(panel + p);
  const int64_t k = b.k();
  const int64_t full = k / kInt8Quad;
  __m512i acc[kR][2 * kP];
  #pragma GCC unroll 16
  for (int r = 0; r < kR; ++r)
    #pragma GCC unroll 16
    for (int c = 0; c < 2 * kP; ++c) acc[r][c] = _mm512_setzero_si512();
  const uint8_t* a = g.a ? g.a + i0 * g.lda : nullptr;  // null with a_table
  const int64_t quads = b.quads();
  int64_t q = 0;
  if (g.a_table) {
    // Whole groups of six rows (the table has entries past m for them); kR of them kept.
    alignas(64) int32_t sums[kRows * 2 * kP * 16];
    const uint8_t* const* table = g.a_table + i0;
    const int64_t tap_quads = quads / g.a_taps, stride_bytes = g.a_table_stride * 8;
    if constexpr (kP == 2) depth_loop_indirect_6x64(g.a_taps, tap_quads, table, stride_bytes, bp[0], bp[1] - bp[0], sums);
    else depth_loop_indirect_6x32(g.a_taps, tap_quads, table, stride_bytes, bp[0], sums);
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r)
      #pragma GCC unroll 16
      for (int c = 0; c < 2 * kP; ++c) acc[r][c] = _mm512_load_si512(sums + (r * 2 * kP + c) * 16);
    q = quads;
  } else if constexpr (kR == kRows) {
    // The whole quads in assembly, the last one (K not a multiple of 4) below.
    alignas(64) int32_t sums[kR * 2 * kP * 16];
    if constexpr (kP == 2) depth_loop_6x64(full, a, g.lda, bp[0], bp[1] - bp[0], sums);
    else depth_loop_6x32(full, a, g.lda, bp[0], sums);
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r)
      #pragma GCC unroll 16
      for (int c = 0; c < 2 * kP; ++c) acc[r][c] = _mm512_load_si512(sums + (r * 2 * kP + c) * 16);
    q = full;
  }
  for (; q < quads; ++q) {
    __m512i bv[2 * kP];
    #pragma GCC unroll 16
    for (int p = 0; p < kP; ++p) {
      bv[2 * p] = _mm512_loadu_si512(bp[p] + q * 128);
      bv[2 * p + 1] = _mm512_loadu_si512(bp[p] + q * 128 + 64);
    }
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      // B is zero past K, so the last quad's missing bytes of A only need to be readable.
      int32_t quad;
      if (q < full) std::memcpy(&quad, a + r * g.lda + q * kInt8Quad, sizeof quad);
      else quad = load_quad(a + r * g.lda + q * kInt8Quad, static_cast<int>(k - full * kInt8Quad));
      const __m512i av = _mm512_set1_epi32(quad);
      #pragma GCC unroll 16
      for (int c = 0; c < 2 * kP; ++c) acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], av, bv[c]);
    }
  }
  const Int8GemmArgs args = g;
  const RequantAvx512 rq(args.q_zero_point, args.q_min, args.q_max, args.q_signed);
  if (args.c_q && !args.row_zp && !(args.row_sum && args.col_shift)) {
    store_requantized_tile<kR, kP>(args, rq, i0, panel, acc);
    return;
  }
  #pragma GCC unroll 16
  for (int p = 0; p < kP; ++p) {
    const int64_t j0 = (panel + p) * kInt8PanelCols;
    const int64_t cols = std::min<int64_t>(kInt8PanelCols, b.n() - j0);
    const __mmask16 m0 = cols >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << cols) - 1);
    const __mmask16 m1 =
        cols >= 32 ? __mmask16(0xFFFF) : cols > 16 ? static_cast<__mmask16>((1u << (cols - 16)) - 1) : 0;
    #pragma GCC unroll 16
    for (int r = 0; r < kR; ++r) {
      store_half(args, rq, i0 + r, j0, acc[r][2 * p], m0);
      if (m1) store_half(args, rq, i0 + r, j0 + 16, acc[r][2 * p + 1], m1);
    }
  }
}

// Rows [i, i + rows) x panels [p0, p1): pairs of panels, then a last single one.
template <int kR>
void row_block(const Int8GemmArgs& g, int64_t i, int64_t p0, int64_t p1) {
  int64_t p = p0;
  for (; p + 2 <= p1; p += 2) tile<kR, 2>(g, i, p);
  if (p < p1) tile<kR, 1>(g, i, p);
}

void range(const Int8GemmArgs& g, int64_t i0, int64_t i1, int64_t p0, int64_t p1) {
  for (int64_t i = i0; i < i1; i += kRows) {
    switch (std::min<int64_t>(kRows, i1 - i)) {
      case 6: row_block<6>(g, i, p0, p1); break;
      case 5: row_block<5>(g, i, p0, p1); break;
      case 4: row_block<4>(g, i, p0, p1); break;
      case 3: row_block<3>(g, i, p0, p1); break;
      case 2: row_block<2>(g, i, p0, p1); break;
      default: row_block<1>(g, i, p0, p1); break;
    }
  }
}

}  // namespace

const Int8GemmBackend& int8_gemm_backend_vnni() {
  static const Int8GemmBackend backend{.name = "avx512vnni_8x32", .range = range, .indirect_a = true};
  return backend;
}

}  // namespace ignis::kernels::x86
