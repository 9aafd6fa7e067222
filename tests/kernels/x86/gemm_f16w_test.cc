// SPDX-License-Identifier: Apache-2.0
// The half-weight sgemm backends (src/kernels/x86/gemm_f16w_avx512.cc, gemm_f16w_avx2.cc)
// against a double-precision loop over float32 A and B rounded to half (core/half.h's
// float_to_half, nearest even): both ISAs (the AVX2 one called directly, so it runs on
// AVX-512 machines too), plain, transposed, prepacked and callback-packed operands, the row
// path (1..4 rows against prepacked B), the tile edges (m, n, k off the tile, odd k, k over
// two depth slices), alpha, beta and every epilogue input (row and column bias, residual,
// activation), and the thread split. Products of a float32 and a half are exact in float32,
// so the only difference is the float32 summation order.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

using nn_test::random_floats;

constexpr float kInf = std::numeric_limits<float>::infinity();

double half_rounded(float v) { return static_cast<double>(half_to_float(float_to_half(v))); }

// The backends this CPU runs, by ISA.
std::vector<const GemmBackend*> backends() {
  std::vector<const GemmBackend*> out;
  if (isa_available(Isa::Avx2)) out.push_back(&gemm_backend_f16w_avx2());
  if (isa_available(Isa::Avx512)) out.push_back(&gemm_backend_f16w_avx512());
  return out;
}

enum class BSource { Plain, Prepacked, Callback };
enum class Bias { None, PerColumn, PerRow };

struct Problem {
  int64_t m, n, k;
  bool trans_a = false, trans_b = false;
  BSource b_source = BSource::Prepacked;
  bool a_prepacked = false;
  Bias bias = Bias::None;
  bool residual = false;
  Activation act = Activation::None;
  float alpha = 1.0f, beta = 0.0f;
};

// GemmPackFn writing float32 panels of op(B) (the contract: nr-column panels, zero-padded).
struct CallbackB {
  const float* b;
  int64_t ld;
  bool trans;
};
void pack_b_callback(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                     float* dst) {
  const auto& cb = *static_cast<const CallbackB*>(ctx);
  const int64_t nr = backend.nr, width = (nc + nr - 1) / nr * nr;
  for (int64_t j = 0; j < width; ++j)
    for (int64_t p = 0; p < kc; ++p) {
      const int64_t col = j0 + j, depth = p0 + p;
      dst[(j / nr) * kc * nr + p * nr + j % nr] =
          j < nc ? (cb.trans ? cb.b[col * cb.ld + depth] : cb.b[depth * cb.ld + col]) : 0.0f;
    }
}

std::string describe(const GemmBackend& be, const Problem& p) {
  const char* source[] = {"plain", "prepacked", "callback"};
  const char* bias[] = {"", " bias/col", " bias/row"};
  return std::string(be.name) + " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" +
         std::to_string(p.k) + (p.trans_a ? " transA" : "") + (p.trans_b ? " transB" : "") + " B " +
         source[static_cast<int>(p.b_source)] + (p.a_prepacked ? " A prepacked" : "") +
         bias[static_cast<int>(p.bias)] + (p.residual ? " residual" : "") +
         (p.act == Activation::Relu ? " relu" : p.act == Activation::LeakyRelu ? " leakyrelu" : "") +
         " alpha=" + std::to_string(p.alpha) + " beta=" + std::to_string(p.beta);
}

void check(const GemmBackend& be, const Problem& p, ThreadPool* pool, uint32_t seed) {
  SCOPED_TRACE(describe(be, p) + " seed=" + std::to_string(seed));
  const std::vector<float> a = random_floats(p.m * p.k, seed);
  const std::vector<float> b = random_floats(p.k * p.n, seed + 1);
  const std::vector<float> bias = random_floats(std::max(p.m, p.n), seed + 2);
  const std::vector<float> residual = random_floats(p.m * p.n, seed + 3);
  std::vector<float> c = random_floats(p.m * p.n, seed + 4);
  // beta == 0 must not read C: poison it.
  if (p.beta == 0.0f) std::fill(c.begin(), c.end(), std::numeric_limits<float>::quiet_NaN());
  const std::vector<float> c_old = c;
  const auto a_at = [&](int64_t i, int64_t q) { return p.trans_a ? a[q * p.m + i] : a[i * p.k + q]; };
  const auto b_at = [&](int64_t q, int64_t j) { return p.trans_b ? b[j * p.k + q] : b[q * p.n + j]; };

  GemmArgs g;
  g.backend = &be;
  g.m = p.m;
  g.n = p.n;
  g.k = p.k;
  const int64_t lda = p.trans_a ? p.m : p.k, ldb = p.trans_b ? p.k : p.n;
  PackedMatrix packed_a, packed_b;
  if (p.a_prepacked) {
    packed_a = PackedMatrix::pack(PackedMatrix::Side::A, p.m, p.k, a.data(), lda, p.trans_a, be);
    g.a.packed = &packed_a;
  } else {
    g.a = {.data = a.data(), .ld = lda, .trans = p.trans_a};
  }
  const CallbackB cb{b.data(), ldb, p.trans_b};
  switch (p.b_source) {
    case BSource::Plain: g.b = {.data = b.data(), .ld = ldb, .trans = p.trans_b}; break;
    case BSource::Prepacked:
      packed_b = PackedMatrix::pack(PackedMatrix::Side::B, p.k, p.n, b.data(), ldb, p.trans_b, be);
      g.b.packed = &packed_b;
      break;
    case BSource::Callback: g.b = {.pack_fn = pack_b_callback, .pack_ctx = &cb}; break;
  }
  g.c = c.data();
  g.ldc = p.n;
  g.alpha = p.alpha;
  g.beta = p.beta;
  if (p.bias == Bias::PerColumn) g.epilogue.bias_cs = 1;
  if (p.bias == Bias::PerRow) g.epilogue.bias_rs = 1;
  if (p.bias != Bias::None) {
    g.epilogue.bias = bias.data();
    g.epilogue.bias_scale = 0.5f;
  }
  if (p.residual) {
    g.epilogue.residual = residual.data();
    g.epilogue.residual_ld = p.n;
  }
  g.epilogue.act = p.act;
  g.epilogue.act_alpha = 0.1f;
  const int threads = pool ? pool->threads() : 1;
  std::vector<float> ws(gemm_f32_workspace(g, threads) + 16);
  gemm_f32(g, pool, reinterpret_cast<float*>(align_up(reinterpret_cast<size_t>(ws.data()), 64)));

  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      double sum = 0.0, magnitude = 0.0;
      for (int64_t q = 0; q < p.k; ++q) {
        const double t = static_cast<double>(a_at(i, q)) * half_rounded(b_at(q, j));
        sum += t;
        magnitude += std::fabs(t);
      }
      double want = p.alpha * sum;
      if (p.beta != 0.0f) want += static_cast<double>(p.beta) * c_old[static_cast<size_t>(i * p.n + j)];
      if (p.bias == Bias::PerColumn) want += 0.5 * bias[static_cast<size_t>(j)];
      if (p.bias == Bias::PerRow) want += 0.5 * bias[static_cast<size_t>(i)];
      if (p.residual) want += residual[static_cast<size_t>(i * p.n + j)];
      if (p.act == Activation::Relu) want = std::max(0.0, want);
      if (p.act == Activation::LeakyRelu && want < 0.0) want *= 0.1;
      const double tol = 1e-6 * (std::fabs(p.alpha) * magnitude + 2.0);
      ASSERT_NEAR(c[static_cast<size_t>(i * p.n + j)], want, tol) << "at (" << i << ", " << j << ")";
    }
}

TEST(GemmF16w, MatchesHalfRoundedWeights) {
  const auto all = backends();
  if (all.empty()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  for (const GemmBackend* be : all) {
    uint32_t seed = 1;
    for (int64_t m : {1, 2, 3, 4, 5, 8, 13})
      for (int64_t n : {1, 7, 24, 31, 32, 45, 70})
        for (int64_t k : {1, 2, 7, 64, 513, 1100}) {
          Problem p{.m = m, .n = n, .k = k};
          p.trans_a = seed % 3 == 0;
          p.trans_b = seed % 4 == 1;
          p.b_source = seed % 5 == 0 ? BSource::Plain : seed % 7 == 2 ? BSource::Callback : BSource::Prepacked;
          p.a_prepacked = p.b_source != BSource::Prepacked && seed % 2 == 0;
          p.bias = seed % 6 == 1 ? Bias::PerColumn : seed % 6 == 4 ? Bias::PerRow : Bias::None;
          p.residual = seed % 4 == 2;
          p.act = seed % 5 == 3 ? Activation::Relu : seed % 5 == 4 ? Activation::LeakyRelu : Activation::None;
          p.alpha = seed % 11 == 5 ? 1.5f : 1.0f;
          p.beta = seed % 7 == 3 ? 0.5f : 0.0f;
          check(*be, p, nullptr, seed++);
          if (HasFatalFailure()) return;
        }
  }
}

// Every epilogue input on the full-height tile, the partial tile and the row path.
TEST(GemmF16w, EpilogueOnEveryPath) {
  const auto all = backends();
  if (all.empty()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  uint32_t seed = 100;
  for (const GemmBackend* be : all)
    for (int64_t m : {2, 8, 11})
      for (Bias bias : {Bias::None, Bias::PerColumn, Bias::PerRow})
        for (bool residual : {false, true})
          for (Activation act : {Activation::None, Activation::Relu}) {
            check(*be, Problem{.m = m, .n = 50, .k = 33, .bias = bias, .residual = residual, .act = act, .beta = 0.25f},
                  nullptr, seed++);
            if (HasFatalFailure()) return;
          }
}

TEST(GemmF16w, ThreadSplit) {
  const auto all = backends();
  if (all.empty()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  ThreadPool pool(2);
  for (const GemmBackend* be : all) {
    check(*be, Problem{.m = 150, .n = 70, .k = 384, .bias = Bias::PerColumn, .act = Activation::Relu}, &pool, 40);
    check(*be, Problem{.m = 9, .n = 300, .k = 768, .trans_b = true}, &pool, 41);
    check(*be, Problem{.m = 1, .n = 3072, .k = 768}, &pool, 42);  // the row path, split by columns
  }
}

// The packed weights take half the bytes of the float32 backend's, and each is vcvtps2ph's
// round to nearest even, as float_to_half: ties go to the even half, past 65504 to infinity,
// tiny values to subnormals (C = 1 x B reads them back).
TEST(GemmF16w, PacksHalfTheBytesRoundedToNearestEven) {
  const std::vector<float> values = {1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, -2.0f - 0x1p-10f, 65504.0f,
                                     65519.0f,        65520.0f,            -1e6f,            1e-7f,
                                     3e-5f,           0.1f,                -0.0f,            kInf};
  const int64_t n = static_cast<int64_t>(values.size());
  for (const GemmBackend* be : backends()) {
    SCOPED_TRACE(be->name);
    const GemmBackend& f32 = be->isa == Isa::Avx512 ? gemm_backend_avx512() : gemm_backend_avx2();
    const std::vector<float> w = random_floats(700 * 300, 7);
    const PackedMatrix half_w = PackedMatrix::pack(PackedMatrix::Side::B, 700, 300, w.data(), 300, false, *be);
    const PackedMatrix float_w = PackedMatrix::pack(PackedMatrix::Side::B, 700, 300, w.data(), 300, false, f32);
    EXPECT_EQ(half_w.bytes() * 2, float_w.bytes());

    const PackedMatrix packed = PackedMatrix::pack(PackedMatrix::Side::B, 1, n, values.data(), n, false, *be);
    const float one = 1.0f;
    std::vector<float> c(static_cast<size_t>(n));
    GemmArgs g;
    g.m = 1;
    g.n = n;
    g.k = 1;
    g.a = {.data = &one, .ld = 1};
    g.b.packed = &packed;
    g.c = c.data();
    g.ldc = n;
    std::vector<float> ws(gemm_f32_workspace(g, 1) + 16);
    gemm_f32(g, nullptr, reinterpret_cast<float*>(align_up(reinterpret_cast<size_t>(ws.data()), 64)));
    for (int64_t j = 0; j < n; ++j) {
      const float want = half_to_float(float_to_half(values[static_cast<size_t>(j)]));
      EXPECT_EQ(c[static_cast<size_t>(j)], want) << "value " << values[static_cast<size_t>(j)];
    }
    EXPECT_EQ(c[0], 1.0f);                        // tie between 1 and 1 + 2^-10: even
    EXPECT_EQ(c[1], 1.0f + 2 * 0x1p-10f);         // tie between 1 + 2^-10 and 1 + 2^-9: even
    EXPECT_EQ(c[5], kInf);
  }
}

// MatMul/Gemm weights get the half backend of the kernel's ISA in F16 sessions; everything
// that goes through gemm_backend_for (convolutions) stays float32.
TEST(GemmF16w, ChosenForBWeightsOnly) {
  EXPECT_EQ(&gemm_backend_for(Precision::F16), &gemm_backend_default());
  if (!isa_enabled(Isa::Avx2)) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C or IGNIS_KERNELS rules it out";
  EXPECT_EQ(&gemm_backend_for_b_weights(gemm_backend_avx2(), Precision::F16), &gemm_backend_f16w_avx2());
  EXPECT_EQ(&gemm_backend_for_b_weights(gemm_backend_avx2(), Precision::F32), &gemm_backend_avx2());
  if (isa_enabled(Isa::Avx512)) {
    EXPECT_EQ(&gemm_backend_for_b_weights(gemm_backend_avx512(), Precision::F16), &gemm_backend_f16w_avx512());
    EXPECT_EQ(&gemm_backend_for_b_weights(gemm_backend_avx512(), Precision::F32), &gemm_backend_avx512());
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
