// SPDX-License-Identifier: Apache-2.0
// The bfloat16 sgemm backend (src/kernels/x86/gemm_avx512bf16.cc) against a double-precision
// loop over the operands rounded to bfloat16: plain and transposed operands, prepacked B,
// depths that are odd and that span two depth slices (512), the edges of the 8x32 tile, an
// epilogue with bias and activation, beta on an existing C, and the thread split. bfloat16
// products are exact in float32, so the only difference is the float32 summation.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/cpu_features.h"
#include "core/half.h"
#include "core/thread_pool.h"
#include "kernels/nn_test_util.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

bool bf16_available() { return isa_available(Isa::Avx512) && cpu_features().avx512bf16; }

using nn_test::random_floats;

double rounded(float v) { return static_cast<double>(bf16_to_float(float_to_bf16(v))); }

struct Problem {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  bool prepacked = false;
  bool epilogue = false;  // bias per column and Relu
  float beta = 0.0f;
};

void check(const Problem& p, ThreadPool* pool, uint32_t seed) {
  const std::string where = "m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
                            (p.trans_a ? " transA" : "") + (p.trans_b ? " transB" : "") +
                            (p.prepacked ? " prepacked" : "") + (p.epilogue ? " bias+relu" : "") +
                            (p.beta != 0.0f ? " beta" : "");
  const std::vector<float> a = random_floats(static_cast<size_t>(p.m * p.k), seed);
  const std::vector<float> b = random_floats(static_cast<size_t>(p.k * p.n), seed + 1);
  const std::vector<float> bias = random_floats(static_cast<size_t>(p.n), seed + 2);
  std::vector<float> c = random_floats(static_cast<size_t>(p.m * p.n), seed + 3);
  const std::vector<float> c_old = c;
  const auto a_at = [&](int64_t i, int64_t q) { return p.trans_a ? a[q * p.m + i] : a[i * p.k + q]; };
  const auto b_at = [&](int64_t q, int64_t j) { return p.trans_b ? b[j * p.k + q] : b[q * p.n + j]; };

  const GemmBackend& backend = gemm_backend_avx512bf16();
  PackedMatrix packed;
  GemmArgs g;
  g.backend = &backend;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  g.a = {.data = a.data(), .ld = p.trans_a ? p.m : p.k, .trans = p.trans_a};
  if (p.prepacked) {
    packed = PackedMatrix::pack(PackedMatrix::Side::B, p.k, p.n, b.data(), p.trans_b ? p.k : p.n, p.trans_b, backend);
    g.b.packed = &packed;
  } else {
    g.b = {.data = b.data(), .ld = p.trans_b ? p.k : p.n, .trans = p.trans_b};
  }
  g.c = c.data();
  g.ldc = p.n;
  g.beta = p.beta;
  if (p.epilogue) {
    g.epilogue.bias = bias.data();
    g.epilogue.bias_cs = 1;
    g.epilogue.act = Activation::Relu;
  }
  const int threads = pool ? pool->threads() : 1;
  std::vector<float> ws(gemm_f32_workspace(g, threads) + 16);
  gemm_f32(g, pool, reinterpret_cast<float*>(align_up(reinterpret_cast<size_t>(ws.data()), 64)));

  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double want = 0.0, magnitude = 0.0;
      for (int64_t q = 0; q < p.k; ++q) {
        const double t = rounded(a_at(i, q)) * rounded(b_at(q, j));
        want += t;
        magnitude += std::fabs(t);
      }
      want += static_cast<double>(p.beta) * c_old[static_cast<size_t>(i * p.n + j)];
      if (p.epilogue) want = std::max(0.0, want + bias[static_cast<size_t>(j)]);
      const double tol = 1e-6 * (magnitude + 1.0);
      ASSERT_NEAR(c[static_cast<size_t>(i * p.n + j)], want, tol) << where << " at (" << i << ", " << j << ")";
    }
}

TEST(GemmBf16, MatchesRoundedOperands) {
  if (!bf16_available()) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  uint32_t seed = 1;
  for (int64_t m : {1, 5, 8, 13})
    for (int64_t n : {1, 31, 32, 45})
      for (int64_t k : {1, 2, 7, 64, 513, 1100}) {
        Problem p{.m = m, .n = n, .k = k};
        p.trans_a = seed % 3 == 0;
        p.trans_b = seed % 4 == 1;
        p.prepacked = seed % 2 == 0;
        p.epilogue = seed % 5 < 2;
        p.beta = seed % 7 == 3 ? 0.5f : 0.0f;
        check(p, nullptr, seed++);
        if (HasFatalFailure()) return;
      }
}

TEST(GemmBf16, ThreadSplit) {
  if (!bf16_available()) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  ThreadPool pool(2);
  check(Problem{.m = 150, .n = 70, .k = 384, .prepacked = true, .epilogue = true}, &pool, 40);
  check(Problem{.m = 9, .n = 300, .k = 768, .trans_b = true, .prepacked = true}, &pool, 41);
}

// The backend a bfloat16 session's weights get: bfloat16 exactly where the CPU has it and
// IGNIS_KERNELS allows AVX-512.
TEST(GemmBf16, ChosenOnlyWhereAvailable) {
  const GemmBackend& f32 = gemm_backend_for(Precision::F32);
  EXPECT_EQ(&f32, &gemm_backend_default());
  const GemmBackend& bf16 = gemm_backend_for(Precision::Bf16);
  if (isa_enabled(Isa::Avx512) && cpu_features().avx512bf16) EXPECT_EQ(&bf16, &gemm_backend_avx512bf16());
  else EXPECT_EQ(&bf16, &gemm_backend_default());
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
