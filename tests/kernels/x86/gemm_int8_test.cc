// SPDX-License-Identifier: Apache-2.0
// Each int8 GEMM tile (AVX2 3x16, AVX-512 VNNI 6x64; src/kernels/x86/gemm_int8.h) against a
// plain int64 loop over (a - za)(b - zb): int8 and uint8 B, transposed B, extreme values
// (where vpmaddubsw would saturate), every zero-point form, depths that are not a multiple of 4,
// the edges of both tiles, a wider leading dimension of C, the float epilogue (row and column
// scales, bias), the requantizing epilogue, the run-time packer and the thread split (with L2
// chunks). Op-level behaviour is covered by the registry-wide consistency test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm_int8.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

std::vector<const Int8GemmBackend*> backends() {
  std::vector<const Int8GemmBackend*> list;
  if (isa_available(Isa::Avx2)) list.push_back(&int8_gemm_backend_avx2());
  if (cpu_features().avx512vnni && cpu_features().avx512bw) list.push_back(&int8_gemm_backend_vnni());
  return list;
}

// Random bytes; `extreme` draws only the ends of the uint8 and int8 ranges (0, 255, 127, -128).
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed, bool extreme) {
  static constexpr uint8_t kEnds[4] = {0x00, 0xFF, 0x7F, 0x80};
  std::mt19937 rng(seed);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = extreme ? kEnds[rng() % 4] : static_cast<uint8_t>(rng());
  return v;
}

struct Problem {
  int64_t m, n, k;
  bool b_unsigned = false;
  bool trans = false;
  bool extreme = false;
  bool row_zps = false;    // one A zero point per row (else one for all)
  bool col_zps = false;    // one B zero point per column
  bool to_float = false;
  int64_t ldc_pad = 0;
};

std::string describe(const Problem& p, const Int8GemmBackend& b) {
  return std::string(b.name) + " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
         (p.b_unsigned ? " u8 B" : " s8 B") + (p.trans ? " trans" : "") + (p.extreme ? " extreme" : "") +
         (p.row_zps ? " row zps" : "") + (p.col_zps ? " col zps" : "") + (p.to_float ? " float" : "");
}

void check(const Problem& p, const Int8GemmBackend& backend, ThreadPool* pool, uint32_t seed) {
  const std::string where = describe(p, backend);
  const std::vector<uint8_t> a = random_bytes(static_cast<size_t>(p.m * p.k), seed, p.extreme);
  const std::vector<uint8_t> b = random_bytes(static_cast<size_t>(p.k * p.n), seed + 1, p.extreme);
  std::mt19937 rng(seed + 2);
  std::vector<int32_t> za(static_cast<size_t>(p.m)), zb(static_cast<size_t>(p.n));
  const int32_t za0 = static_cast<int32_t>(rng() % 256);
  const int32_t zb0 = p.b_unsigned ? static_cast<int32_t>(rng() % 256) : static_cast<int32_t>(rng() % 256) - 128;
  for (auto& z : za) z = p.row_zps ? static_cast<int32_t>(rng() % 256) : za0;
  for (auto& z : zb) z = p.col_zps ? (p.b_unsigned ? static_cast<int32_t>(rng() % 256) : static_cast<int32_t>(rng() % 256) - 128) : zb0;
  std::vector<float> row_scale(static_cast<size_t>(p.m)), col_scale(static_cast<size_t>(p.n)), bias(static_cast<size_t>(p.n));
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (auto& v : row_scale) v = dist(rng);
  for (auto& v : col_scale) v = dist(rng) * 1e-3f;
  for (auto& v : bias) v = dist(rng);

  // B element (k, j) as stored: [K x N], or [N x K] when transposed.
  const auto b_at = [&](int64_t kk, int64_t j) -> int32_t {
    const uint8_t raw = p.trans ? b[static_cast<size_t>(j * p.k + kk)] : b[static_cast<size_t>(kk * p.n + j)];
    return p.b_unsigned ? static_cast<int32_t>(raw) : static_cast<int32_t>(static_cast<int8_t>(raw));
  };
  const PackedInt8B packed = PackedInt8B::pack(b.data(), p.b_unsigned, p.k, p.n, p.trans ? p.k : p.n, p.trans);
  std::vector<int32_t> shift(static_cast<size_t>(p.n)), corr(static_cast<size_t>(p.n)), row_sum(static_cast<size_t>(p.m));
  for (int64_t j = 0; j < p.n; ++j) {
    int64_t s = 0;
    for (int64_t kk = 0; kk < p.k; ++kk) s += b_at(kk, j);
    ASSERT_EQ(packed.column_sums()[j], s) << where << " column " << j;
    shift[static_cast<size_t>(j)] = (p.b_unsigned ? 128 : 0) - zb[static_cast<size_t>(j)];
    corr[static_cast<size_t>(j)] = static_cast<int32_t>(s - p.k * zb[static_cast<size_t>(j)]);
  }
  int8_row_sums(a.data(), p.m, p.k, p.k, row_sum.data());

  const int64_t ldc = p.n + p.ldc_pad;
  std::vector<int32_t> ci(static_cast<size_t>(p.m * ldc), -7);
  std::vector<float> cf(static_cast<size_t>(p.m * ldc), -7.0f);
  Int8GemmArgs g;
  g.m = p.m;
  g.a = a.data();
  g.lda = p.k;
  g.b = &packed;
  g.row_zp = za.data();
  g.row_sum = row_sum.data();
  g.col_shift = shift.data();
  g.col_corr = corr.data();
  g.ldc = ldc;
  if (p.to_float) {
    g.c_f32 = cf.data();
    g.row_scale = row_scale.data();
    g.col_scale = col_scale.data();
    g.bias = bias.data();
  } else {
    g.c_i32 = ci.data();
  }
  gemm_u8s8(g, pool, backend);

  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      if (j >= p.n) {  // the padding of C is never written
        ASSERT_EQ(ci[at], -7) << where;
        ASSERT_EQ(cf[at], -7.0f) << where;
        continue;
      }
      int64_t want = 0;
      for (int64_t kk = 0; kk < p.k; ++kk)
        want += (static_cast<int64_t>(a[static_cast<size_t>(i * p.k + kk)]) - za[static_cast<size_t>(i)]) *
                (b_at(kk, j) - zb[static_cast<size_t>(j)]);
      if (p.to_float) {
        const float expect = static_cast<float>(static_cast<int32_t>(want)) * col_scale[static_cast<size_t>(j)] *
                                 row_scale[static_cast<size_t>(i)] +
                             bias[static_cast<size_t>(j)];
        ASSERT_EQ(cf[at], expect) << where << " at (" << i << ", " << j << ")";
      } else {
        ASSERT_EQ(ci[at], want) << where << " at (" << i << ", " << j << ")";
      }
    }
  }
}

TEST(Int8Gemm, MatchesIntegerLoop) {
  const auto list = backends();
  if (list.empty()) GTEST_SKIP() << "CPU lacks AVX2";
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (const Int8GemmBackend* backend : list) {
    for (int64_t m : {1, 2, 3, 5, 6, 7, 13})
      for (int64_t n : {1, 15, 16, 17, 33, 64, 65, 97})
        for (int64_t k : {1, 3, 4, 7, 64, 129}) {
          Problem p{.m = m, .n = n, .k = k};
          p.b_unsigned = (seed % 2) == 0;
          p.trans = (seed % 3) == 0;
          p.row_zps = (seed % 5) < 2;
          p.col_zps = (seed % 7) < 3;
          p.to_float = (seed % 4) == 1;
          p.ldc_pad = (seed % 6) == 0 ? 5 : 0;
          check(p, *backend, nullptr, seed++);
          if (HasFatalFailure()) return;
        }
  }
}

TEST(Int8Gemm, ExtremeValuesStayExact) {
  // 255 * 127 summed over a quad exceeds int16: exact only without 16-bit saturation.
  for (const Int8GemmBackend* backend : backends()) {
    for (bool b_unsigned : {false, true}) {
      Problem p{.m = 7, .n = 40, .k = 515, .b_unsigned = b_unsigned, .extreme = true};
      check(p, *backend, nullptr, 11);
      Problem q = p;
      q.row_zps = q.col_zps = true;
      q.to_float = true;
      check(q, *backend, nullptr, 12);
    }
  }
}

TEST(Int8Gemm, ThreadSplitByColumnsAndRows) {
  ThreadPool pool(2);
  for (const Int8GemmBackend* backend : backends()) {
    check(Problem{.m = 130, .n = 300, .k = 384}, *backend, &pool, 21);              // by column panels
    check(Problem{.m = 131, .n = 20, .k = 2000, .col_zps = true}, *backend, &pool, 22);  // one panel: by rows
    // 2 panels per L2 chunk at this depth: each thread walks its panels chunk by chunk.
    check(Problem{.m = 13, .n = 300, .k = 1030}, *backend, &pool, 23);
    check(Problem{.m = 13, .n = 300, .k = 1030}, *backend, nullptr, 24);
  }
}

// The run-time packer (row pointers) writes the same panels and column sums as
// PackedInt8B::pack, for both signedness, ragged depths and ragged last panels.
TEST(Int8Gemm, PackRowsMatchesPack) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "CPU lacks AVX2";
  uint32_t seed = 31;
  for (bool is_unsigned : {false, true}) {
    for (int64_t k : {1, 3, 4, 7, 130}) {
      for (int64_t n : {1, 31, 32, 33, 100}) {
        const int64_t ld = n + 3;
        const std::vector<uint8_t> b = random_bytes(static_cast<size_t>(k * ld), seed++, false);
        std::vector<const uint8_t*> rows(static_cast<size_t>(k));
        for (int64_t r = 0; r < k; ++r) rows[static_cast<size_t>(r)] = b.data() + r * ld;
        const PackedInt8B want = PackedInt8B::pack(b.data() + 1, is_unsigned, k, n, ld, false);
        const size_t bytes = static_cast<size_t>(want.panels() * want.quads() * kInt8Quad * kInt8PanelCols);
        std::vector<int8_t> got(bytes, 99);
        std::vector<int32_t> sums(static_cast<size_t>(n), -1);
        int8_pack_rows(rows.data(), 1, k, n, is_unsigned, got.data(), sums.data());
        const std::string where = std::string(is_unsigned ? "u8" : "s8") + " k=" + std::to_string(k) + " n=" + std::to_string(n);
        for (size_t i = 0; i < bytes; ++i) ASSERT_EQ(got[i], want.panel(0)[i]) << where << " byte " << i;
        for (int64_t j = 0; j < n; ++j) ASSERT_EQ(sums[static_cast<size_t>(j)], want.column_sums()[j]) << where << " column " << j;
      }
    }
  }
}

// The requantizing epilogue against its definition (gemm_int8.h) evaluated on the exact
// integer sums: per-row multipliers with a bias, per-column multipliers, uint8 and int8, and a
// raised lower bound (a folded Relu).
TEST(Int8Gemm, RequantizedOutputFollowsItsDefinition) {
  for (const Int8GemmBackend* backend : backends()) {
    for (int variant = 0; variant < 4; ++variant) {
      const int64_t m = 7, n = 45, k = 37;
      const bool per_row = variant % 2 == 0, is_signed = variant >= 2;
      const std::vector<uint8_t> a = random_bytes(static_cast<size_t>(m * k), 40 + variant, false);
      const std::vector<uint8_t> b = random_bytes(static_cast<size_t>(k * n), 50 + variant, false);
      const PackedInt8B packed = PackedInt8B::pack(b.data(), false, k, n, n, false);
      std::vector<int32_t> corr(static_cast<size_t>(n)), bias(static_cast<size_t>(m));
      for (int64_t j = 0; j < n; ++j) corr[static_cast<size_t>(j)] = packed.column_sums()[j];
      std::vector<int32_t> za(static_cast<size_t>(m), 128);
      std::vector<float> scale(static_cast<size_t>(per_row ? m : n));
      std::mt19937 rng(60 + variant);
      for (auto& v : scale) v = std::uniform_real_distribution<float>(2e-4f, 6e-4f)(rng);
      for (auto& v : bias) v = static_cast<int32_t>(rng() % 20001) - 10000;
      const int32_t zp = is_signed ? -3 : 130, lo = is_signed ? -100 : 0, hi = is_signed ? 127 : 255;
      std::vector<uint8_t> c(static_cast<size_t>(m * n), 0xA5);
      Int8GemmArgs g;
      g.m = m;
      g.a = a.data();
      g.lda = k;
      g.b = &packed;
      g.row_zp = za.data();
      g.col_corr = corr.data();
      g.c_q = c.data();
      g.ldc = n;
      g.q_signed = is_signed;
      g.q_bias = per_row ? bias.data() : nullptr;
      (per_row ? g.q_row_scale : g.q_col_scale) = scale.data();
      g.q_zero_point = zp;
      g.q_min = lo;
      g.q_max = hi;
      gemm_u8s8(g, nullptr, *backend);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          int64_t acc = per_row ? bias[static_cast<size_t>(i)] : 0;
          for (int64_t kk = 0; kk < k; ++kk)
            acc += (static_cast<int64_t>(a[static_cast<size_t>(i * k + kk)]) - 128) *
                   static_cast<int8_t>(b[static_cast<size_t>(kk * n + j)]);
          const double mult = scale[static_cast<size_t>(per_row ? i : j)];
          const double r = std::nearbyint(static_cast<double>(acc) * mult + zp);
          const auto want = static_cast<int32_t>(std::clamp(r, static_cast<double>(lo), static_cast<double>(hi)));
          const uint8_t raw = c[static_cast<size_t>(i * n + j)];
          const int32_t got = is_signed ? static_cast<int8_t>(raw) : raw;
          ASSERT_EQ(got, want) << backend->name << " variant " << variant << " at (" << i << ", " << j << ")";
        }
      }
    }
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
