// SPDX-License-Identifier: Apache-2.0
// The parts of the x86 GEMM that run no vector code: backend choice, packed-weight storage
// and the split of one GEMM over the thread pool. The tiles themselves are in gemm_avx2.cc
// and gemm_avx512.cc.
#include <algorithm>

#include "core/aligned_alloc.h"
#include "core/cpu_features.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm.h"

namespace ignis::kernels::x86 {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const GemmBackend& gemm_backend_default() {
  static const GemmBackend& best = isa_enabled(Isa::Avx512) ? gemm_backend_avx512() : gemm_backend_avx2();
  return best;
}

const GemmBackend& gemm_backend_for(Precision precision) {
  if (precision == Precision::Bf16 && isa_enabled(Isa::Avx512) && cpu_features().avx512bf16)
    return gemm_backend_avx512bf16();
  return gemm_backend_default();
}

const GemmBackend& gemm_backend_for_b_weights(const GemmBackend& own, Precision precision) {
  if (precision == Precision::F16 && cpu_features().f16c) {
    if (&own == &gemm_backend_avx512()) return gemm_backend_f16w_avx512();
    if (&own == &gemm_backend_avx2()) return gemm_backend_f16w_avx2();
  }
  return own.isa == Isa::Avx512 ? gemm_backend_for(precision) : own;
}

const GemmBackend& gemm_backend_of(const GemmArgs& g) {
  if (g.a.packed) return g.a.packed->backend();
  if (g.b.packed) return g.b.packed->backend();
  return g.backend ? *g.backend : gemm_backend_default();
}

PackedMatrix PackedMatrix::pack(Side side, int64_t rows, int64_t cols, const float* x, int64_t ld, bool trans,
                                const GemmBackend& backend) {
  PackedMatrix p;
  p.side_ = side;
  p.rows_ = rows;
  p.cols_ = cols;
  p.backend_ = &backend;
  // A side: depth = cols, panels over rows; B side: depth = rows, panels over cols.
  const int64_t depth = side == Side::A ? cols : rows;
  const int64_t width = side == Side::A ? ceil_div(rows, backend.mr) * backend.mr : ceil_div(cols, backend.nr) * backend.nr;
  const size_t elem = side == Side::B ? static_cast<size_t>(backend.b_bytes) : sizeof(float);
  p.bytes_ = static_cast<size_t>(std::max<int64_t>(depth * width, 1)) * elem;
  p.data_ = std::shared_ptr<float>(static_cast<float*>(aligned_malloc(p.bytes_)), [](float* f) { aligned_free(f); });
  for (int64_t p0 = 0; p0 < depth; p0 += backend.kc) {
    const int64_t kc = std::min(backend.kc, depth - p0);
    // Blocks start at multiples of kc * width elements (64-byte multiples for both element sizes).
    char* block = reinterpret_cast<char*>(p.data_.get()) + static_cast<size_t>(p0 * width) * elem;
    float* dst = reinterpret_cast<float*>(block);
    if (side == Side::A) backend.pack_a(x, ld, trans, 0, rows, p0, kc, dst);
    else backend.pack_b(x, ld, trans, p0, kc, 0, cols, dst);
  }
  return p;
}

size_t gemm_f32_thread_workspace(const GemmArgs& args) { return gemm_backend_of(args).thread_workspace(args); }

void gemm_f32_range(const GemmArgs& args, int64_t i0, int64_t i1, int64_t j0, int64_t j1, float* workspace) {
  gemm_backend_of(args).range(args, i0, i1, j0, j1, workspace);
}

size_t gemm_f32_workspace(const GemmArgs& args, int threads) {
  return gemm_f32_thread_workspace(args) * static_cast<size_t>(std::max(threads, 1));
}

void gemm_f32(const GemmArgs& g, ThreadPool* pool, float* workspace) {
  if (g.m <= 0 || g.n <= 0) return;
  const GemmBackend& be = gemm_backend_of(g);
  const int threads = pool ? pool->threads() : 1;
  // Below ~2 MFLOP (tens of microseconds) waking a worker costs about what it saves, unless
  // the weights stream from beyond L2 (a classifier's [1, k] x [k, 1000]: each core then
  // streams half of them).
  constexpr int64_t kStreamedWeights = int64_t{1} << 18;  // B elements (1 MiB of float32)
  if (threads <= 1 || (2 * g.m * g.n * g.k < (int64_t{1} << 21) && g.n * g.k < kStreamedWeights)) {
    be.range(g, 0, g.m, 0, g.n, workspace);
    return;
  }
  // Split rows or columns into one stripe per thread. Each thread packs the operand it does
  // not split in full, so splitting rows repeats B's packing and splitting columns repeats
  // A's; the cost model charges the slowest stripe's tiles plus that repeated packing
  // (about four multiply-adds' worth per packed element).
  const int64_t tiles_m = ceil_div(g.m, be.mr), tiles_n = ceil_div(g.n, be.nr);
  const int64_t parts_m = std::min<int64_t>(threads, tiles_m), parts_n = std::min<int64_t>(threads, tiles_n);
  const bool b_repacked = g.b.packed == nullptr, a_repacked = g.a.packed == nullptr;
  const double cost_m = static_cast<double>(ceil_div(tiles_m, parts_m) * be.mr) * g.n * g.k +
                        (b_repacked ? 4.0 * g.n * g.k : 0.0);
  const double cost_n = static_cast<double>(ceil_div(tiles_n, parts_n) * be.nr) * g.m * g.k +
                        (a_repacked ? 4.0 * g.m * g.k : 0.0);
  const bool split_n = cost_n <= cost_m;
  const int64_t tiles = split_n ? tiles_n : tiles_m;
  const int64_t parts = split_n ? parts_n : parts_m;
  const size_t per_thread = be.thread_workspace(g);
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t t0 = tiles * part / parts, t1 = tiles * (part + 1) / parts;
      float* ws = workspace + per_thread * static_cast<size_t>(part);
      if (split_n) be.range(g, 0, g.m, t0 * be.nr, std::min<int64_t>(g.n, t1 * be.nr), ws);
      else be.range(g, t0 * be.mr, std::min<int64_t>(g.m, t1 * be.mr), 0, g.n, ws);
    }
  });
}

}  // namespace ignis::kernels::x86
