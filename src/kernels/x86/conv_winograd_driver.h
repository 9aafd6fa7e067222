// SPDX-License-Identifier: Apache-2.0
// The instruction-set-free parts of the Winograd convolutions (conv_winograd.h): the walk over
// a tile range's row segments, and the F(4x4, 3x3) run (tile grid, blocks that fit in L2,
// the thread split, the three stages) around one instruction set's transforms. Included by
// the AVX-512 (conv_winograd_f4x4_avx512.cc, conv_winograd_f2x2_avx512.cc) and AVX2
// (conv_winograd_f4x4_avx2.cc) files; internal linkage on purpose (see gemm_blocked.h): each
// compiles its own copy with its own flags.
//
// Layout of one F(4x4) run: the output tiles of all images are numbered in row-major order and
// split into one contiguous range per thread, each range into blocks of up to nb tiles whose
// transformed data stays in the core's L2:
//   1. input transform: V_k[c][t] for the 36 points k, channel c, block tile t (nbp-float rows);
//   2. 36 GEMMs M_k [cout x nb] = U_k [cout x cin] (prepacked) x V_k;
//   3. output transform: A^T M A per tile, plus bias, residual and activation, written NCHW.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "core/thread_pool.h"
#include "kernels/x86/conv_avx2.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {
namespace {

// Calls f(n, ty, tx0, tx1, col) for each run of tiles of one tile row inside the global tile
// range [t0, t1); col is the position of tile (n, ty, tx0) in the range.
template <class Grid, class F>
void for_each_row_segment(const Grid& grid, int64_t t0, int64_t t1, F&& f) {
  for (int64_t t = t0; t < t1;) {
    const int64_t n = t / grid.per_image, in_image = t % grid.per_image;
    const int64_t ty = in_image / grid.tw, tx0 = in_image % grid.tw;
    const int64_t tx1 = std::min(grid.tw, tx0 + (t1 - t));
    f(n, ty, tx0, tx1, t - t0);
    t += tx1 - tx0;
  }
}

inline int64_t round_up_to(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

constexpr int kPoints4 = 36;  // 6x6 transform points of F(4x4, 3x3)

// Tile grid of one F(4x4) run; vec is the transforms' vector width in tiles.
struct Grid4 {
  int64_t th = 0, tw = 0;  // tile rows and columns per image
  int64_t per_image = 0;   // th * tw
  int64_t qlen = 0;        // floats of one phase row of the input transform buffer
};

inline Grid4 make_grid4(const ConvGeometry2d& g, int vec) {
  Grid4 t;
  t.th = (g.oh + 3) / 4;
  t.tw = (g.ow + 3) / 4;
  t.per_image = t.th * t.tw;
  // Phase index j runs to tw (tap columns 4 and 5 of the last tile); loads of one vector from
  // any tile index up to tw stay inside.
  t.qlen = round_up_to(t.tw + 1 + vec, vec);
  return t;
}

// Output transform parameters of one channel plane.
struct Winograd4Output {
  float bias = 0.0f;
  const float* residual = nullptr;  // this channel's plane, laid out like y
  const GemmEpilogue* act = nullptr;
};

// Per-thread scratch: V, M, the phase rows and the GEMM's packing buffer.
struct Winograd4Workspace {
  int64_t nb = 0, nbp = 0;  // tiles per block, and V / M row length (multiple of 16)
  size_t v = 0, m = 0, q = 0, gemm = 0;
  size_t total() const { return v + m + q + gemm; }
};

inline GemmArgs winograd4_gemm_shape(const GemmBackend& backend, int64_t cout, int64_t cin, int64_t nb) {
  GemmArgs a;
  a.backend = &backend;
  a.m = cout;
  a.n = nb;
  a.k = cin;
  return a;
}

// Tiles per block: V (36 x cin x nb) and M (36 x cout x nb) together in about 2 MiB of the
// core's L2, in whole column panels of the GEMM's register tile (1 to 4 of them).
inline int64_t winograd4_block_tiles(const GemmBackend& backend, int64_t cin, int64_t cout) {
  const int64_t fit = (int64_t{2} << 20) / (kPoints4 * 4 * (cin + cout));
  return std::clamp<int64_t>(fit / backend.nr * backend.nr, backend.nr, 4 * backend.nr);
}

inline Winograd4Workspace winograd4_workspace(const GemmBackend& backend, const Grid4& grid, int64_t cin,
                                              int64_t cout, int64_t range_tiles) {
  Winograd4Workspace ws;
  ws.nb = std::min(winograd4_block_tiles(backend, cin, cout), range_tiles);
  ws.nbp = round_up_to(ws.nb, 16);
  ws.v = static_cast<size_t>(kPoints4 * cin * ws.nbp);
  ws.m = static_cast<size_t>(kPoints4 * cout * ws.nbp);
  ws.q = static_cast<size_t>(24 * grid.qlen);
  ws.gemm = static_cast<size_t>(
      round_up_to(static_cast<int64_t>(gemm_f32_thread_workspace(winograd4_gemm_shape(backend, cout, cin, ws.nb))), 16));
  return ws;
}

// How one run is split over the pool. Split: one contiguous range of tiles per thread, each
// with its own blocks and buffers (at least 16 tiles per thread). Shared: fewer tiles than
// that (e.g. 14x14 images, 16 tiles), so all threads work on one block, splitting each stage:
// input channels, then the 36 GEMMs, then output channels.
struct Winograd4Plan {
  int threads = 1;
  int parts = 1;  // split: tile ranges; shared: threads
  bool shared = false;
  Winograd4Workspace ws;  // per thread (shared: V and M of thread 0 serve all)
};

inline Winograd4Plan winograd4_plan(const GemmBackend& backend, int vec, const ConvGeometry2d& g, int64_t batch,
                                    int threads, int64_t cin, int64_t cout) {
  Winograd4Plan p;
  const Grid4 grid = make_grid4(g, vec);
  const int64_t total = batch * grid.per_image;
  p.threads = std::max(threads, 1);
  p.parts = static_cast<int>(std::clamp<int64_t>(total / 16, 1, p.threads));
  p.shared = p.parts < p.threads && total <= winograd4_block_tiles(backend, cin, cout);
  if (p.shared) p.parts = p.threads;
  p.ws = winograd4_workspace(backend, grid, cin, cout, p.shared ? total : (total + p.parts - 1) / p.parts);
  return p;
}

// One F(4x4) run with the transforms of `Isa`, which provides
//   static constexpr int kVec;                 // tiles per transform vector
//   static const GemmBackend& backend();       // the GEMM U_k was packed for
//   static void input_tile_row(const ConvGeometry2d&, const Grid4&, const float* x, int64_t ty,
//                              int64_t tx0, int64_t tx1, float* q, float* v, int64_t v_stride);
//   static void output_tile_row(const ConvGeometry2d&, const float* m, int64_t m_stride, int64_t ty,
//                               int64_t tx0, int64_t tx1, const Winograd4Output&, float* y);
// u: the 36 transformed weight matrices; arguments otherwise as ConvWinograd::run.
template <class Isa>
void winograd4_run(const PackedMatrix* u, int64_t cin, int64_t cout, const ConvGeometry2d& g, int64_t batch,
                   const float* x, const float* bias, const float* residual, const GemmEpilogue& act, float* y,
                   ThreadPool* pool, float* scratch) {
  const GemmBackend& backend = Isa::backend();
  const Grid4 grid = make_grid4(g, Isa::kVec);
  const int64_t total = batch * grid.per_image;
  const Winograd4Plan plan = winograd4_plan(backend, Isa::kVec, g, batch, pool ? pool->threads() : 1, cin, cout);
  const Winograd4Workspace& ws = plan.ws;
  const int64_t in_plane = g.ih * g.iw, out_plane = g.oh * g.ow;
  const int64_t v_stride = cin * ws.nbp, m_stride = cout * ws.nbp;
  auto mine = [&](int64_t part) { return scratch + ws.total() * static_cast<size_t>(part); };
  // The three stages of block [t0, t1), each over a sub-range of its loop; v and m are the
  // block's buffers, q and gemm_ws the calling thread's.
  auto input_stage = [&](int64_t t0, int64_t t1, int64_t c0, int64_t c1, float* v, float* q) {
    for (int64_t c = c0; c < c1; ++c) {
      for_each_row_segment(grid, t0, t1, [&](int64_t n, int64_t ty, int64_t tx0, int64_t tx1, int64_t col) {
        Isa::input_tile_row(g, grid, x + (n * cin + c) * in_plane, ty, tx0, tx1, q, v + c * ws.nbp + col, v_stride);
      });
    }
  };
  auto gemm_stage = [&](int64_t t0, int64_t t1, int64_t k0, int64_t k1, const float* v, float* m, float* gemm_ws) {
    GemmArgs a = winograd4_gemm_shape(backend, cout, cin, t1 - t0);
    a.ldc = ws.nbp;
    for (int64_t k = k0; k < k1; ++k) {
      a.a.packed = &u[k];
      a.b = {.data = v + k * v_stride, .ld = ws.nbp};
      a.c = m + k * m_stride;
      gemm_f32_range(a, 0, cout, 0, t1 - t0, gemm_ws);
    }
  };
  auto output_stage = [&](int64_t t0, int64_t t1, int64_t o0, int64_t o1, const float* m) {
    for (int64_t o = o0; o < o1; ++o) {
      for_each_row_segment(grid, t0, t1, [&](int64_t n, int64_t ty, int64_t tx0, int64_t tx1, int64_t col) {
        Winograd4Output op;
        op.bias = bias ? bias[o] : 0.0f;
        op.residual = residual ? residual + (n * cout + o) * out_plane : nullptr;
        op.act = &act;
        Isa::output_tile_row(g, m + o * ws.nbp + col, m_stride, ty, tx0, tx1, op, y + (n * cout + o) * out_plane);
      });
    }
  };
  auto q_of = [&](int64_t part) { return mine(part) + ws.v + ws.m; };
  auto gemm_ws_of = [&](int64_t part) { return mine(part) + ws.v + ws.m + ws.q; };
  const int parts = plan.parts;
  if (plan.shared) {
    float* v = mine(0);
    float* m = v + ws.v;
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) input_stage(0, total, cin * p / parts, cin * (p + 1) / parts, v, q_of(p));
    });
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p)
        gemm_stage(0, total, kPoints4 * p / parts, kPoints4 * (p + 1) / parts, v, m, gemm_ws_of(p));
    });
    parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) output_stage(0, total, cout * p / parts, cout * (p + 1) / parts, m);
    });
    return;
  }
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      float* v = mine(p);
      float* m = v + ws.v;
      // Blocks of equal size (at most nb): a short last block would make a narrow GEMM, whose
      // sums run in another order, so results would change with the thread count.
      const int64_t r0 = total * p / parts, r1 = total * (p + 1) / parts;
      const int64_t blocks = (r1 - r0 + ws.nb - 1) / ws.nb;
      for (int64_t b = 0; b < blocks; ++b) {
        const int64_t t0 = r0 + (r1 - r0) * b / blocks, t1 = r0 + (r1 - r0) * (b + 1) / blocks;
        input_stage(t0, t1, 0, cin, v, q_of(p));
        gemm_stage(t0, t1, 0, kPoints4, v, m, gemm_ws_of(p));
        output_stage(t0, t1, 0, cout, m);
      }
    }
  });
}

// Floats of scratch one F(4x4) run with the transforms of `Isa` needs on `threads` threads.
template <class Isa>
size_t winograd4_scratch_floats(const ConvGeometry2d& g, int64_t batch, int threads, int64_t cin, int64_t cout) {
  const Winograd4Plan p = winograd4_plan(Isa::backend(), Isa::kVec, g, batch, threads, cin, cout);
  return p.ws.total() * static_cast<size_t>(p.parts);
}

}  // namespace
}  // namespace ignis::kernels::x86
