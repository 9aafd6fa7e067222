// SPDX-License-Identifier: Apache-2.0
// Convolutions of bfloat16 sessions (src/kernels/x86/nn_conv.cc on gemm_avx512bf16.cc): the
// bfloat16 GEMM with operands given by packing callbacks (the im2col packers write float32
// panels, converted to pairs in place), then the AVX-512 Conv and FusedConv kernels created
// with precision Bf16 on odd shapes (kernel sizes, strides, pads, dilations, groups; bias,
// residual and Relu) against a double-precision convolution of the bfloat16-rounded input
// and weights, and against the float32 kernel within bfloat16's tolerance.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/aligned_alloc.h"
#include "core/attribute.h"
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
using nn_test::random_tensor;

bool bf16_available() { return isa_enabled(Isa::Avx512) && cpu_features().avx512bf16; }

double rounded(float v) { return static_cast<double>(bf16_to_float(float_to_bf16(v))); }

// A plain row-major matrix packed by a GemmPackFn in the float32 AVX-512 layout (as the
// im2col packers do), for either side.
struct Plain {
  const float* x;
  int64_t ld;
};
void pack_plain_b(const void* ctx, const GemmBackend&, int64_t p0, int64_t kc, int64_t j0, int64_t nc, float* dst) {
  const auto& s = *static_cast<const Plain*>(ctx);
  gemm_backend_avx512().pack_b(s.x, s.ld, false, p0, kc, j0, nc, dst);
}
void pack_plain_a(const void* ctx, const GemmBackend&, int64_t p0, int64_t kc, int64_t i0, int64_t mc, float* dst) {
  const auto& s = *static_cast<const Plain*>(ctx);
  gemm_backend_avx512().pack_a(s.x, s.ld, false, i0, mc, p0, kc, dst);
}

TEST(ConvBf16, GemmTakesOperandsFromPackingCallbacks) {
  if (!bf16_available()) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  ThreadPool pool(2);
  uint32_t seed = 1;
  // Depths odd, even, one slice and over two slices (kc 512); rows and columns off the 8x32 tile.
  for (int64_t m : {3, 8, 21})
    for (int64_t n : {5, 32, 77})
      for (int64_t k : {1, 2, 3, 37, 512, 1031})
        for (int sides = 1; sides <= 3; ++sides) {  // 1: B by callback, 2: A, 3: both
          const std::vector<float> a = random_floats(m * k, seed++), b = random_floats(k * n, seed++);
          std::vector<float> c(static_cast<size_t>(m * n), std::nanf(""));
          const Plain pa{a.data(), k}, pb{b.data(), n};
          GemmArgs g;
          g.backend = &gemm_backend_avx512bf16();
          g.m = m;
          g.n = n;
          g.k = k;
          g.a = sides & 2 ? GemmOperand{.pack_fn = pack_plain_a, .pack_ctx = &pa} : GemmOperand{.data = a.data(), .ld = k};
          g.b = sides & 1 ? GemmOperand{.pack_fn = pack_plain_b, .pack_ctx = &pb} : GemmOperand{.data = b.data(), .ld = n};
          g.c = c.data();
          g.ldc = n;
          std::vector<float> ws(gemm_f32_workspace(g, 2) + 16);
          gemm_f32(g, seed % 2 ? &pool : nullptr, reinterpret_cast<float*>(align_up(reinterpret_cast<size_t>(ws.data()), 64)));
          for (int64_t i = 0; i < m; ++i)
            for (int64_t j = 0; j < n; ++j) {
              double want = 0.0, magnitude = 0.0;
              for (int64_t q = 0; q < k; ++q) {
                const double t = rounded(a[i * k + q]) * rounded(b[q * n + j]);
                want += t;
                magnitude += std::fabs(t);
              }
              ASSERT_NEAR(c[static_cast<size_t>(i * n + j)], want, 1e-6 * (magnitude + 1.0))
                  << "m=" << m << " n=" << n << " k=" << k << " sides=" << sides << " at " << i << "," << j;
            }
        }
}

struct ConvCase {
  int64_t n, c, h, w, m, kh, kw, stride, pad, dilation, group;
};

std::string describe(const ConvCase& s) {
  return std::to_string(s.n) + "x" + std::to_string(s.c) + "x" + std::to_string(s.h) + "x" + std::to_string(s.w) +
         " -> " + std::to_string(s.m) + " k" + std::to_string(s.kh) + "x" + std::to_string(s.kw) + " s" +
         std::to_string(s.stride) + " p" + std::to_string(s.pad) + " d" + std::to_string(s.dilation) + " g" +
         std::to_string(s.group);
}

AttrMap conv_attrs(const ConvCase& s, bool fused) {
  AttrMap attrs;
  attrs.set("strides", nn_test::attr_ints({s.stride, s.stride}));
  attrs.set("pads", nn_test::attr_ints({s.pad, s.pad, s.pad, s.pad}));
  attrs.set("dilations", nn_test::attr_ints({s.dilation, s.dilation}));
  attrs.set("group", nn_test::attr_int(s.group));
  if (fused) attrs.set("activation", nn_test::attr_string("Relu"));
  return attrs;
}

// Y (and the sum of |products| per output, for the tolerance) in double precision from
// X and W as given to `value`: bias, then residual and Relu when `fused`.
void reference_conv(const ConvCase& s, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& z, bool fused,
                    double (*value)(float), int64_t oh, int64_t ow, std::vector<double>& y, std::vector<double>& mag) {
  const int64_t cg = s.c / s.group, mg = s.m / s.group;
  y.assign(static_cast<size_t>(s.n * s.m * oh * ow), 0.0);
  mag.assign(y.size(), 0.0);
  const float* xv = x.data_as<float>();
  const float* wv = w.data_as<float>();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t m = 0; m < s.m; ++m)
      for (int64_t oy = 0; oy < oh; ++oy)
        for (int64_t ox = 0; ox < ow; ++ox) {
          double acc = 0.0, sum = 0.0;
          const int64_t grp = m / mg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ky = 0; ky < s.kh; ++ky)
              for (int64_t kx = 0; kx < s.kw; ++kx) {
                const int64_t iy = oy * s.stride - s.pad + ky * s.dilation, ix = ox * s.stride - s.pad + kx * s.dilation;
                if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
                const double t = value(xv[((n * s.c + grp * cg + c) * s.h + iy) * s.w + ix]) *
                                 value(wv[((m * cg + c) * s.kh + ky) * s.kw + kx]);
                acc += t;
                sum += std::fabs(t);
              }
          acc += b.data_as<float>()[m];
          const size_t at = static_cast<size_t>(((n * s.m + m) * oh + oy) * ow + ox);
          if (fused) acc = std::max(0.0, acc + z.data_as<float>()[at]);
          y[at] = acc;
          mag[at] = sum;
        }
}

// Runs kernel `id` made with constant W and B for the run's own shapes at `precision` with
// `tactic` (empty: the rules).
Tensor run_kernel(std::string_view id, const AttrMap& attrs, Precision precision, std::string_view tactic,
                  const Tensor& x, const Tensor& w, const Tensor& b, const Tensor* z, const Shape& y_shape,
                  ThreadPool* pool, bool w_constant = true) {
  const KernelDef* def = KernelRegistry::global().find_by_id(id);
  EXPECT_NE(def, nullptr) << id;
  const size_t inputs = z ? 4 : 3;
  const std::vector<DType> dtypes(inputs, DType::F32);
  std::vector<const Tensor*> constants{nullptr, w_constant ? &w : nullptr, &b};
  std::vector<Shape> shapes{x.shape(), w.shape(), b.shape()};
  std::vector<const Tensor*> ins{&x, &w, &b};
  if (z) {
    constants.push_back(nullptr);
    shapes.push_back(z->shape());
    ins.push_back(z);
  }
  const int64_t opset = z ? 1 : 11;  // ai.ignis FusedConv has version 1
  auto kernel = make_kernel(*def, KernelInit{attrs, opset, dtypes, constants, shapes, precision, tactic});
  Tensor y = Tensor::empty(DType::F32, y_shape);
  std::fill(y.data_as<float>(), y.data_as<float>() + y.numel(), std::nanf(""));
  if (!kernel) {
    ADD_FAILURE() << kernel.error().to_string();
    return y;
  }
  const std::vector<Tensor*> outs{&y};
  Scratch scratch;
  KernelContext ctx(attrs, opset, ins, outs, pool, &scratch);
  const Status st = (*kernel)->run(ctx);
  EXPECT_TRUE(st.is_ok()) << st.to_string();
  return y;
}

// The tactics of kernel `id` for this convolution at `precision`.
std::vector<std::string> tactics_of(std::string_view id, const AttrMap& attrs, Precision precision, const Tensor& x,
                                    const Tensor& w, const Tensor& b) {
  const KernelDef* def = KernelRegistry::global().find_by_id(id);
  const std::vector<DType> dtypes(3, DType::F32);
  const std::vector<const Tensor*> constants{nullptr, &w, &b};
  const std::vector<Shape> shapes{x.shape(), w.shape(), b.shape()};
  std::vector<std::string> out;
  for (std::string_view t : def->tactics(KernelInit{attrs, 11, dtypes, constants, shapes, precision})) out.emplace_back(t);
  return out;
}

TEST(ConvBf16, MatchesRoundedReferenceOnOddShapes) {
  if (!bf16_available()) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  const ConvCase cases[] = {
      {1, 13, 9, 11, 19, 3, 3, 1, 1, 1, 1},   // 3x3 unit stride (a Winograd shape)
      {2, 7, 15, 13, 33, 3, 3, 2, 1, 1, 1},   // 3x3 stride 2, batch 2
      {1, 37, 10, 9, 41, 1, 1, 1, 0, 1, 1},   // pointwise: B is X itself
      {1, 45, 11, 11, 30, 1, 1, 2, 0, 1, 1},  // strided 1x1: im2col
      {1, 6, 17, 19, 10, 5, 5, 2, 2, 1, 1},   // 5x5 stride 2
      {1, 33, 12, 14, 12, 3, 1, 1, 1, 2, 3},  // 3x1, dilation 2, 3 groups
      {1, 24, 8, 8, 18, 3, 3, 1, 1, 1, 6},    // grouped 3x3
      {1, 5, 23, 21, 17, 7, 7, 2, 3, 1, 1},   // 7x7 stride 2: depth 245
      {1, 130, 5, 5, 70, 3, 3, 1, 1, 1, 1},   // depth 1170: three depth slices
  };
  ThreadPool pool(2);
  uint32_t seed = 100;
  for (const ConvCase& s : cases) {
    const int64_t oh = (s.h + 2 * s.pad - s.dilation * (s.kh - 1) - 1) / s.stride + 1;
    const int64_t ow = (s.w + 2 * s.pad - s.dilation * (s.kw - 1) - 1) / s.stride + 1;
    const Shape y_shape{s.n, s.m, oh, ow};
    const Tensor x = random_tensor({s.n, s.c, s.h, s.w}, seed++);
    const Tensor w = random_tensor({s.m, s.c / s.group, s.kh, s.kw}, seed++);
    const Tensor b = random_tensor({s.m}, seed++);
    const Tensor z = random_tensor(y_shape, seed++);
    for (bool fused : {false, true}) {
      const AttrMap attrs = conv_attrs(s, fused);
      const std::string id = fused ? "x86/fusedconv_f32_8x32" : "x86/conv_f32_8x32";
      std::vector<double> want, mag, exact, exact_mag;
      reference_conv(s, x, w, b, z, fused, rounded, oh, ow, want, mag);
      reference_conv(s, x, w, b, z, fused, [](float v) { return static_cast<double>(v); }, oh, ow, exact, exact_mag);
      // The GEMM tactics of a bfloat16 session are named for it (and are what a tuner lists).
      const std::vector<std::string> tactics = tactics_of(id, attrs, Precision::Bf16, x, w, b);
      ASSERT_FALSE(tactics.empty()) << describe(s);
      EXPECT_EQ(tactics[0], "gemm_bf16") << describe(s);
      std::vector<std::string> runs;
      for (const std::string& t : tactics)
        if (t.ends_with("_bf16")) runs.push_back(t);
      for (const std::string& tactic : runs)
        for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
          const std::string where = describe(s) + (fused ? " fused" : "") + " tactic " + tactic + (p ? " 2 threads" : "");
          const Tensor got =
              run_kernel(id, attrs, Precision::Bf16, tactic, x, w, b, fused ? &z : nullptr, y_shape, p);
          double max_diff = 0.0;
          for (int64_t i = 0; i < got.numel(); ++i) {
            const double g = got.data_as<float>()[i];
            // float32 summation of exact bfloat16 products.
            ASSERT_NEAR(g, want[i], 1e-6 * (mag[i] + 1.0)) << where << ", element " << i;
            // Against float32 inputs: each product off by at most ~2^-8 of its size.
            ASSERT_NEAR(g, exact[i], 0.008 * exact_mag[i] + 1e-5) << where << ", element " << i;
            max_diff = std::max(max_diff, std::fabs(g - exact[i]));
          }
          // bfloat16 ran: visibly coarser than float32.
          EXPECT_GT(max_diff, 1e-4) << where;
        }
    }
  }
}

// Without a tactic (the built-in rules) a bfloat16 session's convolutions that take a GEMM
// run it in bfloat16, and a float32 session's stay float32, as do those of computed weights.
TEST(ConvBf16, RulesRunGemmsInBf16OnlyForBf16Sessions) {
  if (!bf16_available()) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  const ConvCase s{1, 40, 14, 14, 36, 1, 1, 1, 0, 1, 1};
  const Shape y_shape{1, 36, 14, 14};
  const Tensor x = random_tensor({1, 40, 14, 14}, 5), w = random_tensor({36, 40, 1, 1}, 6), b = random_tensor({36}, 7);
  std::vector<double> want, mag, exact, exact_mag;
  reference_conv(s, x, w, b, Tensor(), false, rounded, 14, 14, want, mag);
  reference_conv(s, x, w, b, Tensor(), false, [](float v) { return static_cast<double>(v); }, 14, 14, exact, exact_mag);
  const AttrMap attrs = conv_attrs(s, false);
  const Tensor low = run_kernel("x86/conv_f32_8x32", attrs, Precision::Bf16, {}, x, w, b, nullptr, y_shape, nullptr);
  const Tensor f32 = run_kernel("x86/conv_f32_8x32", attrs, Precision::F32, {}, x, w, b, nullptr, y_shape, nullptr);
  for (int64_t i = 0; i < low.numel(); ++i) {
    ASSERT_NEAR(low.data_as<float>()[i], want[i], 1e-6 * (mag[i] + 1.0)) << "bf16, element " << i;
    ASSERT_NEAR(f32.data_as<float>()[i], exact[i], 1e-6 * (exact_mag[i] + 1.0)) << "f32, element " << i;
  }
  EXPECT_EQ(tactics_of("x86/conv_f32_8x32", attrs, Precision::F32, x, w, b)[0], "gemm");
  // Weights that are not constant (computed by the graph) keep the products in float32.
  const Tensor computed =
      run_kernel("x86/conv_f32_8x32", attrs, Precision::Bf16, {}, x, w, b, nullptr, y_shape, nullptr, false);
  for (int64_t i = 0; i < computed.numel(); ++i)
    ASSERT_NEAR(computed.data_as<float>()[i], exact[i], 1e-6 * (exact_mag[i] + 1.0)) << "computed W, element " << i;
}

// Shallow convolutions (under 32 products per output, e.g. a 3x3 RGB stem) and those with at
// most 4 output positions (squeeze-excitation) stay float32 in bfloat16 sessions (nn_conv.cc,
// conv_backend).
TEST(ConvBf16, ImageStemsAndNarrowOutputsStayFloat32) {
  if (!bf16_available()) GTEST_SKIP() << "CPU lacks AVX512_BF16";
  const ConvCase cases[] = {{1, 3, 23, 21, 17, 3, 3, 2, 1, 1, 1}, {1, 31, 9, 9, 20, 1, 1, 1, 0, 1, 1},
                            {2, 40, 1, 1, 24, 1, 1, 1, 0, 1, 1}};
  uint32_t seed = 300;
  for (const ConvCase& s : cases) {
    const int64_t oh = (s.h + 2 * s.pad - s.kh) / s.stride + 1, ow = (s.w + 2 * s.pad - s.kw) / s.stride + 1;
    const Shape y_shape{s.n, s.m, oh, ow};
    const Tensor x = random_tensor({s.n, s.c, s.h, s.w}, seed++), w = random_tensor({s.m, s.c, s.kh, s.kw}, seed++);
    const Tensor b = random_tensor({s.m}, seed++);
    const AttrMap attrs = conv_attrs(s, false);
    std::vector<double> exact, mag;
    reference_conv(s, x, w, b, Tensor(), false, [](float v) { return static_cast<double>(v); }, oh, ow, exact, mag);
    EXPECT_EQ(tactics_of("x86/conv_f32_8x32", attrs, Precision::Bf16, x, w, b)[0], "gemm") << describe(s);
    const Tensor got = run_kernel("x86/conv_f32_8x32", attrs, Precision::Bf16, {}, x, w, b, nullptr, y_shape, nullptr);
    for (int64_t i = 0; i < got.numel(); ++i)
      ASSERT_NEAR(got.data_as<float>()[i], exact[i], 1e-6 * (mag[i] + 1.0)) << describe(s) << ", element " << i;
  }
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
