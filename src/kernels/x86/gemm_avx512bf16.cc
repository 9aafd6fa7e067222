// SPDX-License-Identifier: Apache-2.0
// AVX-512 BF16 GEMM tiles and packing, for sessions that run in bfloat16 (SessionOptions::
// precision). Both operands are rounded to bfloat16 (nearest even) when packed; the products
// are summed in float32 by vdpbf16ps, two depth steps per instruction, so a tile does twice
// the float32 tile's work per instruction. The tile (8 x 32), its float32 accumulators and
// their store with the epilogue are those of gemm_avx512.cc (gemm_tile_avx512.h).
//
// Packed layout: a pair of depth steps (p, p + 1) of one row (A) or column (B) is one 32-bit
// slot, low half p; a panel holds ceil(kc / 2) slot rows (kMr or kNr slots each) where the
// float32 layout has kc float rows, so offsets between panels and blocks are the float32
// layout's and the second half of each panel is unused. A depth slice of odd length pads its
// last pair with zero. Operands given by a packing callback (GemmOperand::pack_fn) are not
// supported: those callbacks write the float32 layout.
#include <immintrin.h>

#include <array>
#include <cstring>
#include <utility>

#include "core/half.h"
#include "kernels/x86/gemm_tile_avx512.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kMr = kTileRows512;
constexpr int kNr = kTileCols512;
// Depth per slice: a B panel of 512 depth steps in pairs is 32 KiB, as the float32 tile's 256.
constexpr int64_t kKc = 512;

inline uint32_t pair_bits(float lo, float hi) {
  return static_cast<uint32_t>(float_to_bf16(lo)) | (static_cast<uint32_t>(float_to_bf16(hi)) << 16);
}

template <int M, bool kTail>
void micro_tile(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, const TileParams& tp,
                int64_t row0, int64_t col0, int cols) {
  __m512 acc0[M], acc1[M];
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i) acc0[i] = acc1[i] = _mm512_setzero_ps();
  const auto* ap = reinterpret_cast<const int32_t*>(a);
  const auto* bp = reinterpret_cast<const int32_t*>(b);
  const int64_t pairs = (kc + 1) / 2;
#pragma GCC unroll 2
  for (int64_t q = 0; q < pairs; ++q) {
    const __m512bh b0 = (__m512bh)_mm512_load_si512(bp + q * kNr);
    const __m512bh b1 = (__m512bh)_mm512_load_si512(bp + q * kNr + 16);
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      const __m512bh ai = (__m512bh)_mm512_set1_epi32(ap[q * kMr + i]);
      acc0[i] = _mm512_dpbf16_ps(acc0[i], ai, b0);
      acc1[i] = _mm512_dpbf16_ps(acc1[i], ai, b1);
    }
  }
  store_tile<M, kTail>(acc0, acc1, c, ldc, tp, row0, col0, cols);
}

using TileFn = void (*)(int64_t, const float*, const float*, float*, int64_t, const TileParams&, int64_t, int64_t,
                        int);

template <bool kTail, int... Ms>
constexpr auto tiles_of(std::integer_sequence<int, Ms...>) {
  return std::array<TileFn, sizeof...(Ms)>{micro_tile<Ms + 1, kTail>...};
}
constexpr std::array<TileFn, kMr> kTiles[2] = {tiles_of<false>(std::make_integer_sequence<int, kMr>()),
                                               tiles_of<true>(std::make_integer_sequence<int, kMr>())};

void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                  const TileParams& tp, int64_t row0, int64_t col0) {
  for_each_tile<kMr, kNr, false>(mc, nc, kc, ap, bp, tp.a_cold,
                                 [&](int64_t ir, int rows, int64_t jr, int cols, const char*, int64_t) {
    kTiles[cols < kNr][rows - 1](kc, ap + ir * kc, bp + jr * kc, c + ir * ldc + jr, ldc, tp, row0 + ir, col0 + jr,
                                 cols);
  });
}

// op(X)[r][p] for the pair packers: X row-major with leading dimension ld, transposed when
// `trans`; zero past the slice's depth.
struct Operand {
  const float* x;
  int64_t ld;
  bool trans;
  int64_t depth_end;  // p0 + kc
  float at(int64_t r, int64_t p) const {
    if (p >= depth_end) return 0.0f;
    return trans ? x[p * ld + r] : x[r * ld + p];
  }
};

void pack_b_pairs(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  // op(B)[p][j]: with trans B = X^T, so B's column j is X's row j (Operand's r is the column).
  const Operand op{x, ld, !trans, p0 + kc};
  const int64_t pairs = (kc + 1) / 2;
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    auto* d = reinterpret_cast<uint32_t*>(dst + jr * kc);
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    for (int64_t q = 0; q < pairs; ++q)
      for (int j = 0; j < kNr; ++j) {
        const int64_t col = j0 + jr + j, p = p0 + 2 * q;
        d[q * kNr + j] = j < cols ? pair_bits(op.at(col, p), op.at(col, p + 1)) : 0u;
      }
  }
}

// 8 rows of a row-major A, 32 depth steps from `src`, as 16 slot rows of the panel at `d`:
// each row converts to 16 pairs in one instruction (vcvtne2ps2bf16 keeps the order, so 32-bit
// lane q holds depths 2q and 2q + 1), then two 8x8 transposes of 32-bit lanes put each slot
// row's 8 rows side by side. This runs per GEMM call on the activations; pair by pair in
// scalar code it took a quarter of BERT-base's time.
void pack_a_rows_32(const float* src, int64_t ld, uint32_t* d) {
  __m256 lo[8], hi[8];
#pragma GCC unroll 8
  for (int i = 0; i < kMr; ++i) {
    const __m512bh pairs = _mm512_cvtne2ps_pbh(_mm512_loadu_ps(src + i * ld + 16), _mm512_loadu_ps(src + i * ld));
    const __m512i v = (__m512i)pairs;
    lo[i] = _mm256_castsi256_ps(_mm512_maskz_extracti64x4_epi64(0xFF, v, 0));
    hi[i] = _mm256_castsi256_ps(_mm512_maskz_extracti64x4_epi64(0xFF, v, 1));  // maskz: see activation_avx512.h
  }
  transpose8(lo);
  transpose8(hi);
#pragma GCC unroll 8
  for (int q = 0; q < 8; ++q) {
    _mm256_store_ps(reinterpret_cast<float*>(d + q * kMr), lo[q]);
    _mm256_store_ps(reinterpret_cast<float*>(d + (q + 8) * kMr), hi[q]);
  }
}

void pack_a_pairs(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  const Operand op{x, ld, trans, p0 + kc};
  const int64_t pairs = (kc + 1) / 2;
  for (int64_t ir = 0; ir < mc; ir += kMr) {
    auto* d = reinterpret_cast<uint32_t*>(dst + ir * kc);
    const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
    int64_t q = 0;
    if (!trans && rows == kMr)
      for (; 2 * q + 32 <= kc; q += 16) pack_a_rows_32(x + (i0 + ir) * ld + p0 + 2 * q, ld, d + q * kMr);
    for (; q < pairs; ++q)
      for (int i = 0; i < kMr; ++i) {
        const int64_t row = i0 + ir + i, p = p0 + 2 * q;
        d[q * kMr + i] = i < rows ? pair_bits(op.at(row, p), op.at(row, p + 1)) : 0u;
      }
  }
}

// The 8x32 bfloat16 tile set for the blocked loop (gemm_blocked.h).
struct Avx512Bf16Tiles {
  static constexpr int kMr = x86::kMr, kNr = x86::kNr;
  static constexpr int64_t kKc = x86::kKc, kMc = 144, kNc = 2048, kNcPackedA = 512;
  static constexpr bool kPairedPanels = true;  // the float32 narrow paths cannot read these panels
  static const GemmBackend& backend() { return gemm_backend_avx512bf16(); }
  static void pack_a(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                     float* dst) {
    pack_a_pairs(x, ld, trans, i0, mc, p0, kc, dst);
  }
  static void pack_b(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst) {
    pack_b_pairs(x, ld, trans, p0, kc, j0, nc, dst);
  }
  static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c,
                           int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0) {
    x86::macro_kernel(mc, nc, kc, ap, bp, c, ldc, tp, row0, col0);
  }
};

}  // namespace

const GemmBackend& gemm_backend_avx512bf16() {
  static const GemmBackend backend{.name = "avx512bf16_8x32",
                                   .isa = Isa::Avx512,
                                   .mr = kMr,
                                   .nr = kNr,
                                   .kc = kKc,
                                   .range = blocked_range<Avx512Bf16Tiles>,
                                   .thread_workspace = blocked_workspace<Avx512Bf16Tiles>,
                                   .pack_a = pack_a_pairs,
                                   .pack_b = pack_b_pairs};
  return backend;
}

}  // namespace ignis::kernels::x86
