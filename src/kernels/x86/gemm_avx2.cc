// SPDX-License-Identifier: Apache-2.0
// AVX2/FMA single-precision GEMM tiles, packing and the serial blocked loop.
//
// Scheme (the BLIS loop order): for each column block of C and each kGemmKc-deep slice of the
// depth, op(B) is packed into kGemmNr-column panels (or read prepacked); for each kMc-high row
// block, op(A) is packed into kGemmMr-row panels (or read prepacked). The micro-kernel
// multiplies one A panel by one B panel: per depth step it loads three 8-float B vectors,
// broadcasts four A values and issues twelve FMAs into a 4x24 register tile (12 of the 16
// ymm registers). A B panel stays in L1 while the A panels of the row block stream from L2;
// the packed B block stays in L2. Partial tiles run the same code with fewer rows (template)
// and masked column loads/stores, so any M, N, K works. 4x24 rather than 6x16: both keep 12
// accumulators, but 4x24 needs 7 loads per 12 FMAs instead of 8, and on the tuning machine
// its depth loop reaches 98% of the FMA peak in L1 against 94% for 6x16.
//
// Blocking, measured with bench/kernels/gemm_bench.cc (GFLOPS_cpu, one thread, on a 2-core
// KVM guest with 48 KiB L1d and 2 MiB L2 per core, repeated and best taken since the host is
// shared): kGemmKc = 384 (a 36 KiB B panel plus a 6 KiB A panel in L1; 256 and 320 were within
// noise on BM_Sgemm/1024, 512 lost 2-3%); kMc = 144 (a 216 KiB A block in L2; 96 was within
// noise, 192 lost ~4%). The column block is 2040 when A is packed here (each column block
// repacks A; 512 cost BM_Sgemm/1024 ~2%), but 504 when A is prepacked (Conv weights): the
// freshly packed B block then stays in L2, worth ~8% on the ResNet 1x1 and 3x3 BM_Conv
// shapes against 3072, while 16..128 lose to per-block overheads. A prefetch of A inside the
// depth loop cost 4% and was dropped. Prepacked B panels come from L3 when the weights
// exceed L2, so the next panel is prefetched during the current one (+11% on BM_MatMul
// 128x768x3072), and the C tile (two or three lines per row) is prefetched before the depth
// loop (+6% on BM_Sgemm/1024, whose C reads on later depth slices otherwise miss). The next
// panel's lines are issued inside the depth loop, two every four depth steps, rather than in a
// burst before each tile: with weights streamed from DRAM (a transformer's projections at a
// few tokens) a burst of 144 prefetches fills the miss queues and stalls the FMAs behind it
// (BM_SgemmColdWeights at 16 rows, one thread: 5.5 -> 8.2 GB/s of weights).
#include <immintrin.h>

#include <algorithm>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/gemm_tile_avx2.h"
#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int kMr = kGemmMr;
constexpr int kNr = kGemmNr;
constexpr int64_t kKc = kGemmKc;

// The mc x nc block of C at (row0, col0) from a packed A block and a packed B block.
void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc,
                  const TileParams& tp, int64_t row0, int64_t col0) {
  for_each_tile<kMr, kNr, true>(mc, nc, kc, ap, bp, false, [&](int64_t ir, int rows, int64_t jr, int cols, const char* pf, int64_t lines) {
    kTiles4x24<FloatRows>[cols < kNr][rows - 1](kc, ap + ir * kc, bp + jr * kc, c + ir * ldc + jr, ldc, tp, row0 + ir,
                                                col0 + jr, cols, pf, lines);
  });
}

void pack_b_24(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  const int64_t full = nc / kNr * kNr;
  const int tail = static_cast<int>(nc - full);
  if (!trans) {
    // Row by row: the source streams contiguously, each panel row is 96 contiguous bytes.
    __m256i mask[3];
    for (int v = 0; v < 3; ++v) mask[v] = lane_mask(std::clamp(tail - 8 * v, 0, 8));
    for (int64_t p = 0; p < kc; ++p) {
      const float* src = x + (p0 + p) * ld + j0;
      float* d = dst + p * kNr;
      for (int64_t j = 0; j < full; j += kNr)
        for (int v = 0; v < 3; ++v) _mm256_store_ps(d + j * kc + 8 * v, _mm256_loadu_ps(src + j + 8 * v));
      if (tail)
        for (int v = 0; v < 3; ++v)
          _mm256_store_ps(d + full * kc + 8 * v, _mm256_maskload_ps(src + full + 8 * v, mask[v]));
    }
    return;
  }
  // op(B)[p][j] = X[j][p]: transpose 8x8 blocks of X rows into each panel.
  for (int64_t jr = 0; jr < nc; jr += kNr)
    pack_transposed_panel<kNr>(x + (j0 + jr) * ld + p0, ld, static_cast<int>(std::min<int64_t>(kNr, nc - jr)), kc,
                               dst + jr * kc);
}

void pack_a_4(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  static_assert(kMr == 4, "the vector paths move one 4-float panel row at a time");
  for (int64_t ir = 0; ir < mc; ir += kMr) {
    const int rows = static_cast<int>(std::min<int64_t>(kMr, mc - ir));
    float* d = dst + ir * kc;
    if (trans) {
      // op(A)[i][p] = X[p][i]: each depth step is 4 contiguous floats of X row p.
      const float* src = x + p0 * ld + i0 + ir;
      if (rows == kMr) {
        for (int64_t p = 0; p < kc; ++p) _mm_store_ps(d + p * kMr, _mm_loadu_ps(src + p * ld));
      } else {
        for (int64_t p = 0; p < kc; ++p)
          for (int i = 0; i < kMr; ++i) d[p * kMr + i] = i < rows ? src[p * ld + i] : 0.0f;
      }
      continue;
    }
    // op(A)[i][p] = X[i][p]: transpose 4 rows x 8 depth steps into 8 panel rows.
    const float* src = x + (i0 + ir) * ld + p0;
    int64_t p = 0;
    if (rows == kMr) {
      for (; p + 8 <= kc; p += 8) {
        const __m256 r0 = _mm256_loadu_ps(src + p), r1 = _mm256_loadu_ps(src + ld + p);
        const __m256 r2 = _mm256_loadu_ps(src + 2 * ld + p), r3 = _mm256_loadu_ps(src + 3 * ld + p);
        const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
        const __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
        const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xEE);  // p0|p4, p1|p5
        const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xEE);  // p2|p6, p3|p7
        float* q = d + p * kMr;
        _mm256_storeu_ps(q, _mm256_permute2f128_ps(s0, s1, 0x20));
        _mm256_storeu_ps(q + 8, _mm256_permute2f128_ps(s2, s3, 0x20));
        _mm256_storeu_ps(q + 16, _mm256_permute2f128_ps(s0, s1, 0x31));
        _mm256_storeu_ps(q + 24, _mm256_permute2f128_ps(s2, s3, 0x31));
      }
    }
    for (; p < kc; ++p)
      for (int i = 0; i < kMr; ++i) d[p * kMr + i] = i < rows ? src[i * ld + p] : 0.0f;
  }
}

}  // namespace

void gemm_f32_apply_epilogue(const GemmEpilogue& e, int64_t row, int64_t col0, int64_t n, float* v) {
  if (!e.bias && !e.residual && e.act == Activation::None) return;
  const float* b = e.bias ? e.bias + row * e.bias_rs : nullptr;
  const float* z = e.residual ? e.residual + row * e.residual_ld + col0 : nullptr;
  const __m256 scale = _mm256_set1_ps(e.bias_scale);
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    __m256 x = _mm256_loadu_ps(v + j);
    if (b) x = _mm256_fmadd_ps(e.bias_cs == 0 ? _mm256_broadcast_ss(b) : _mm256_loadu_ps(b + col0 + j), scale, x);
    if (z) x = _mm256_add_ps(x, _mm256_loadu_ps(z + j));
    _mm256_storeu_ps(v + j, activate_avx2(x, e));
  }
  // A tail of fewer than 8 values goes one value per vector (broadcast load, single-lane
  // store): its values were usually stored just before the call (a narrow-path row of 1..4
  // columns, e.g. a squeeze-excitation 1x1 conv), and a masked load of them waits for those
  // stores to retire where a scalar load is forwarded. The Sigmoid epilogue of a 1152-row,
  // 1-column narrow GEMM took 25 us with a masked tail, 6 us this way (one thread).
  for (; j < n; ++j) {
    __m256 x = _mm256_broadcast_ss(v + j);
    if (b) x = _mm256_fmadd_ps(_mm256_broadcast_ss(e.bias_cs == 0 ? b : b + col0 + j), scale, x);
    if (z) x = _mm256_add_ps(x, _mm256_broadcast_ss(z + j));
    _mm_store_ss(v + j, _mm256_castps256_ps128(activate_avx2(x, e)));
  }
}

namespace {

// The 4x24 tile set for the blocked loop (gemm_blocked.h). Blocking: see the top of the file.
struct Avx2Tiles {
  static constexpr int kMr = 4, kNr = 24;
  static constexpr int64_t kKc = kGemmKc, kMc = 144, kNc = 2040, kNcPackedA = 504;
  static const GemmBackend& backend() { return gemm_backend_avx2(); }
  static void pack_a(const float* x, int64_t ld, bool trans, int64_t i0, int64_t mc, int64_t p0, int64_t kc,
                     float* dst) {
    pack_a_4(x, ld, trans, i0, mc, p0, kc, dst);
  }
  static void pack_b(const float* x, int64_t ld, bool trans, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst) {
    pack_b_24(x, ld, trans, p0, kc, j0, nc, dst);
  }
  static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, float* c,
                           int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0) {
    x86::macro_kernel(mc, nc, kc, ap, bp, c, ldc, tp, row0, col0);
  }
};
static_assert(Avx2Tiles::kMr == kMr && Avx2Tiles::kNr == kNr && Avx2Tiles::kMc % kMr == 0 &&
              Avx2Tiles::kNc % kNr == 0 && Avx2Tiles::kNcPackedA % kNr == 0);

}  // namespace

const GemmBackend& gemm_backend_avx2() {
  static const GemmBackend backend{.name = "avx2_4x24",
                                   .isa = Isa::Avx2,
                                   .mr = kMr,
                                   .nr = kNr,
                                   .kc = kKc,
                                   .range = blocked_range<Avx2Tiles>,
                                   .thread_workspace = blocked_workspace<Avx2Tiles>,
                                   .pack_a = pack_a_4,
                                   .pack_b = pack_b_24};
  return backend;
}

}  // namespace ignis::kernels::x86
