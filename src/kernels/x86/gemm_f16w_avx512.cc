// SPDX-License-Identifier: Apache-2.0
// AVX-512 GEMM tiles over half B panels (gemm_backend_f16w_avx512), for the prepacked weights
// of MatMul and Gemm in sessions of precision F16. The weights are stored as IEEE half
// (gemm_f16w.h); the tile is gemm_avx512.cc's 8x32 with float32 A, float32 accumulators and
// the same store (gemm_tile_avx512.h), except that each depth step reads its 32 B values as
// two 256-bit loads widened by vcvtph2ps (one instruction each, the load folded in). The
// conversions sit beside 16 FMAs on a full tile, and batch-1 layers take the row path
// (narrow_rows_f16w), which streams each half panel once: either way the weight bytes read
// per multiply-add halve, which is what bounds MatMuls whose weights do not fit in cache.
// Depth slice 512: a B panel is then 32 KiB of halves, the float32 tile's L1 budget.
#include <immintrin.h>

#include <array>
#include <utility>

#include "kernels/x86/gemm_f16w.h"
#include "kernels/x86/gemm_tile_avx512.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kMr = kTileRows512;
constexpr int kNr = kTileCols512;
constexpr int64_t kKc = 512;

// Half B panel rows for micro_tile_8x32 (gemm_tile_avx512.h): two 256-bit loads, each
// widened by vcvtph2ps.
struct HalfRows {
  using Elem = uint16_t;
  static __m512 lo(const uint16_t* b) {
    return _mm512_maskz_cvtph_ps(0xFFFF, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b)));
  }
  static __m512 hi(const uint16_t* b) { return lo(b + 16); }
};

// The row path's 16-lane vectors (gemm_f16w.h, narrow_rows_f16w).
struct F16wVec512 {
  using V = __m512;
  static constexpr int kLanes = 16;
  static V zero() { return _mm512_setzero_ps(); }
  static V load_half(const uint16_t* p) { return HalfRows::lo(p); }
  static V broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static void store(float* p, V v) { _mm512_storeu_ps(p, v); }
};

using TileFn = void (*)(int64_t, const float*, const uint16_t*, float*, int64_t, const TileParams&, int64_t, int64_t,
                        int, const char*, int64_t);

template <bool kTail, int... Ms>
constexpr auto tiles_of(std::integer_sequence<int, Ms...>) {
  return std::array<TileFn, sizeof...(Ms)>{micro_tile_8x32<HalfRows, Ms + 1, kTail>...};
}
constexpr std::array<TileFn, kMr> kTiles[2] = {tiles_of<false>(std::make_integer_sequence<int, kMr>()),
                                               tiles_of<true>(std::make_integer_sequence<int, kMr>())};

// The 8x32 tile set over half B panels for the blocked loop (gemm_blocked.h). The A side is
// gemm_avx512.cc's (float32 panels of 8 rows; the layout does not depend on kc within a slice).
struct Avx512F16wTiles {
  static constexpr int kMr = x86::kMr, kNr = x86::kNr;
  static constexpr int64_t kKc = x86::kKc, kMc = 144, kNc = 2048, kNcPackedA = 512;
  static constexpr bool kHalfBPanels = true;
  static const GemmBackend& backend() { return gemm_backend_f16w_avx512(); }
  static void pack_a(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                     float* dst) {
    gemm_backend_avx512().pack_a(x, ld, trans, i0, mc, p0, kc, dst);
  }
  static void pack_b(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst) {
    pack_b_halves<kNr>(x, ld, trans, p0, kc, j0, nc, dst);
  }
  static bool narrow_rows(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    return narrow_rows_f16w<F16wVec512, kNr, kKc>(g, i0, i1, j0, j1);
  }
  static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c,
                           int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0) {
    const auto* bh = reinterpret_cast<const uint16_t*>(bp);
    for_each_tile<kMr, kNr, true, 2>(mc, nc, kc, ap, bp, tp.a_cold,
                                     [&](int64_t ir, int rows, int64_t jr, int cols, const char* pf, int64_t lines) {
      kTiles[cols < kNr][rows - 1](kc, ap + ir * kc, bh + jr * kc, c + ir * ldc + jr, ldc, tp, row0 + ir, col0 + jr,
                                   cols, pf, lines);
    });
  }
};
static_assert(Avx512F16wTiles::kMc % kMr == 0 && Avx512F16wTiles::kNc % kNr == 0 &&
              Avx512F16wTiles::kNcPackedA % kNr == 0);

void pack_a_f32(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  Avx512F16wTiles::pack_a(x, ld, trans, i0, mc, p0, kc, dst);
}

}  // namespace

const GemmBackend& gemm_backend_f16w_avx512() {
  static const GemmBackend backend{.name = "f16w_avx512_8x32",
                                   .isa = Isa::Avx512,
                                   .mr = kMr,
                                   .nr = kNr,
                                   .kc = kKc,
                                   .b_bytes = 2,
                                   .range = f16w_range<Avx512F16wTiles>,
                                   .thread_workspace = blocked_workspace<Avx512F16wTiles>,
                                   .pack_a = pack_a_f32,
                                   .pack_b = pack_b_halves<kNr>};
  return backend;
}

}  // namespace ignis::kernels::x86
