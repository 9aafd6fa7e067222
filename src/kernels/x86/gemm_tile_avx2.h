// SPDX-License-Identifier: Apache-2.0
// How an AVX2 GEMM tile of up to 4 rows x 24 columns lands in C: alpha, beta, the epilogue
// (bias, residual, activation) per 8-column vector, then the store. Shared by the float32
// tiles (gemm_avx2.cc) and the half-weight tiles (gemm_f16w_avx2.cc). For *_avx2.cc files
// only; everything has internal linkage (see gemm_blocked.h).
#pragma once

#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/gemm_blocked.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {
namespace {

// Finishes 8 columns of row `row` (columns col .. col + 7 of C, `mask` selecting the valid
// ones when kTail) and stores them.
template <bool kTail>
inline void store8(__m256 acc, float* c, const TileParams& t, int64_t row, int64_t col, __m256i mask) {
  __m256 v = _mm256_mul_ps(acc, _mm256_set1_ps(t.alpha));
  if (t.read_c) {
    const __m256 old = kTail ? _mm256_maskload_ps(c, mask) : _mm256_loadu_ps(c);
    v = _mm256_fmadd_ps(old, _mm256_set1_ps(t.beta), v);
  }
  if (t.finish) {
    const GemmEpilogue& e = t.e;
    if (e.bias) {
      const float* b = e.bias + row * e.bias_rs;
      __m256 bv;
      if (e.bias_cs == 0) bv = _mm256_broadcast_ss(b);
      else bv = kTail ? _mm256_maskload_ps(b + col, mask) : _mm256_loadu_ps(b + col);
      v = _mm256_fmadd_ps(bv, _mm256_set1_ps(e.bias_scale), v);
    }
    if (e.residual) {
      const float* z = e.residual + row * e.residual_ld + col;
      v = _mm256_add_ps(v, kTail ? _mm256_maskload_ps(z, mask) : _mm256_loadu_ps(z));
    }
    v = activate_avx2(v, e);
  }
  if (kTail) _mm256_maskstore_ps(c, mask, v);
  else _mm256_storeu_ps(c, v);
}

// Touches the M rows of a C tile (a 96-byte row spans two or three cache lines) so their lines
// arrive while the depth loop runs; on the last depth slice also the residual's rows, which
// the epilogue reads.
template <int M>
[[gnu::always_inline]] inline void prefetch_rows_4x24(const float* c, int64_t ldc) {
  for (int i = 0; i < M; ++i) {
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 12), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + kGemmNr - 1), _MM_HINT_T0);
  }
}
template <int M>
[[gnu::always_inline]] inline void prefetch_tile_4x24(const float* c, int64_t ldc, const TileParams& tp,
                                                      int64_t row0, int64_t col0) {
  prefetch_rows_4x24<M>(c, ldc);
  if (tp.finish && tp.e.residual) prefetch_rows_4x24<M>(tp.e.residual + row0 * tp.e.residual_ld + col0, tp.e.residual_ld);
}

// One depth step of the assembly loop below: three B vectors brought in by LOAD (8 values as
// floats from VB bytes), four broadcasts of A and twelve FMAs into ymm0-ymm11.
#define IGNIS_GEMM_4X24_STEP(LOAD, VB, A_OFF, B_OFF)                                                   \
  LOAD " " B_OFF "(%[b]), %%ymm12\n\t" LOAD " " B_OFF "+" #VB "(%[b]), %%ymm13\n\t"                     \
  LOAD " " B_OFF "+2*" #VB "(%[b]), %%ymm14\n\t"                                                       \
  "vbroadcastss " #A_OFF "(%[a]), %%ymm15\n\t"                                                          \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm0\n\tvfmadd231ps %%ymm13, %%ymm15, %%ymm1\n\t"                     \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm2\n\t"                                                            \
  "vbroadcastss " #A_OFF "+4(%[a]), %%ymm15\n\t"                                                        \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm3\n\tvfmadd231ps %%ymm13, %%ymm15, %%ymm4\n\t"                     \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm5\n\t"                                                            \
  "vbroadcastss " #A_OFF "+8(%[a]), %%ymm15\n\t"                                                        \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm6\n\tvfmadd231ps %%ymm13, %%ymm15, %%ymm7\n\t"                     \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm8\n\t"                                                            \
  "vbroadcastss " #A_OFF "+12(%[a]), %%ymm15\n\t"                                                       \
  "vfmadd231ps %%ymm12, %%ymm15, %%ymm9\n\tvfmadd231ps %%ymm13, %%ymm15, %%ymm10\n\t"                   \
  "vfmadd231ps %%ymm14, %%ymm15, %%ymm11\n\t"

// The whole loop: four steps per iteration, the prefetch of two lines of [pf, pf_end) after
// the second, then one step at a time for the rest of the depth; the accumulators stored to out.
#define IGNIS_GEMM_4X24_LOOP(LOAD, VB)                                                                 \
  "vxorps %%ymm0, %%ymm0, %%ymm0\n\tvxorps %%ymm1, %%ymm1, %%ymm1\n\tvxorps %%ymm2, %%ymm2, %%ymm2\n\t"  \
  "vxorps %%ymm3, %%ymm3, %%ymm3\n\tvxorps %%ymm4, %%ymm4, %%ymm4\n\tvxorps %%ymm5, %%ymm5, %%ymm5\n\t"  \
  "vxorps %%ymm6, %%ymm6, %%ymm6\n\tvxorps %%ymm7, %%ymm7, %%ymm7\n\tvxorps %%ymm8, %%ymm8, %%ymm8\n\t"  \
  "vxorps %%ymm9, %%ymm9, %%ymm9\n\tvxorps %%ymm10, %%ymm10, %%ymm10\n\tvxorps %%ymm11, %%ymm11, %%ymm11\n\t" \
  "test %[n4], %[n4]\n\t"                                                                              \
  "jz 2f\n\t"                                                                                          \
  ".p2align 4\n"                                                                                       \
  "1:\n\t" IGNIS_GEMM_4X24_STEP(LOAD, VB, 0, "0") IGNIS_GEMM_4X24_STEP(LOAD, VB, 16, "3*" #VB)          \
  "cmp %[pfe], %[pf]\n\t"                                                                              \
  "jae 5f\n\t"                                                                                         \
  "prefetcht1 (%[pf])\n\t"                                                                             \
  "prefetcht1 64(%[pf])\n\t"                                                                           \
  "add $128, %[pf]\n"                                                                                  \
  "5:\n\t" IGNIS_GEMM_4X24_STEP(LOAD, VB, 32, "6*" #VB) IGNIS_GEMM_4X24_STEP(LOAD, VB, 48, "9*" #VB)    \
  "add $64, %[a]\n\t"                                                                                  \
  "add $12*" #VB ", %[b]\n\t"                                                                          \
  "dec %[n4]\n\t"                                                                                      \
  "jnz 1b\n"                                                                                           \
  "2:\n\t"                                                                                             \
  "test %[n1], %[n1]\n\t"                                                                              \
  "jz 4f\n"                                                                                            \
  "3:\n\t" IGNIS_GEMM_4X24_STEP(LOAD, VB, 0, "0")                                                      \
  "add $16, %[a]\n\t"                                                                                  \
  "add $3*" #VB ", %[b]\n\t"                                                                           \
  "dec %[n1]\n\t"                                                                                      \
  "jnz 3b\n"                                                                                           \
  "4:\n\t"                                                                                             \
  "vmovaps %%ymm0, (%[out])\n\tvmovaps %%ymm1, 32(%[out])\n\tvmovaps %%ymm2, 64(%[out])\n\t"           \
  "vmovaps %%ymm3, 96(%[out])\n\tvmovaps %%ymm4, 128(%[out])\n\tvmovaps %%ymm5, 160(%[out])\n\t"       \
  "vmovaps %%ymm6, 192(%[out])\n\tvmovaps %%ymm7, 224(%[out])\n\tvmovaps %%ymm8, 256(%[out])\n\t"      \
  "vmovaps %%ymm9, 288(%[out])\n\tvmovaps %%ymm10, 320(%[out])\n\tvmovaps %%ymm11, 352(%[out])\n"

// The depth loop of a full-height tile: out[i][v] = sum_p A[i, p] * B[p, 8v : 8v + 8] for the
// four rows i and three vectors v, accumulated in ymm0-ymm11 and stored to `out` (row-major,
// 32-byte aligned), B a float32 panel (kHalf false) or a half one (true: each B vector widened
// by vcvtph2ps as it is loaded). The lines [pf, pf + 64 * pf_lines) are prefetched into L2 along
// the way, two every four depth steps, the rest at the end. Written in assembly: the compiler,
// with all 16 ymm registers live (12 accumulators, 3 B vectors, 1 broadcast), adds register
// copies that cost ~2% on float32 panels (90.8 vs 92.5 GFLOP/s in L1 on the tuning machine),
// and on half panels its loop ran about 60 GFLOP/s against 76-84 for this one (one Zen 3
// core, BM_SgemmColdWeights f16w_avx2 at 64 rows). Out of line: inlined into the tiles, the
// float32 loop measured 5-8% slower there.
template <bool kHalf>
[[gnu::noinline]] void depth_loop_4x24(int64_t kc, const float* a, const void* b, float* out,
                                       const char* pf, int64_t pf_lines) {
  static_assert(kGemmMr == 4 && kGemmNr == 24, "the assembly loop hard-codes the 4x24 panel strides");
  int64_t n4 = kc / 4, n1 = kc % 4;
  const char* pf_end = pf + 64 * pf_lines;
#define IGNIS_GEMM_4X24_OPERANDS                                                                      \
  : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [n1] "+r"(n1), [pf] "+r"(pf)                              \
  : [out] "r"(out), [pfe] "r"(pf_end)                                                                  \
  : "cc", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
    "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
  if constexpr (kHalf) asm volatile(IGNIS_GEMM_4X24_LOOP("vcvtph2ps", 16) IGNIS_GEMM_4X24_OPERANDS);
  else asm volatile(IGNIS_GEMM_4X24_LOOP("vmovaps", 32) IGNIS_GEMM_4X24_OPERANDS);
#undef IGNIS_GEMM_4X24_OPERANDS
  for (; pf < pf_end; pf += 64) _mm_prefetch(pf, _MM_HINT_T1);  // more lines than the loop had room for
}
#undef IGNIS_GEMM_4X24_LOOP
#undef IGNIS_GEMM_4X24_STEP

// acc[i][v] += sum_p A[i, p] * B[p, 8v : 8v + 8] for the first M rows of a float32 A panel
// (stride kGemmMr per depth step) and a B panel (stride kGemmNr) whose rows BRow loads:
// BRow::Elem is the panel's element type, BRow::load(b) the 8 columns at b as floats (FloatRows,
// HalfRows below). The lines [pf, pf + 64 * pf_lines) are prefetched into L2 along the way,
// two every four depth steps (what is left at the end, at once): spread out, they do not
// stall the FMAs as a burst would.
template <class BRow, int M>
[[gnu::always_inline]] inline void depth_loop_4x24_rows(int64_t kc, const float* __restrict a,
                                                        const typename BRow::Elem* __restrict b,
                                                        __m256 (&acc)[kGemmMr][3], const char* pf = nullptr,
                                                        int64_t pf_lines = 0) {
  auto step = [&] {
    const __m256 b0 = BRow::load(b), b1 = BRow::load(b + 8), b2 = BRow::load(b + 16);
    for (int i = 0; i < M; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
      acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
      acc[i][2] = _mm256_fmadd_ps(ai, b2, acc[i][2]);
    }
    a += kGemmMr;
    b += kGemmNr;
  };
  const char* const pf_end = pf + 64 * pf_lines;
  int64_t p = 0;
  for (; p + 4 <= kc; p += 4) {
    step();
    step();
    if (pf < pf_end) {
      _mm_prefetch(pf, _MM_HINT_T1);
      _mm_prefetch(pf + 64, _MM_HINT_T1);
      pf += 128;
    }
    step();
    step();
  }
  for (; p < kc; ++p) step();
  for (; pf < pf_end; pf += 64) _mm_prefetch(pf, _MM_HINT_T1);
}

// Stores a finished tile of M rows (M <= 4; all 24 columns, or the first `cols` when kTail)
// held in acc[i][0..2] (8 columns each).
template <int M, bool kTail>
inline void store_tile_4x24(const __m256 (&acc)[kGemmMr][3], float* c, int64_t ldc, const TileParams& tp,
                            int64_t row0, int64_t col0, int cols) {
  const TileParams t = tp;
  if (!kTail && !t.read_c && !t.finish && t.alpha == 1.0f) {  // the common first slice: plain stores
    for (int i = 0; i < M; ++i)
      for (int v = 0; v < 3; ++v) _mm256_storeu_ps(c + i * ldc + 8 * v, acc[i][v]);
    return;
  }
  __m256i mask[3] = {};
  if (kTail)
    for (int v = 0; v < 3; ++v) mask[v] = lane_mask(std::clamp(cols - 8 * v, 0, 8));
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc;
    for (int v = 0; v < 3; ++v)
      if (!kTail || cols > 8 * v) store8<kTail>(acc[i][v], ci + 8 * v, t, row0 + i, col0 + 8 * v, mask[v]);
  }
}

// B panel rows for depth_loop_4x24_rows and micro_tile_4x24: float32 panels (gemm_avx2.cc)
// and half ones, 8 halves widened by vcvtph2ps with the load folded in (gemm_f16w_avx2.cc).
struct FloatRows {
  using Elem = float;
  static constexpr bool kHalf = false;
  static __m256 load(const float* b) { return _mm256_load_ps(b); }
};
struct HalfRows {
  using Elem = uint16_t;
  static constexpr bool kHalf = true;
  static __m256 load(const uint16_t* b) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b))); }
};

// C[0:M, 0:24] (or the first `cols` columns when kTail) from a float32 A panel (stride 4 per
// depth step) and a B panel of Rows (stride 24): full-height tiles run the assembly loop,
// shorter ones the compiled one; both prefetch [pf, pf + 64 * pf_lines) along the way.
template <class Rows, int M, bool kTail>
void micro_tile_4x24(int64_t kc, const float* __restrict a, const typename Rows::Elem* __restrict b, float* c,
                     int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0, int cols, const char* pf,
                     int64_t pf_lines) {
  __m256 acc[kGemmMr][3];
  for (int i = 0; i < kGemmMr; ++i) acc[i][0] = acc[i][1] = acc[i][2] = _mm256_setzero_ps();
  prefetch_tile_4x24<M>(c, ldc, tp, row0, col0);
  if constexpr (M == kGemmMr) {
    alignas(32) float out[kGemmMr * kGemmNr];
    depth_loop_4x24<Rows::kHalf>(kc, a, b, out, pf, pf_lines);
    for (int i = 0; i < kGemmMr; ++i)
      for (int v = 0; v < 3; ++v) acc[i][v] = _mm256_load_ps(out + i * kGemmNr + 8 * v);
  } else {
    depth_loop_4x24_rows<Rows, M>(kc, a, b, acc, pf, pf_lines);
  }
  store_tile_4x24<M, kTail>(acc, c, ldc, tp, row0, col0, cols);
}

// micro_tile_4x24 by [partial columns][rows - 1].
template <class Rows>
using TileFn4x24 = void (*)(int64_t, const float*, const typename Rows::Elem*, float*, int64_t, const TileParams&,
                            int64_t, int64_t, int, const char*, int64_t);
template <class Rows>
constexpr TileFn4x24<Rows> kTiles4x24[2][kGemmMr] = {
    {micro_tile_4x24<Rows, 1, false>, micro_tile_4x24<Rows, 2, false>, micro_tile_4x24<Rows, 3, false>,
     micro_tile_4x24<Rows, 4, false>},
    {micro_tile_4x24<Rows, 1, true>, micro_tile_4x24<Rows, 2, true>, micro_tile_4x24<Rows, 3, true>,
     micro_tile_4x24<Rows, 4, true>},
};

}  // namespace
}  // namespace ignis::kernels::x86
