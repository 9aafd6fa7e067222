// SPDX-License-Identifier: Apache-2.0
// The blocked GEMM loop shared by the per-ISA sgemm files (gemm_avx2.cc, gemm_avx512.cc): the
// BLIS loop order over column blocks, depth slices and row blocks, with the packing of each
// operand (or its prepacked blocks) and the macro-kernel supplied by the ISA file.
//
// Everything here sits in an unnamed namespace on purpose: each ISA file compiles its own
// copy with its own flags, and internal linkage keeps the linker from merging an AVX-512
// instantiation into code that must run on an AVX2-only CPU.
#pragma once

#include <algorithm>

#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {
namespace {

inline int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// How one K slice's tile result lands in C. The epilogue is copied by value so that stores to
// C cannot alias it and the compiler keeps its fields in registers.
struct TileParams {
  float alpha;
  float beta;    // factor on the existing C when read_c
  bool read_c;   // false: C is overwritten
  bool finish;   // last K slice and the epilogue has work (bias, residual or activation)
  bool a_cold;   // A is prepacked (weights from memory) rather than packed by this call
  GemmEpilogue e;
};

// C = beta * C then the epilogue, for K == 0.
inline void gemm_no_depth(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  for (int64_t i = i0; i < i1; ++i) {
    float* row = g.c + i * g.ldc + j0;
    for (int64_t j = 0; j < j1 - j0; ++j) row[j] = g.beta == 0.0f ? 0.0f : g.beta * row[j];
    gemm_f32_apply_epilogue(g.epilogue, i, j0, j1 - j0, row);
  }
}

// At most this many columns of C against a prepacked A take the narrow path below.
inline constexpr int kNarrowMaxCols = 4;

// C[rows of one A panel, kN columns] for few columns against a prepacked A: e.g. a 1x1
// convolution of a 1x1 image (efficientnet's squeeze-excitation) or a matrix-vector product.
// The register tile would multiply mostly padding there (1 useful column of 32), so each A
// panel is streamed once against the kN columns of B; the inner loop over the panel's kMr
// rows is what the compiler vectorizes with the file's ISA.
template <int kMr, int64_t kKc, int kN>
void narrow_panel(const GemmArgs& g, int64_t ir, int rows, int64_t rows_pad, int64_t j0) {
  float acc[kN][kMr] = {};
  for (int64_t pc = 0; pc < g.k; pc += kKc) {
    const int64_t kc = std::min(kKc, g.k - pc);
    const float* ap = g.a.packed->data() + pc * rows_pad + ir * kc;
    for (int64_t p = 0; p < kc; ++p) {
      for (int j = 0; j < kN; ++j) {
        const float b = g.b.trans ? g.b.data[(j0 + j) * g.b.ld + pc + p] : g.b.data[(pc + p) * g.b.ld + j0 + j];
        for (int i = 0; i < kMr; ++i) acc[j][i] += ap[p * kMr + i] * b;
      }
    }
  }
  const GemmEpilogue& e = g.epilogue;
  const bool has_epilogue = e.bias || e.residual || e.act != Activation::None;
  for (int i = 0; i < rows; ++i) {
    float* c = g.c + (ir + i) * g.ldc + j0;
    for (int j = 0; j < kN; ++j) c[j] = g.alpha * acc[j][i] + (g.beta == 0.0f ? 0.0f : g.beta * c[j]);
    if (has_epilogue) gemm_f32_apply_epilogue(e, ir + i, j0, kN, c);
  }
}

// The narrow path for columns [j0, j1) when it applies (A prepacked, B a plain matrix, at most
// kNarrowMaxCols columns); false when the blocked loop must run instead.
template <int kMr, int64_t kKc>
bool narrow_range(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  const int64_t n = j1 - j0;
  if (!g.a.packed || !g.b.data || g.b.pack_fn || n > kNarrowMaxCols || g.k <= 0) return false;
  const int64_t rows_pad = round_up(g.a.packed->rows(), kMr);
  for (int64_t ir = i0; ir < i1; ir += kMr) {
    const int rows = static_cast<int>(std::min<int64_t>(kMr, i1 - ir));
    switch (n) {
      case 1: narrow_panel<kMr, kKc, 1>(g, ir, rows, rows_pad, j0); break;
      case 2: narrow_panel<kMr, kKc, 2>(g, ir, rows, rows_pad, j0); break;
      case 3: narrow_panel<kMr, kKc, 3>(g, ir, rows, rows_pad, j0); break;
      default: narrow_panel<kMr, kKc, 4>(g, ir, rows, rows_pad, j0); break;
    }
  }
  return true;
}

// At most this many rows of C against a prepacked B take the row path below.
inline constexpr int kNarrowMaxRows = 4;

// C[kM rows, one B panel of kNr columns] for few rows against a prepacked B: a classifier
// Gemm or MatMul at batch 1 (the digits CNN's 1x512 by 512x10). The register tile would pack
// A into mostly padding and run its 1-row tile, whose two accumulators wait on the FMA
// latency every depth step; here the depth is split over independent partial sums (8 vector
// chains in all) and A is read in place. The inner loop over the panel's kNr columns is what
// the compiler vectorizes with the file's ISA.
template <int kNr, int64_t kKc, int kM>
void narrow_rows_panel(const GemmArgs& g, int64_t i0, int rows, int64_t jr, int cols, int64_t cols_pad) {
  constexpr int kParts = kM == 1 ? 4 : kM == 2 ? 2 : 1;
  float acc[kM][kParts][kNr] = {};
  auto a_at = [&](int i, int64_t p) {
    const int64_t r = i0 + std::min(i, rows - 1);  // rows past the end repeat the last (not stored)
    return g.a.trans ? g.a.data[p * g.a.ld + r] : g.a.data[r * g.a.ld + p];
  };
  for (int64_t pc = 0; pc < g.k; pc += kKc) {
    const int64_t kc = std::min(kKc, g.k - pc);
    const float* bp = g.b.packed->data() + pc * cols_pad + jr * kc;
    int64_t p = 0;
    for (; p + kParts <= kc; p += kParts)
      for (int u = 0; u < kParts; ++u)
        for (int i = 0; i < kM; ++i) {
          const float a = a_at(i, pc + p + u);
          for (int j = 0; j < kNr; ++j) acc[i][u][j] += a * bp[(p + u) * kNr + j];
        }
    for (; p < kc; ++p)
      for (int i = 0; i < kM; ++i) {
        const float a = a_at(i, pc + p);
        for (int j = 0; j < kNr; ++j) acc[i][0][j] += a * bp[p * kNr + j];
      }
  }
  const GemmEpilogue& e = g.epilogue;
  const bool has_epilogue = e.bias || e.residual || e.act != Activation::None;
  for (int i = 0; i < rows; ++i) {
    float* c = g.c + (i0 + i) * g.ldc + jr;
    for (int j = 0; j < cols; ++j) {
      float v = 0.0f;
      for (int u = 0; u < kParts; ++u) v += acc[i][u][j];
      c[j] = g.alpha * v + (g.beta == 0.0f ? 0.0f : g.beta * c[j]);
    }
    if (has_epilogue) gemm_f32_apply_epilogue(e, i0 + i, jr, cols, c);
  }
}

// The row path's dispatch: when it applies (B prepacked, A a plain matrix, at most
// kNarrowMaxRows rows), calls panel.template operator()<kM>(rows, jr, cols, cols_pad) for each
// kNr-column panel of [j0, j1), kM the row count (its template for 1..4 rows), and returns
// true; false when the blocked loop must run instead.
template <int kNr, class Panel>
bool for_each_narrow_rows_panel(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, Panel&& panel) {
  const int64_t m = i1 - i0;
  if (!g.b.packed || !g.a.data || g.a.packed || g.a.pack_fn || m > kNarrowMaxRows || g.k <= 0) return false;
  const int64_t cols_pad = round_up(g.b.packed->cols(), kNr);
  for (int64_t jr = j0; jr < j1; jr += kNr) {
    const int cols = static_cast<int>(std::min<int64_t>(kNr, j1 - jr));
    const int rows = static_cast<int>(m);
    switch (m) {
      case 1: panel.template operator()<1>(rows, jr, cols, cols_pad); break;
      case 2: panel.template operator()<2>(rows, jr, cols, cols_pad); break;
      case 3: panel.template operator()<3>(rows, jr, cols, cols_pad); break;
      default: panel.template operator()<4>(rows, jr, cols, cols_pad); break;
    }
  }
  return true;
}

// The row path for rows [i0, i1) on float32 panels (for_each_narrow_rows_panel's contract).
template <int kNr, int64_t kKc>
bool narrow_rows_range(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  return for_each_narrow_rows_panel<kNr>(g, i0, i1, j0, j1, [&]<int kM>(int rows, int64_t jr, int cols, int64_t cols_pad) {
    narrow_rows_panel<kNr, kKc, kM>(g, i0, rows, jr, cols, cols_pad);
  });
}

// T, the ISA file's tile set, provides:
//   static constexpr int kMr, kNr;  static constexpr int64_t kKc, kMc, kNc, kNcPackedA;
//     (kMc a multiple of kMr; kNc and kNcPackedA multiples of kNr; kNcPackedA is the column
//     block when A is prepacked, so a freshly packed B block stays in L2)
//   static const GemmBackend& backend();
//   static void pack_a(...), pack_b(...)  with GemmBackend::pack_a / pack_b's signatures;
//   static void macro_kernel(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp,
//                            float* c, int64_t ldc, const TileParams& tp, int64_t row0, int64_t col0).
// and optionally
//   static constexpr bool kPairedPanels: both operands' panels hold bfloat16 pairs;
//   static constexpr bool kHalfBPanels: B panels hold IEEE half (bp then points at halves), with
//   static bool narrow_rows(const GemmArgs&, int64_t i0, int64_t i1, int64_t j0, int64_t j1),
//     the row path for those panels (narrow_rows_range's contract).
template <class T>
constexpr int64_t b_elem_bytes() {
  if constexpr (requires { T::kHalfBPanels; }) return 2;
  else return static_cast<int64_t>(sizeof(float));
}

template <class T>
size_t blocked_workspace(const GemmArgs& g) {
  const int64_t kc = std::min(g.k, T::kKc);
  const int64_t a = g.a.packed ? 0 : round_up(std::min(g.m, T::kMc), T::kMr) * kc;
  const int64_t b = g.b.packed ? 0 : round_up(std::min(g.n, T::kNc), T::kNr) * kc;
  return static_cast<size_t>(round_up(a, 16) + round_up(b, 16));
}

// The blocked loop of blocked_range. Out of line: inlined beside the narrow paths, its code
// changed how GCC compiled them (the 1 x 576 by 576 x 1024 row path ran 4x slower once the
// loop gained its A-in-place branch).
template <class T>
[[gnu::noinline]] void blocked_loop(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                                    float* workspace) {
  const int64_t kc_max = std::min(g.k, T::kKc);
  float* abuf = workspace;
  float* bbuf = workspace + (g.a.packed ? 0 : round_up(round_up(std::min(g.m, T::kMc), T::kMr) * kc_max, 16));
  const int64_t a_rows_pad = g.a.packed ? round_up(g.a.packed->rows(), T::kMr) : 0;
  const int64_t b_cols_pad = g.b.packed ? round_up(g.b.packed->cols(), T::kNr) : 0;
  const int64_t nc_block = g.a.packed ? T::kNcPackedA : T::kNc;
  const GemmEpilogue& e = g.epilogue;
  const bool has_epilogue = e.bias || e.residual || e.act != Activation::None;
  // Tile sets with T::macro_kernel_a_in_place read a plain A where it lies instead of packing
  // it, as long as the range has few enough columns: packing A costs one read and write of
  // it per depth slice, which only many column panels pay back (one thread, Ice Lake,
  // interleaved medians, packed -> in place: M x K x N = 3136 x 384 x 96 3.51 -> 3.01 ms,
  // 784 x 768 x 192 2.42 -> 2.25, 1024 x 768 x 768 15.1 -> 13.6, 1024^3 24.8 -> 22.6, and
  // 1024 x 768 x 3072 52.5 -> 55.5: there the packed panels' single stream wins).
  constexpr int64_t kAInPlaceMaxCols = 1536;
  const bool a_in_place = !g.a.packed && !g.a.pack_fn && !g.a.trans && j1 - j0 <= kAInPlaceMaxCols;
  for (int64_t jc = j0; jc < j1; jc += nc_block) {
    const int64_t nc = std::min(nc_block, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += T::kKc) {
      const int64_t kc = std::min(T::kKc, g.k - pc);
      const float* bp = bbuf;
      if (g.b.packed)
        bp = reinterpret_cast<const float*>(reinterpret_cast<const char*>(g.b.packed->data()) +
                                            (pc * b_cols_pad + jc * kc) * b_elem_bytes<T>());
      else if (g.b.pack_fn) g.b.pack_fn(g.b.pack_ctx, T::backend(), pc, kc, jc, nc, bbuf);
      else T::pack_b(g.b.data, g.b.ld, g.b.trans, pc, kc, jc, nc, bbuf);
      const TileParams tp{.alpha = g.alpha,
                          .beta = pc == 0 ? g.beta : 1.0f,
                          .read_c = pc != 0 || g.beta != 0.0f,
                          .finish = pc + kc == g.k && has_epilogue,
                          .a_cold = g.a.packed != nullptr,
                          .e = e};
      for (int64_t ic = i0; ic < i1; ic += T::kMc) {
        const int64_t mc = std::min(T::kMc, i1 - ic);
        if constexpr (requires { &T::macro_kernel_a_in_place; }) {
          if (a_in_place) {
            T::macro_kernel_a_in_place(mc, nc, kc, g.a.data + ic * g.a.ld + pc, g.a.ld, bp, g.c + ic * g.ldc + jc,
                                       g.ldc, tp, ic, jc);
            continue;
          }
        }
        const float* ap = abuf;
        if (g.a.packed) ap = g.a.packed->data() + pc * a_rows_pad + ic * kc;
        else if (g.a.pack_fn) g.a.pack_fn(g.a.pack_ctx, T::backend(), pc, kc, ic, mc, abuf);
        else T::pack_a(g.a.data, g.a.ld, g.a.trans, ic, mc, pc, kc, abuf);
        T::macro_kernel(mc, nc, kc, ap, bp, g.c + ic * g.ldc + jc, g.ldc, tp, ic, jc);
      }
    }
  }
}

template <class T>
void blocked_range(const GemmArgs& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace) {
  if (i0 >= i1 || j0 >= j1) return;
  if (g.k <= 0) return gemm_no_depth(g, i0, i1, j0, j1);
  // The narrow paths read packed operands as float32 panels and B in place as float32; tiles
  // with paired bfloat16 panels (T::kPairedPanels) always take the blocked loop, and those
  // with half B panels (T::kHalfBPanels, B always rounded to half) bring their own row path.
  if constexpr (requires { T::kHalfBPanels; }) {
    if (T::narrow_rows(g, i0, i1, j0, j1)) return;
  } else if constexpr (!requires { T::kPairedPanels; }) {
    if (narrow_range<T::kMr, T::kKc>(g, i0, i1, j0, j1)) return;
    if (narrow_rows_range<T::kNr, T::kKc>(g, i0, i1, j0, j1)) return;
  }
  blocked_loop<T>(g, i0, i1, j0, j1, workspace);
}

// Prefetches into L2 what the next tiles read from memory, a few lines per tile: with A
// prepacked (weights, cold) and B packed by this call, the next row tile's A panel during
// the first column panel (later ones find A in L2); otherwise the next B panel while the row
// tiles of the current one run (prepacked B: weights). Calls
// tile(ir, rows, jr, cols, pf, pf_lines) for every register tile of the mc x nc block, where
// [pf, pf + 64 * pf_lines) are the lines that tile should prefetch. With kInTile the tile
// issues them between its multiply-adds; otherwise they are issued here, before the tile (a
// burst of prefetches that miss L2 stalls the core on its line fill buffers: 11% of a 3x3
// convolution on a 7x7 image, whose few row tiles each prefetch 74 lines). kBBytes is the size
// of one B panel element (2 for half panels).
template <int kMr, int kNr, bool kInTile, int64_t kBBytes = sizeof(float), class Tile>
inline void for_each_tile(int64_t mc, int64_t nc, int64_t kc, const float* ap, const float* bp, bool a_cold,
                          Tile&& tile) {
  const int64_t row_tiles = (mc + kMr - 1) / kMr;
  const int64_t panel_lines = kc * kNr * kBBytes / 64;
  const int64_t lines_per_tile = (panel_lines + row_tiles - 1) / row_tiles;
  const int64_t a_panel_lines = kc * kMr * static_cast<int64_t>(sizeof(float)) / 64;
  for (int64_t jr = 0; jr < nc; jr += kNr) {
    const int cols = static_cast<int>(std::min<int64_t>(kNr, nc - jr));
    const char* next = jr + kNr < nc ? reinterpret_cast<const char*>(bp) + (jr + kNr) * kc * kBBytes : nullptr;
    for (int64_t ir = 0, t = 0; ir < mc; ir += kMr, ++t) {
      const char* pf = nullptr;
      int64_t lines = 0;
      if (a_cold) {
        if (jr == 0 && ir + kMr < mc) {
          pf = reinterpret_cast<const char*>(ap + (ir + kMr) * kc);
          lines = a_panel_lines;
        }
      } else if (next) {
        const int64_t l0 = std::min(panel_lines, t * lines_per_tile);
        lines = std::min(panel_lines, (t + 1) * lines_per_tile) - l0;
        pf = next + l0 * 64;
      }
      if (!kInTile) {
        for (int64_t l = 0; l < lines; ++l) __builtin_prefetch(pf + l * 64, 0, 2);
        lines = 0;
      }
      tile(ir, static_cast<int>(std::min<int64_t>(kMr, mc - ir)), jr, cols, pf, lines);
    }
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
