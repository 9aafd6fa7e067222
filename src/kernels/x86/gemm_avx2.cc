// SPDX-License-Identifier: Apache-2.0
// AVX2/FMA single-precision GEMM tiles, packing and the serial blocked loop.
//
// Scheme (the BLIS loop order): for each kNc-wide column block of C and each kGemmKc-deep
// slice of the depth, op(B) is packed into kGemmNr-column panels (or read prepacked); for
// each kMc-high row block, op(A) is packed into kGemmMr-row panels (or read prepacked). The
// micro-kernel multiplies one A panel by one B panel: per depth step it loads two 8-float B
// vectors, broadcasts six A values and issues twelve FMAs into a 6x16 register tile (12 of
// the 16 ymm registers). A B panel (kc x 16) stays in L1 while the A panels of the row block
// stream from L2; the packed B block stays in L2/L3. Partial tiles run the same code with
// fewer rows (template) and masked column loads/stores, so any M, N, K works.
//
// Blocking, measured with bench/kernels/gemm_bench.cc (BM_Sgemm/1024, single thread, on a
// 2-core KVM guest with 48 KiB L1d and 2 MiB L2 per core): kGemmKc = 384 keeps a B panel at
// 24 KiB (half of L1); kMc = 144 keeps the A block at 216 KiB of L2; kNc = 3072 bounds the
// packed B block (4.5 MiB) for L3. Neighbouring values (Kc 256/512, Mc 72/96/192/288,
// Nc 1024/2048/4096) were within noise or slower.
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/gemm_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kMr = kGemmMr;
constexpr int kNr = kGemmNr;
constexpr int64_t kKc = kGemmKc;
constexpr int64_t kMc = 144;   // multiple of kMr
constexpr int64_t kNc = 3072;  // multiple of kNr
static_assert(kMc % kMr == 0 && kNc % kNr == 0);

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

alignas(64) constexpr int32_t kMaskTable[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, n) set, n in [0, 8].
inline __m256i lane_mask(int n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMaskTable + 8 - n));
}

inline __m256 activate(__m256 v, const GemmEpilogue& e) {
  switch (e.act) {
    case Activation::None: return v;
    // max/min return their second operand when either is NaN: keep v second so NaN propagates.
    case Activation::Relu: return _mm256_max_ps(_mm256_setzero_ps(), v);
    case Activation::Clip:
      return _mm256_min_ps(_mm256_set1_ps(e.act_hi), _mm256_max_ps(_mm256_set1_ps(e.act_lo), v));
    case Activation::LeakyRelu: {
      const __m256 neg = _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ);
      return _mm256_blendv_ps(v, _mm256_mul_ps(v, _mm256_set1_ps(e.act_lo)), neg);
    }
  }
  return v;
}

// How one K slice's tile result lands in C.
struct TileParams {
  float alpha;
  float beta;   // factor on the existing C when read_c
  bool read_c;  // false: C is overwritten
  bool finish;  // last K slice: add the bias and apply the activation
  const GemmEpilogue* ep;
};

// Finishes 8 columns of row `row` (columns col .. col + 7 of C, `mask` selecting the valid
// ones when kTail) and stores them.
template <bool kTail>
inline void store8(__m256 acc, float* c, const TileParams& tp, int64_t row, int64_t col, __m256i mask) {
  __m256 v = _mm256_mul_ps(acc, _mm256_set1_ps(tp.alpha));
  if (tp.read_c) {
    const __m256 old = kTail ? _mm256_maskload_ps(c, mask) : _mm256_loadu_ps(c);
    v = _mm256_fmadd_ps(old, _mm256_set1_ps(tp.beta), v);
  }
  if (tp.finish) {
    const GemmEpilogue& e = *tp.ep;
    if (e.bias) {
      const float* b = e.bias + row * e.bias_rs;
      __m256 bv;
      if (e.bias_cs == 0) bv = _mm256_broadcast_ss(b);
      else bv = kTail ? _mm256_maskload_ps(b + col, mask) : _mm256_loadu_ps(b + col);
      v = _mm256_fmadd_ps(bv, _mm256_set1_ps(e.bias_scale), v);
    }
    v = activate(v, e);
  }
  if (kTail) _mm256_maskstore_ps(c, mask, v);
  else _mm256_storeu_ps(c, v);
}

// C[0:M, 0:16] (or the first `cols` columns when kTail) from an A panel (stride kMr per
// depth step) and a B panel (stride kNr).
template <int M, bool kTail>
void micro_tile(int64_t kc, const float* __restrict a, const float* __restrict b, float* c, int64_t ldc,
                const TileParams& tp, int64_t row0, int64_t col0, int cols) {
  __m256 acc0[M], acc1[M];
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
  // Touch the C tile early so its lines arrive while the depth loop runs.
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
#pragma GCC unroll 4
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(b);
    const __m256 b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
    for (int i = 0; i < M; ++i) {
      const __m256 ai = _mm256_broadcast_ss(a + i);
      acc0[i] = _mm256_fmadd_ps(ai, b0, acc0[i]);
      acc1[i] = _mm256_fmadd_ps(ai, b1, acc1[i]);
    }
    a += kMr;
    b += kNr;
  }
  __m256i m0 = _mm256_setzero_si256(), m1 = _mm256_setzero_si256();
  if (kTail) {
    m0 = lane_mask(std::min(cols, 8));
    m1 = lane_mask(std::max(cols - 8, 0));
  }
#pragma GCC unroll 6
  for (int i = 0; i < M; ++i) {
    float* ci = c + i * ldc;
    store8<kTail>(acc0[i], ci, tp, row0 + i, col0, m0);
    if (!kTail || cols > 8) store8<kTail>(acc1[i], ci + 8, tp, row0 + i, col0 + 8, m1);
  }
}

using TileFn = void (*)(int64_t, const float*, const float*, float*, int64_t, const TileParams&, int64_t, int64_t,
                        int);

constexpr TileFn kTiles[2][kMr] = {
    {micro_tile<1, false>, micro_tile<2, false>, micro_tile<3, false>, micro_tile<4, false>, micro_tile<5, false>,
     micro_tile<6, false>},
    {micro_tile<1, true>, micro_tile<2, true>, micro_tile<3, true>, micro_tile<4, true>, micro_tile<5, true>,
     micro_tile<6, true>},
};

// The mc x nc block of C at (row0, col0) from a packed A block and a packed B block.
void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                  const TileParams& tp, int64_t row0, int64_t col0) {
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    const float* bpanel = bp + jr * kc;
    for (int64_t ir = 0; ir < mc; ir += kMr) {
      const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
      kTiles[cols < kNr][rows - 1](kc, ap + ir * kc, bpanel, c + ir * ldc + jr, ldc, tp, row0 + ir, col0 + jr, cols);
    }
  }
}

// 8x8 transpose of r[0..7] in place.
inline void transpose8(__m256 r[8]) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
  r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
  r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
  r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
  r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
  r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
  r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
  r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// C = beta * C then the epilogue, for K == 0.
void gemm_no_depth(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
    float* row = g.c + i * g.ldc + j0;
    for (int64_t j = 0; j < j1 - j0; ++j) row[j] = g.beta == 0.0f ? 0.0f : g.beta * row[j];
    gemm_f32_apply_epilogue(g.epilogue, i, j0, j1 - j0, row);
  }
}

}  // namespace

void gemm_f32_pack_b(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst) {
  const int64_t full = nc / kNr * kNr;
  const int tail = static_cast<int>(nc - full);
  if (!trans) {
    // Row by row: the source streams contiguously, each panel row is one 64-byte line.
    const __m256i m0 = lane_mask(std::min(tail, 8)), m1 = lane_mask(std::max(tail - 8, 0));
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = x + (p0 + p) * ld + j0;
      float* d = dst + p * kNr;
      for (int64_t j = 0; j < full; j += kNr) {
        _mm256_store_ps(d + j * kc, _mm256_loadu_ps(src + j));
        _mm256_store_ps(d + j * kc + 8, _mm256_loadu_ps(src + j + 8));
      }
      if (tail) {
        _mm256_store_ps(d + full * kc, _mm256_maskload_ps(src + full, m0));
        _mm256_store_ps(d + full * kc + 8, _mm256_maskload_ps(src + full + 8, m1));
      }
    }
    return;
  }
  // op(B)[p][j] = X[j][p]: transpose 8x8 blocks of X rows into each panel.
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    const float* src = x + (j0 + jr) * ld + p0;
    float* d = dst + jr * kc;
    int64_t p = 0;
    if (cols == kNr) {
      for (; p + 8 <= kc; p += 8) {
        for (int h = 0; h < 2; ++h) {
          __m256 r[8];
          for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(src + (h * 8 + j) * ld + p);
          transpose8(r);
          for (int q = 0; q < 8; ++q) _mm256_store_ps(d + (p + q) * kNr + h * 8, r[q]);
        }
      }
    }
    for (; p < kc; ++p)
      for (int j = 0; j < kNr; ++j) d[p * kNr + j] = j < cols ? src[j * ld + p] : 0.0f;
  }
}

void gemm_f32_pack_a(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                     float* dst) {
  const __m256i m6 = lane_mask(kMr);
  for (int64_t ir = 0; ir < mc; ir += kMr) {
    const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
    float* d = dst + ir * kc;
    if (trans) {
      // op(A)[i][p] = X[p][i]: each depth step is a contiguous run of X row p.
      const float* src = x + p0 * ld + i0 + ir;
      if (rows == kMr) {
        for (int64_t p = 0; p < kc; ++p) _mm256_maskstore_ps(d + p * kMr, m6, _mm256_maskload_ps(src + p * ld, m6));
      } else {
        for (int64_t p = 0; p < kc; ++p)
          for (int i = 0; i < kMr; ++i) d[p * kMr + i] = i < rows ? src[p * ld + i] : 0.0f;
      }
      continue;
    }
    const float* src = x + (i0 + ir) * ld + p0;
    int64_t p = 0;
    if (rows == kMr) {
      for (; p + 8 <= kc; p += 8) {
        __m256 r[8];
        for (int i = 0; i < kMr; ++i) r[i] = _mm256_loadu_ps(src + i * ld + p);
        r[6] = r[7] = _mm256_setzero_ps();
        transpose8(r);
        for (int q = 0; q < 8; ++q) _mm256_maskstore_ps(d + (p + q) * kMr, m6, r[q]);
      }
    }
    for (; p < kc; ++p)
      for (int i = 0; i < kMr; ++i) d[p * kMr + i] = i < rows ? src[i * ld + p] : 0.0f;
  }
}

void gemm_f32_apply_epilogue(const GemmEpilogue& e, int64_t row, int64_t col0, int64_t n, float* v) {
  if (!e.bias && e.act == Activation::None) return;
  const float* b = e.bias ? e.bias + row * e.bias_rs : nullptr;
  const __m256 scale = _mm256_set1_ps(e.bias_scale);
  int64_t j = 0;
  for (; j < n; j += 8) {
    const int len = static_cast<int>(std::min<int64_t>(8, n - j));
    const __m256i mask = lane_mask(len);
    __m256 x = _mm256_maskload_ps(v + j, mask);
    if (b) {
      const __m256 bv = e.bias_cs == 0 ? _mm256_broadcast_ss(b) : _mm256_maskload_ps(b + col0 + j, mask);
      x = _mm256_fmadd_ps(bv, scale, x);
    }
    _mm256_maskstore_ps(v + j, mask, activate(x, e));
  }
}

size_t gemm_f32_thread_workspace(const GemmArgs& g) {
  const int64_t kc = std::min(g.k, kKc);
  const int64_t a = g.a.packed ? 0 : round_up(std::min(g.m, kMc), kMr) * kc;
  const int64_t b = g.b.packed ? 0 : round_up(std::min(g.n, kNc), kNr) * kc;
  return static_cast<size_t>(round_up(a, 16) + round_up(b, 16));
}

void gemm_f32_range(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace) {
  if (i0 >= i1 || j0 >= j1) return;
  if (g.k <= 0) return gemm_no_depth(g, i0, i1, j0, j1);
  const int64_t kc_max = std::min(g.k, kKc);
  float* abuf = workspace;
  float* bbuf = workspace + (g.a.packed ? 0 : round_up(round_up(std::min(g.m, kMc), kMr) * kc_max, 16));
  const int64_t a_rows_pad = g.a.packed ? round_up(g.a.packed->rows(), kMr) : 0;
  const int64_t b_cols_pad = g.b.packed ? round_up(g.b.packed->cols(), kNr) : 0;
  for (int64_t jc = j0; jc < j1; jc += kNc) {
    const int64_t nc = std::min(kNc, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += kKc) {
      const int64_t kc = std::min(kKc, g.k - pc);
      const float* bp = bbuf;
      if (g.b.packed) bp = g.b.packed->data() + pc * b_cols_pad + jc * kc;
      else if (g.b.pack_fn) g.b.pack_fn(g.b.pack_ctx, pc, kc, jc, nc, bbuf);
      else gemm_f32_pack_b(g.b.data, g.b.ld, g.b.trans, pc, kc, jc, nc, bbuf);
      const TileParams tp{g.alpha, pc == 0 ? g.beta : 1.0f, pc != 0 || g.beta != 0.0f, pc + kc == g.k, &g.epilogue};
      for (int64_t ic = i0; ic < i1; ic += kMc) {
        const int64_t mc = std::min(kMc, i1 - ic);
        const float* ap = abuf;
        if (g.a.packed) ap = g.a.packed->data() + pc * a_rows_pad + ic * kc;
        else gemm_f32_pack_a(g.a.data, g.a.ld, g.a.trans, ic, mc, pc, kc, abuf);
        macro_kernel(mc, nc, kc, ap, bp, g.c + ic * g.ldc + jc, g.ldc, tp, ic, jc);
      }
    }
  }
}

}  // namespace ignis::kernels::x86
