// SPDX-License-Identifier: Apache-2.0
// Each x86 sgemm backend (AVX2 4x24, AVX-512 8x32; src/kernels/x86/gemm.h) against a
// plain double-precision loop: every operand form (plain, transposed, prepacked, packing
// callback), alpha/beta on an existing C with a wider leading dimension, each bias layout,
// the residual and every activation of the epilogue across several depth slices and the
// edges of both register tiles, edge values and NaN through each activation, the narrow
// path, the thread split, and empty depth. Op-level behaviour is covered by the
// registry-wide consistency test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/x86/gemm.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Workspace {
  explicit Workspace(size_t floats)
      : p(static_cast<float*>(aligned_malloc(std::max<size_t>(floats, 1) * sizeof(float))), aligned_free) {}
  std::unique_ptr<float, void (*)(void*)> p;
};

// The expected C, computed in double from the same inputs.
struct Naive {
  int64_t m, n, k;
  const std::vector<float>& a;  // op(A) stored as [m x k] or, when ta, [k x m]
  bool ta;
  const std::vector<float>& b;  // op(B) stored as [k x n] or, when tb, [n x k]
  bool tb;

  double product(int64_t i, int64_t j) const {
    double s = 0;
    for (int64_t p = 0; p < k; ++p) s += double(ta ? a[p * m + i] : a[i * k + p]) * (tb ? b[j * k + p] : b[p * n + j]);
    return s;
  }
};

double activate(double v, const GemmEpilogue& e) {
  switch (e.act) {
    case Activation::None: return v;
    case Activation::Relu: return std::max(v, 0.0);
    case Activation::Clip: return std::min(std::max(v, double(e.act_lo)), double(e.act_hi));
    case Activation::LeakyRelu: return v < 0 ? v * e.act_alpha : v;
    case Activation::Sigmoid: return 1.0 / (1.0 + std::exp(-v));
    case Activation::HardSigmoid: return std::clamp(e.act_alpha * v + e.act_beta, 0.0, 1.0);
    case Activation::HardSwish: return v * std::clamp(v / 6.0 + 0.5, 0.0, 1.0);
    case Activation::SiLU: return v / (1.0 + std::exp(-v));
    case Activation::Gelu: return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    case Activation::GeluTanh: return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  }
  return v;
}

// One epilogue per activation, with parameters that matter over the test values.
std::vector<GemmEpilogue> every_activation() {
  std::vector<GemmEpilogue> acts;
  for (Activation act : {Activation::None, Activation::Relu, Activation::Clip, Activation::LeakyRelu,
                         Activation::Sigmoid, Activation::HardSigmoid, Activation::HardSwish, Activation::SiLU,
                         Activation::Gelu, Activation::GeluTanh}) {
    GemmEpilogue e;
    e.act = act;
    e.act_lo = -3.0f;
    e.act_hi = 2.5f;
    e.act_alpha = act == Activation::LeakyRelu ? 0.125f : 0.2f;
    e.act_beta = 0.5f;
    acts.push_back(e);
  }
  return acts;
}

// B supplied through the packing callback: a plain row-major [k x n] matrix.
struct CallbackSource {
  const float* b;
  int64_t ld;
};
void pack_from_callback(const void* ctx, const GemmBackend& backend, int64_t p0, int64_t kc, int64_t j0, int64_t nc,
                        float* dst) {
  const auto& s = *static_cast<const CallbackSource*>(ctx);
  backend.pack_b(s.b, s.ld, false, p0, kc, j0, nc, dst);
}

class GemmF32 : public ::testing::TestWithParam<const GemmBackend*> {
 protected:
  void SetUp() override {
    if (!isa_available(be().isa)) GTEST_SKIP() << "this CPU lacks " << be().name << "'s ISA";
  }
  const GemmBackend& be() const { return *GetParam(); }
  // C[m x n] = A[m x k] B[k x n] on this backend, all three plain row-major matrices.
  GemmArgs row_major(int64_t m, int64_t n, int64_t k, const float* a, const float* b, float* c) const {
    GemmArgs g;
    g.backend = &be();
    g.m = m;
    g.n = n;
    g.k = k;
    g.a = {.data = a, .ld = k};
    g.b = {.data = b, .ld = n};
    g.c = c;
    g.ldc = n;
    return g;
  }
};

INSTANTIATE_TEST_SUITE_P(Backends, GemmF32, ::testing::Values(&gemm_backend_avx2(), &gemm_backend_avx512()),
                         [](const ::testing::TestParamInfo<const GemmBackend*>& info) {
                           return std::string(info.param->name);
                         });

TEST_P(GemmF32, MatchesNaiveProductForEveryOperandForm) {
  // Around both tiles (4x24, 8x32), depth slices (384, 256), row blocks (144) and column blocks.
  const int64_t sizes[][3] = {{1, 1, 1},     {4, 24, 5},   {5, 25, 385}, {13, 47, 800}, {150, 3, 2},
                              {5, 4100, 3},  {8, 32, 257}, {9, 33, 513}, {7, 31, 255},  {17, 65, 256},
                              {145, 70, 9},  {3, 2049, 4},  {19, 4, 600}, {9, 2, 257}};
  uint32_t seed = 1;
  for (const auto& sz : sizes) {
    const int64_t m = sz[0], n = sz[1], k = sz[2];
    for (int form = 0; form < 6; ++form) {
      // 0 plain, 1 trans A, 2 trans B, 3 packed A, 4 packed B (transposed), 5 B callback.
      const bool ta = form == 1, tb = form == 2 || form == 4;
      const auto a = random_floats(static_cast<size_t>(m * k), seed++);
      const auto b = random_floats(static_cast<size_t>(k * n), seed++);
      const int64_t ldc = n + 3;
      std::vector<float> c(static_cast<size_t>(m * ldc), 7.0f);  // columns past n must stay 7
      GemmArgs g;
      g.backend = &be();
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = {.data = a.data(), .ld = ta ? m : k, .trans = ta};
      g.b = {.data = b.data(), .ld = tb ? k : n, .trans = tb};
      PackedMatrix pa, pb;
      CallbackSource cb{b.data(), n};
      if (form == 3) {
        pa = PackedMatrix::pack(PackedMatrix::Side::A, m, k, a.data(), k, false, be());
        g.a = {.packed = &pa};
      } else if (form == 4) {
        pb = PackedMatrix::pack(PackedMatrix::Side::B, k, n, b.data(), k, true, be());
        g.b = {.packed = &pb};
      } else if (form == 5) {
        g.b = {.pack_fn = pack_from_callback, .pack_ctx = &cb};
      }
      g.c = c.data();
      g.ldc = ldc;
      Workspace ws(gemm_f32_workspace(g, 1));
      gemm_f32(g, nullptr, ws.p.get());
      const Naive ref{m, n, k, a, ta, b, tb};
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const double want = ref.product(i, j);
          ASSERT_NEAR(c[i * ldc + j], want, 2e-6 * std::sqrt(double(k)) * std::max(1.0, std::fabs(want)))
              << "m=" << m << " n=" << n << " k=" << k << " form " << form << " at (" << i << ", " << j << ")";
        }
        for (int64_t j = n; j < ldc; ++j) ASSERT_EQ(c[i * ldc + j], 7.0f) << "wrote past column n, form " << form;
      }
    }
  }
}

TEST_P(GemmF32, AppliesAlphaBetaBiasResidualAndActivationInOrder) {
  const int64_t m = 9, n = 21, k = 800;  // three depth slices: beta first, epilogue last
  const auto a = random_floats(static_cast<size_t>(m * k), 11);
  const auto b = random_floats(static_cast<size_t>(k * n), 12);
  const auto c0 = random_floats(static_cast<size_t>(m * n), 13);
  const auto bias = random_floats(static_cast<size_t>(m * n), 14);
  const auto residual = random_floats(static_cast<size_t>(m * (n + 2)), 15);  // leading dimension n + 2
  const Naive ref{m, n, k, a, false, b, false};
  struct BiasForm {
    int64_t rs, cs;
  };
  const BiasForm bias_forms[] = {{0, 0}, {1, 0}, {0, 1}, {n, 1}};
  const std::vector<GemmEpilogue> acts = every_activation();
  for (float beta : {0.0f, 1.0f, -0.5f}) {
    for (int bf = -1; bf < 4; ++bf) {
      for (bool with_residual : {false, true}) {
        for (const GemmEpilogue& act : acts) {
          std::vector<float> c = c0;
          GemmArgs g = row_major(m, n, k, a.data(), b.data(), c.data());
          g.alpha = 0.75f;
          g.beta = beta;
          g.epilogue = act;
          if (bf >= 0) {
            g.epilogue.bias = bias.data();
            g.epilogue.bias_rs = bias_forms[bf].rs;
            g.epilogue.bias_cs = bias_forms[bf].cs;
            g.epilogue.bias_scale = 2.0f;
          }
          if (with_residual) {
            g.epilogue.residual = residual.data();
            g.epilogue.residual_ld = n + 2;
          }
          Workspace ws(gemm_f32_workspace(g, 1));
          gemm_f32(g, nullptr, ws.p.get());
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double v = 0.75 * ref.product(i, j) + (beta == 0.0f ? 0.0 : beta * double(c0[i * n + j]));
              if (bf >= 0) v += 2.0 * bias[i * bias_forms[bf].rs + j * bias_forms[bf].cs];
              if (with_residual) v += residual[i * (n + 2) + j];
              v = activate(v, g.epilogue);
              ASSERT_NEAR(c[i * n + j], v, 1e-4 * std::max(1.0, std::fabs(v)))
                  << "beta " << beta << " bias form " << bf << " residual " << with_residual << " act "
                  << int(act.act) << " at (" << i << ", " << j << ")";
            }
        }
      }
    }
  }
}

// Few columns against a prepacked A (the narrow path: squeeze-excitation 1x1 convs, GEMV):
// beta over an existing C, per-row bias, residual and every activation, several depth slices.
TEST_P(GemmF32, NarrowProductsWithPrepackedAApplyTheWholeEpilogue) {
  const int64_t m = 21, k = 700;
  for (const GemmEpilogue& act : every_activation()) {
    for (int64_t n = 1; n <= 4; ++n) {
      const auto a = random_floats(static_cast<size_t>(m * k), 31);
      const auto b = random_floats(static_cast<size_t>(k * n), 32);
      const auto c0 = random_floats(static_cast<size_t>(m * n), 33);
      const auto bias = random_floats(static_cast<size_t>(m), 34);
      const auto residual = random_floats(static_cast<size_t>(m * n), 35);
      const PackedMatrix pa = PackedMatrix::pack(PackedMatrix::Side::A, m, k, a.data(), k, false, be());
      std::vector<float> c = c0;
      GemmArgs g;
      g.m = m;
      g.n = n;
      g.k = k;
      g.a = {.packed = &pa};
      g.b = {.data = b.data(), .ld = n};
      g.c = c.data();
      g.ldc = n;
      g.alpha = 1.5f;
      g.beta = 0.5f;
      g.epilogue = act;
      g.epilogue.bias = bias.data();
      g.epilogue.bias_rs = 1;
      g.epilogue.residual = residual.data();
      g.epilogue.residual_ld = n;
      Workspace ws(gemm_f32_workspace(g, 1));
      gemm_f32(g, nullptr, ws.p.get());
      const Naive ref{m, n, k, a, false, b, false};
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          const double want =
              activate(1.5 * ref.product(i, j) + 0.5 * c0[i * n + j] + bias[i] + residual[i * n + j], act);
          ASSERT_NEAR(c[i * n + j], want, 1e-4 * std::max(1.0, std::fabs(want)))
              << "n=" << n << " act " << int(act.act) << " at (" << i << ", " << j << ")";
        }
    }
  }
}

// Every activation on C extents around both register tiles (4x24, 8x32): whole tiles, one row
// or column more or less, partial heights; one depth slice without C, and several with beta
// over an existing C (AVX-512 slices are 256 deep), each bias layout and the residual. A is
// scaled so that activation inputs spread over about [-15, 15].
TEST_P(GemmF32, EveryActivationAtTileEdges) {
  uint32_t seed = 100;
  for (int64_t m : {1, 4, 7, 8, 9, 16, 17}) {
    for (int64_t n : {1, 8, 23, 24, 25, 31, 32, 33, 64, 65}) {
      for (int64_t k : {5, 300}) {
        auto a = random_floats(static_cast<size_t>(m * k), seed++);
        for (float& v : a) v *= k == 5 ? 8.0f : 1.5f;
        const auto b = random_floats(static_cast<size_t>(k * n), seed++);
        const auto c0 = random_floats(static_cast<size_t>(m * n), seed++);
        const auto bias = random_floats(static_cast<size_t>(m * n), seed++);
        const auto residual = random_floats(static_cast<size_t>(m * n), seed++);
        const Naive ref{m, n, k, a, false, b, false};
        const bool deep = k > 256;
        const float beta = deep ? -0.5f : 0.0f;
        for (const GemmEpilogue& act : every_activation()) {
          std::vector<float> c = c0;
          GemmArgs g = row_major(m, n, k, a.data(), b.data(), c.data());
          g.beta = beta;
          g.epilogue = act;
          g.epilogue.bias = bias.data();
          g.epilogue.bias_rs = deep ? 0 : 1;  // a row vector, or one value per row
          g.epilogue.bias_cs = deep ? 1 : 0;
          if (deep) {
            g.epilogue.residual = residual.data();
            g.epilogue.residual_ld = n;
          }
          Workspace ws(gemm_f32_workspace(g, 1));
          gemm_f32(g, nullptr, ws.p.get());
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double v = ref.product(i, j) + (deep ? beta * double(c0[i * n + j]) + bias[j] + residual[i * n + j]
                                                   : double(bias[i]));
              v = activate(v, act);
              ASSERT_NEAR(c[i * n + j], v, 1e-4 * std::max(1.0, std::fabs(v)))
                  << "m=" << m << " n=" << n << " k=" << k << " act " << int(act.act) << " at (" << i << ", " << j
                  << ")";
            }
        }
      }
    }
  }
}

// Values the activations must take through unchanged in form: zeros of both signs, tiny and
// huge magnitudes, the ends of exp's range (about +-87.3, where the approximation clamps its
// argument) and NaN, which every activation propagates as in the reference kernels and ONNX
// (HardSigmoid too: max(0, min(1, NaN)) is NaN in onnxruntime and the ONNX reference). C =
// ones(m x 1) * values(1 x n) holds the values exactly; they run through whole and partial
// tiles and, with A prepacked and at most 4 columns, through the narrow path.
TEST_P(GemmF32, ActivationsOfEdgeValuesAndNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> values = {0.0f,   -0.0f,  1e-30f, -1e-30f, 0.5f,   -0.5f,   2.9f,  -2.9f,  3.0f,   -3.0f,
                                     6.0f,   -6.0f,  9.0f,   -9.0f,   20.0f,  -20.0f,  40.0f, -40.0f, 87.0f,  -87.0f,
                                     88.5f,  -88.5f, 89.0f,  -89.0f,  100.f,  -100.f,  1e4f,  -1e4f,  1e30f,  -1e30f,
                                     nan,    1.0f,   nan,    -1.0f,   nan,    -nan};
  const int64_t m = 9;
  const std::vector<float> ones(static_cast<size_t>(m), 1.0f);
  const PackedMatrix pa = PackedMatrix::pack(PackedMatrix::Side::A, m, 1, ones.data(), 1, false, be());
  for (const GemmEpilogue& act : every_activation()) {
    // All values in one GEMM (tiles), then four at a time against the prepacked A (narrow).
    for (const bool narrow : {false, true}) {
      const size_t step = narrow ? 4 : values.size();
      for (size_t first = 0; first < values.size(); first += step) {
        const int64_t n = static_cast<int64_t>(std::min(step, values.size() - first));
        std::vector<float> c(static_cast<size_t>(m * n), 7.0f);
        GemmArgs g;
        g.backend = &be();
        g.m = m;
        g.n = n;
        g.k = 1;
        g.a = narrow ? GemmOperand{.packed = &pa} : GemmOperand{.data = ones.data(), .ld = 1};
        g.b = {.data = values.data() + first, .ld = n};
        g.c = c.data();
        g.ldc = n;
        g.epilogue = act;
        Workspace ws(gemm_f32_workspace(g, 1));
        gemm_f32(g, nullptr, ws.p.get());
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            const float x = values[first + static_cast<size_t>(j)], got = c[i * n + j];
            const std::string where = "act " + std::to_string(int(act.act)) + " of " + std::to_string(x) +
                                      (narrow ? " (narrow)" : " (tile)") + " row " + std::to_string(i);
            if (std::isnan(x)) {
              EXPECT_TRUE(std::isnan(got)) << where << ": got " << got;
              continue;
            }
            const double want = activate(x, act);
            EXPECT_NEAR(got, want, 1e-5 * std::max(1.0, std::fabs(want))) << where;
          }
      }
    }
  }
}

TEST_P(GemmF32, ThreadSplitGivesBitwiseIdenticalResults) {
  ThreadPool pool(2);
  const int64_t shapes[][3] = {{200, 40, 300}, {12, 500, 400}, {1, 4000, 300}};
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const auto a = random_floats(static_cast<size_t>(m * k), 21);
    const auto b = random_floats(static_cast<size_t>(k * n), 22);
    std::vector<float> serial(static_cast<size_t>(m * n)), threaded(static_cast<size_t>(m * n));
    GemmArgs g = row_major(m, n, k, a.data(), b.data(), nullptr);
    Workspace ws(gemm_f32_workspace(g, 2));
    g.c = serial.data();
    gemm_f32(g, nullptr, ws.p.get());
    g.c = threaded.data();
    gemm_f32(g, &pool, ws.p.get());
    EXPECT_EQ(serial, threaded) << "m=" << m << " n=" << n << " k=" << k;
  }
}

TEST_P(GemmF32, EmptyDepthScalesCAndAppliesEpilogue) {
  std::vector<float> c = {1, -2, 3, -4, 5, -6};
  const std::vector<float> bias = {10, 20};
  GemmArgs g;
  g.backend = &be();
  g.m = 2;
  g.n = 3;
  g.k = 0;
  g.c = c.data();
  g.ldc = 3;
  g.beta = 2.0f;
  g.epilogue.bias = bias.data();
  g.epilogue.bias_rs = 1;
  g.epilogue.act = Activation::Relu;
  Workspace ws(gemm_f32_workspace(g, 1));
  gemm_f32(g, nullptr, ws.p.get());
  EXPECT_EQ(c, (std::vector<float>{12, 6, 16, 12, 30, 8}));
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
