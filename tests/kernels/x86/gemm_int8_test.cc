// SPDX-License-Identifier: Apache-2.0
// Each int8 GEMM tile (AVX2 3x16, AVX-512 VNNI 6x64; src/kernels/x86/gemm_int8.h) against a
// plain int64 loop over (a - za)(b - zb): int8 and uint8 B, transposed B, extreme values
// (where vpmaddubsw would saturate), every zero-point form, depths that are not a multiple of 4,
// the edges of both tiles, a wider leading dimension of C, the float epilogue (row and column
// scales, bias) and the thread split. Op-level behaviour is covered by the registry-wide
// consistency test.
#include <gtest/gtest.h>

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
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
