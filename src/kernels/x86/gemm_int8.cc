// SPDX-License-Identifier: Apache-2.0
// The parts of the int8 GEMM that run no vector code: packing B, row sums, backend choice and
// the split over the thread pool. The tiles are in gemm_int8_avx2.cc and
// gemm_int8_avx512vnni.cc.
#include "kernels/x86/gemm_int8.h"

#include <algorithm>
#include <cstring>

#include "core/aligned_alloc.h"
#include "core/cpu_features.h"
#include "kernels/registry.h"

namespace ignis::kernels::x86 {

namespace {

template <class T>
std::shared_ptr<T> aligned_array(int64_t count) {
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(count, 1)) * sizeof(T);
  T* p = static_cast<T*>(aligned_malloc(bytes));
  std::memset(static_cast<void*>(p), 0, bytes);
  return std::shared_ptr<T>(p, [](T* q) { aligned_free(q); });
}

}  // namespace

PackedInt8B PackedInt8B::pack(const void* b, bool is_unsigned, int64_t k, int64_t n, int64_t ld, bool trans) {
  PackedInt8B p;
  p.k_ = k;
  p.n_ = n;
  p.unsigned_ = is_unsigned;
  const int64_t panel_bytes = p.quads() * kInt8Quad * kInt8PanelCols;
  p.data_ = aligned_array<int8_t>(p.panels() * panel_bytes);
  p.col_sums_ = aligned_array<int32_t>(p.panels() * kInt8PanelCols);
  const auto* bytes = static_cast<const uint8_t*>(b);
  int32_t* sums = p.col_sums_.get();
  for (int64_t kk = 0; kk < k; ++kk) {
    for (int64_t j = 0; j < n; ++j) {
      const uint8_t raw = trans ? bytes[j * ld + kk] : bytes[kk * ld + j];
      // uint8 values are stored shifted by -128 (flipping the top bit does exactly that).
      const int32_t value = is_unsigned ? static_cast<int32_t>(raw) : static_cast<int32_t>(static_cast<int8_t>(raw));
      const int8_t stored = static_cast<int8_t>(is_unsigned ? raw ^ 0x80u : raw);
      sums[j] += value;
      const int64_t panel = j / kInt8PanelCols, col = j % kInt8PanelCols;
      p.data_.get()[panel * panel_bytes + (kk / kInt8Quad) * kInt8Quad * kInt8PanelCols + col * kInt8Quad +
                    kk % kInt8Quad] = stored;
    }
  }
  return p;
}

PackedInt8B PackedInt8B::view(int8_t* data, int32_t* col_sums, bool is_unsigned, int64_t k, int64_t n) {
  PackedInt8B p;
  p.k_ = k;
  p.n_ = n;
  p.unsigned_ = is_unsigned;
  // Aliasing constructors with no owner: the views share nothing and free nothing.
  p.data_ = std::shared_ptr<int8_t>(std::shared_ptr<int8_t>(), data);
  p.col_sums_ = std::shared_ptr<int32_t>(std::shared_ptr<int32_t>(), col_sums);
  return p;
}

int64_t int8_panels_per_chunk(int64_t k) {
  constexpr int64_t kChunkBytes = int64_t{256} << 10;
  const int64_t panel_bytes = std::max<int64_t>((k + kInt8Quad - 1) / kInt8Quad, 1) * kInt8Quad * kInt8PanelCols;
  // Even, at least 2: the tiles take panels in pairs, and an odd one out runs a tile of half
  // the columns for the same broadcasts of A (two panels of the deepest layers, K = 4608,
  // take 288 KB).
  return std::max<int64_t>(2, kChunkBytes / panel_bytes & ~int64_t{1});
}

void int8_row_sums(const uint8_t* a, int64_t m, int64_t k, int64_t lda, int32_t* out) {
  for (int64_t i = 0; i < m; ++i) {
    const uint8_t* row = a + i * lda;
    int32_t s = 0;
    for (int64_t kk = 0; kk < k; ++kk) s += row[kk];
    out[i] = s;
  }
}

const Int8GemmBackend& int8_gemm_backend_default() {
  static const Int8GemmBackend& best =
      isa_enabled(Isa::Avx512) && cpu_features().avx512vnni && cpu_features().avx512bw ? int8_gemm_backend_vnni()
                                                                                        : int8_gemm_backend_avx2();
  return best;
}

void gemm_u8s8(const Int8GemmArgs& g, ThreadPool* pool, const Int8GemmBackend& backend) {
  const int64_t panels = g.b->panels();
  if (g.m <= 0 || panels == 0) return;
  const int threads = pool ? pool->threads() : 1;
  // Work below ~256 Ki multiply-adds stays on one thread (waking another costs more).
  const int64_t work = g.m * g.b->k() * g.b->n();
  const int parts = static_cast<int>(std::clamp<int64_t>(work >> 18, 1, threads));
  // The AVX2 tile's split of signed A, made once here rather than in every call of `range`.
  thread_local Int8PairSplit split;
  Int8GemmArgs split_args;
  if (backend.signed_a && g.a_signed && !g.a_split) {
    int8_split_pairs(g.a_signed, g.lda, g.b->k(), 0, g.m, split);
    split_args = g;
    split_args.a_split = &split;
  }
  const Int8GemmArgs& args = split_args.a_split ? split_args : g;
  const int64_t chunk = int8_panels_per_chunk(g.b->k());
  if (parts == 1) {
    for (int64_t p = 0; p < panels; p += chunk) backend.range(args, 0, g.m, p, std::min(p + chunk, panels));
    return;
  }
  // Split by columns (each thread streams its own part of B) when every thread gets a panel;
  // otherwise by rows, in whole row groups of 8.
  const bool by_columns = panels >= parts;
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      if (by_columns) {
        const int64_t p1 = panels * (part + 1) / parts;
        for (int64_t p = panels * part / parts; p < p1; p += chunk) backend.range(args, 0, g.m, p, std::min(p + chunk, p1));
      } else {
        const int64_t groups = (g.m + 7) / 8;
        const int64_t i0 = std::min(g.m, groups * part / parts * 8), i1 = std::min(g.m, groups * (part + 1) / parts * 8);
        if (i1 > i0) backend.range(args, i0, i1, 0, panels);
      }
    }
  });
}

}  // namespace ignis::kernels::x86
