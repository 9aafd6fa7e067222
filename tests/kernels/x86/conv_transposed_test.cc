// SPDX-License-Identifier: Apache-2.0
// The transposed convolution (src/kernels/x86/conv_transposed.h), on AVX-512 and AVX2: the store pass against a
// scalar computation on sub-ranges with tails in both directions, never touching values
// outside its range; and x86 Conv kernels created for one plan's shapes (which picks the
// weight layout) running other shapes, as a kernel shared by the plans of several batch
// sizes or image sizes does, against the reference kernel. Shapes, epilogues and threads
// in the plan's own shapes are covered by the registry-wide consistency test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "core/attribute.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/nn_test_util.h"
#include "kernels/x86/conv_transposed.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::kernels::x86 {
namespace {

using nn_test::random_floats;
using nn_test::random_tensor;

using StoreFn = void (*)(const float*, int64_t, int64_t, int64_t, int64_t, int64_t, const GemmEpilogue&, float*,
                        int64_t);

void check_store(StoreFn store) {
  struct Range {
    int64_t positions, channels, j0, j1, c0, c1;
  };
  const Range ranges[] = {{49, 64, 0, 49, 0, 64},   {196, 40, 0, 196, 0, 40}, {17, 33, 3, 17, 1, 30},
                          {16, 16, 0, 16, 0, 16},   {5, 70, 0, 5, 32, 70},    {40, 9, 8, 24, 0, 9},
                          {1, 1, 0, 1, 0, 1},       {33, 100, 16, 33, 16, 48}};
  uint32_t seed = 1;
  for (const Range& r : ranges) {
    for (bool with_residual : {false, true}) {
      const int64_t ldct = r.channels + 7;  // any leading dimension
      const std::vector<float> ct = random_floats(r.positions * ldct, seed++);
      const std::vector<float> bias = random_floats(r.channels, seed++);
      const std::vector<float> residual = random_floats(r.positions * r.channels, seed++);
      GemmEpilogue e;
      e.bias = bias.data();
      e.residual = with_residual ? residual.data() : nullptr;
      e.residual_ld = r.positions;
      e.act = Activation::Relu;
      const float poison = -12345.0f;
      std::vector<float> y(static_cast<size_t>(r.positions * r.channels), poison);
      store(ct.data(), ldct, r.j0, r.j1, r.c0, r.c1, e, y.data(), r.positions);
      for (int64_t c = 0; c < r.channels; ++c)
        for (int64_t j = 0; j < r.positions; ++j) {
          const float got = y[static_cast<size_t>(c * r.positions + j)];
          if (c < r.c0 || c >= r.c1 || j < r.j0 || j >= r.j1) {
            ASSERT_EQ(got, poison) << "written outside the range at channel " << c << ", position " << j;
            continue;
          }
          float want = ct[static_cast<size_t>(j * ldct + c)] + bias[static_cast<size_t>(c)];
          if (with_residual) want += residual[static_cast<size_t>(c * r.positions + j)];
          want = std::max(want, 0.0f);
          ASSERT_NEAR(got, want, 1e-6f) << "channel " << c << ", position " << j << " of " << r.positions << "x"
                                        << r.channels;
        }
    }
  }
}

TEST(ConvTransposedStore, MatchesScalarTransposeOnSubRangesAndWritesNothingElse) {
  if (!isa_available(Isa::Avx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  check_store(conv_f32_store_transposed_avx512);
}

TEST(ConvTransposedStore, Avx2MatchesScalarTransposeOnSubRangesAndWritesNothingElse) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2";
  check_store(conv_f32_store_transposed_avx2);
}

// Runs kernel `id` created with constant W and B and the shape hint `plan_x` on input x.
Tensor run_conv(std::string_view id, const AttrMap& attrs, const Shape& plan_x, const Tensor& x, const Tensor& w,
                const Tensor& b, const Shape& y_shape, ThreadPool* pool) {
  const KernelDef* def = KernelRegistry::global().find_by_id(id);
  EXPECT_NE(def, nullptr) << id;
  const std::vector<DType> dtypes(3, DType::F32);
  const std::vector<const Tensor*> constants{nullptr, &w, &b};
  const std::vector<Shape> shapes{plan_x, w.shape(), b.shape()};
  auto kernel = make_kernel(*def, KernelInit{attrs, 11, dtypes, constants, shapes});
  EXPECT_TRUE(kernel.has_value());
  Tensor y = Tensor::empty(DType::F32, y_shape);
  std::fill(y.data_as<float>(), y.data_as<float>() + y.numel(), std::nanf(""));
  const std::vector<const Tensor*> ins{&x, &w, &b};
  const std::vector<Tensor*> outs{&y};
  Scratch scratch;
  KernelContext ctx(attrs, 11, ins, outs, pool, &scratch);
  EXPECT_TRUE((*kernel)->run(ctx).is_ok());
  return y;
}

void check_plans_and_runs(std::string_view id) {
  Attribute pads;
  pads.kind = Attribute::Kind::Ints;
  pads.ints = {1, 1, 1, 1};
  AttrMap attrs;
  attrs.set("pads", pads);
  // 300 output channels: beyond Winograd's range, so every run takes a GEMM formulation.
  const int64_t c = 96, m = 300;
  const Tensor w = random_tensor({m, c, 3, 3}, 7), b = random_tensor({m}, 8);
  // {plan's input, run's input}: a 7x7 plan (transposed layout) running batch 3 and a 30x30
  // image, a 30x30 plan (plain layout) running a 7x7 image, and a 2x7 plan (transposed: 14
  // positions, a partial group of 8 rows on AVX2's 4-row panels).
  const Shape cases[][2] = {{{1, c, 7, 7}, {3, c, 7, 7}},
                            {{1, c, 7, 7}, {1, c, 30, 30}},
                            {{1, c, 30, 30}, {2, c, 7, 7}},
                            {{1, c, 2, 7}, {1, c, 2, 7}}};
  ThreadPool pool(2);
  uint32_t seed = 20;
  for (const auto& sc : cases) {
    const Shape& run = sc[1];
    const Tensor x = random_tensor(run, seed++);
    const Shape y_shape{run[0], m, run[2], run[3]};
    const Tensor want = run_conv("ref/conv", attrs, sc[0], x, w, b, y_shape, nullptr);
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool}) {
      const Tensor got = run_conv(id, attrs, sc[0], x, w, b, y_shape, p);
      double max_ref = 0;
      for (int64_t i = 0; i < want.numel(); ++i)
        max_ref = std::max(max_ref, std::fabs(static_cast<double>(want.data_as<float>()[i])));
      const double tol = 2e-6 * std::sqrt(static_cast<double>(c * 9)) * std::max(1.0, max_ref);
      for (int64_t i = 0; i < want.numel(); ++i)
        ASSERT_NEAR(got.data_as<float>()[i], want.data_as<float>()[i], tol)
            << id << " plan " << sc[0].str() << ", run " << run.str() << (p ? ", 2 threads" : "") << ", element " << i;
    }
  }
}

TEST(ConvTransposed, KernelsMadeForOnePlansShapesRunOtherShapes) {
  if (!isa_available(Isa::Avx512)) GTEST_SKIP() << "this CPU lacks AVX-512";
  check_plans_and_runs("x86/conv_f32_8x32");
}

TEST(ConvTransposed, Avx2KernelsMadeForOnePlansShapesRunOtherShapes) {
  if (!isa_available(Isa::Avx2)) GTEST_SKIP() << "this CPU lacks AVX2";
  check_plans_and_runs("x86/conv_f32_4x24");
}

}  // namespace
}  // namespace ignis::kernels::x86
#endif  // IGNIS_HAVE_X86_KERNELS
