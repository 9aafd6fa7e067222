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
// last pair with zero. Operands given by a packing callback (GemmOperand::pack_fn, e.g. the
// im2col of a convolution) are packed by the callback in the float32 layout (same mr, nr and
// the kc it is given), then each panel is converted to pairs in place (pair_panels).
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

// `kc` rows of kW floats, row p at src + p * ld, as ceil(kc / 2) slot rows of kW pairs at `d`
// (slot row q from rows 2q and 2q + 1, the last pair of an odd kc padded with zero).
// vcvtne2ps2bf16 puts two rows side by side (16-bit lanes: one row's then the other's); one
// 16-bit permute interleaves them into pairs. In place (d == src, ld == kW) it is safe: each
// step reads its rows before it writes, and slot row q ends at float (q + 1) * kW, at or
// before float row 2q + 2 for q >= 1, so it never overwrites a row not yet read.
template <int kW>
void pair_rows(const float* src, int64_t ld, int64_t kc, uint32_t* d) {
  const int64_t full = kc / 2;
  int64_t q = 0;
  if constexpr (kW % 16 == 0) {
    // Lane 2j takes lane j (row 2q), lane 2j + 1 lane 16 + j (row 2q + 1).
    alignas(64) static constexpr uint16_t kIdx[32] = {0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
                                                      8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
    const __m512i idx = _mm512_load_si512(kIdx);
    for (; q < full; ++q) {
      const float* r0 = src + 2 * q * ld;
      __m512i v[kW / 16];
#pragma GCC unroll 4
      for (int h = 0; h < kW / 16; ++h)
        v[h] = _mm512_permutexvar_epi16(
            idx, (__m512i)_mm512_cvtne2ps_pbh(_mm512_loadu_ps(r0 + ld + 16 * h), _mm512_loadu_ps(r0 + 16 * h)));
#pragma GCC unroll 4
      for (int h = 0; h < kW / 16; ++h) _mm512_storeu_si512(d + q * kW + 16 * h, v[h]);
    }
  } else if constexpr (kW == 8) {
    // Two slot rows from four rows: after the conversion 16-bit lanes 0-7 hold row 2q,
    // 8-15 row 2q + 1, 16-23 row 2q + 2, 24-31 row 2q + 3.
    alignas(64) static constexpr uint16_t kIdx[32] = {0,  8,  1,  9,  2,  10, 3,  11, 4,  12, 5,  13, 6,  14, 7,  15,
                                                      16, 24, 17, 25, 18, 26, 19, 27, 20, 28, 21, 29, 22, 30, 23, 31};
    const __m512i idx = _mm512_load_si512(kIdx);
    auto two_rows = [&](const float* r) {
      // Lanes 8-15 load r + ld .. r + ld + 7; masked lanes read nothing.
      return _mm512_mask_loadu_ps(_mm512_maskz_loadu_ps(0x00FF, r), 0xFF00, r + ld - 8);
    };
    for (; q + 2 <= full; q += 2) {
      const float* r0 = src + 2 * q * ld;
      const __m512i v =
          _mm512_permutexvar_epi16(idx, (__m512i)_mm512_cvtne2ps_pbh(two_rows(r0 + 2 * ld), two_rows(r0)));
      _mm512_storeu_si512(d + q * kW, v);
    }
  }
  for (; q < (kc + 1) / 2; ++q)
    for (int j = 0; j < kW; ++j) {
      const float lo = src[2 * q * ld + j], hi = 2 * q + 1 < kc ? src[(2 * q + 1) * ld + j] : 0.0f;
      d[q * kW + j] = pair_bits(lo, hi);
    }
}

void pack_b_pairs(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  // op(B)[p][j]: with trans B = X^T, so B's column j is X's row j (Operand's r is the column).
  const Operand op{x, ld, !trans, p0 + kc};
  const int64_t pairs = (kc + 1) / 2;
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    auto* d = reinterpret_cast<uint32_t*>(dst + jr * kc);
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    // A whole panel of a row-major B (a 1x1 convolution's input, packed on every run): rows
    // of 32 consecutive floats.
    if (!trans && cols == kNr) {
      pair_rows<kNr>(x + p0 * ld + j0 + jr, ld, kc, d);
      continue;
    }
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
    // A whole panel of a transposed A (a 1x1 convolution's input in the transposed form): rows
    // of 8 consecutive floats per depth step.
    if (trans && rows == kMr) {
      pair_rows<kMr>(x + p0 * ld + i0 + ir, ld, kc, d);
      continue;
    }
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

// A packing callback with its context, and the pair conversion of the panels it writes.
struct PairedPackFn {
  GemmPackFn fn;
  const void* ctx;
};

// GemmPackFn for the bfloat16 tiles: the wrapped callback writes float32 panels of kW
// (the backend's nr for B, mr for A) over `n` columns (rows), then each is paired.
template <int kW>
void pack_then_pair(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0, int64_t n,
                    float* dst) {
  const auto& w = *static_cast<const PairedPackFn*>(ctx);
  w.fn(w.ctx, backend, p0, kc, j0, n, dst);
  for (int64_t j = 0; j < n; j += kW) pair_rows<kW>(dst + j * kc, kW, kc, reinterpret_cast<uint32_t*>(dst + j * kc));
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

// blocked_range with each packing callback wrapped in pack_then_pair.
void paired_range(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace) {
  if (!g.a.pack_fn && !g.b.pack_fn) return blocked_range<Avx512Bf16Tiles>(g, i0, i1, j0, j1, workspace);
  GemmArgs h = g;
  const PairedPackFn a{g.a.pack_fn, g.a.pack_ctx}, b{g.b.pack_fn, g.b.pack_ctx};
  if (g.a.pack_fn) h.a = {.pack_fn = pack_then_pair<kMr>, .pack_ctx = &a};
  if (g.b.pack_fn) h.b = {.pack_fn = pack_then_pair<kNr>, .pack_ctx = &b};
  blocked_range<Avx512Bf16Tiles>(h, i0, i1, j0, j1, workspace);
}

}  // namespace

const GemmBackend& gemm_backend_avx512bf16() {
  static const GemmBackend backend{.name = "avx512bf16_8x32",
                                   .isa = Isa::Avx512,
                                   .mr = kMr,
                                   .nr = kNr,
                                   .kc = kKc,
                                   .range = paired_range,
                                   .thread_workspace = blocked_workspace<Avx512Bf16Tiles>,
                                   .pack_a = pack_a_pairs,
                                   .pack_b = pack_b_pairs};
  return backend;
}

}  // namespace ignis::kernels::x86
