// SPDX-License-Identifier: Apache-2.0
// AVX2/FMA GEMM tiles over half B panels (gemm_backend_f16w_avx2): the AVX2 counterpart of
// gemm_f16w_avx512.cc, for CPUs without AVX-512 (F16C comes with every AVX2 CPU ignis runs
// on). The tile is gemm_avx2.cc's 4x24 with float32 A and accumulators and the same store
// (gemm_tile_avx2.h); each depth step widens its 24 B values from three 128-bit loads with
// vcvtph2ps (load folded in), then 12 FMAs: 12 accumulators, 3 B vectors and 1 broadcast fill
// the 16 ymm registers. Depth slice 512: a B panel is then 24 KiB of halves.
#include <immintrin.h>

#include "kernels/x86/gemm_f16w.h"
#include "kernels/x86/gemm_tile_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kMr = kGemmMr;
constexpr int kNr = kGemmNr;
constexpr int64_t kKc = 512;

// The 4x24 tile set over half B panels for the blocked loop (gemm_blocked.h). The A side is
// gemm_avx2.cc's (float32 panels of 4 rows; the layout does not depend on kc within a slice).
struct Avx2F16wTiles {
  static constexpr int kMr = x86::kMr, kNr = x86::kNr;
  static constexpr int64_t kKc = x86::kKc, kMc = 144, kNc = 2040, kNcPackedA = 504;
  static constexpr bool kHalfBPanels = true;
  static const GemmBackend& backend() { return gemm_backend_f16w_avx2(); }
  static void pack_a(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                     float* dst) {
    gemm_backend_avx2().pack_a(x, ld, trans, i0, mc, p0, kc, dst);
  }
  static void pack_b(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst) {
    pack_b_halves<kNr>(x, ld, trans, p0, kc, j0, nc, dst);
  }
  static bool narrow_rows(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    return narrow_rows_f16w<F16wVec256, kNr, kKc>(g, i0, i1, j0, j1);
  }
  static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c,
                           int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0) {
    const auto* bh = reinterpret_cast<const uint16_t*>(bp);
    for_each_tile<kMr, kNr, true, 2>(mc, nc, kc, ap, bp, false,
                                     [&](int64_t ir, int rows, int64_t jr, int cols, const char* pf, int64_t lines) {
      kTiles4x24<HalfRows>[cols < kNr][rows - 1](kc, ap + ir * kc, bh + jr * kc, c + ir * ldc + jr, ldc, tp,
                                                 row0 + ir, col0 + jr, cols, pf, lines);
    });
  }
};
static_assert(Avx2F16wTiles::kMc % kMr == 0 && Avx2F16wTiles::kNc % kNr == 0 && Avx2F16wTiles::kNcPackedA % kNr == 0);

void pack_a_f32(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  Avx2F16wTiles::pack_a(x, ld, trans, i0, mc, p0, kc, dst);
}

}  // namespace

const GemmBackend& gemm_backend_f16w_avx2() {
  static const GemmBackend backend{.name = "f16w_avx2_4x24",
                                   .isa = Isa::Avx2,
                                   .mr = kMr,
                                   .nr = kNr,
                                   .kc = kKc,
                                   .b_bytes = 2,
                                   .range = f16w_range<Avx2F16wTiles>,
                                   .thread_workspace = blocked_workspace<Avx2F16wTiles>,
                                   .pack_a = pack_a_f32,
                                   .pack_b = pack_b_halves<kNr>};
  return backend;
}

}  // namespace ignis::kernels::x86
