// SPDX-License-Identifier: Apache-2.0
// The x86 pooling kernels (src/kernels/x86/pool_avx2.cc) against the reference kernels on
// what the registry-wide consistency test does not feed them: NaN and infinities, including
// windows and planes that hold nothing but NaN, and infinities that meet in an average; and
// one kernel instance run on changing input shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::nn_test {
namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs `call` with the kernel `id` on `threads` threads and with the reference kernel, and
// expects equal outputs: the same NaN positions, equal infinities and other values within
// rtol * max(1, |reference|).
void expect_matches_reference(const OpCall& call, std::string_view id, double rtol) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  ASSERT_NE(def, nullptr) << id;
  if (!kernels::isa_available(def->isa)) GTEST_SKIP() << id << ": this CPU lacks the kernel's ISA";
  auto want = run_op_threads(call, 1);
  ASSERT_TRUE(want.has_value()) << want.error().to_string();
  for (int threads : {1, 2}) {
    auto got = run_op_with(call, [&](const std::vector<DType>&) { return def; }, std::string(id), threads);
    ASSERT_TRUE(got.has_value()) << got.error().to_string();
    const std::vector<float> g = values_of<float>((*got)[0]), w = values_of<float>((*want)[0]);
    ASSERT_EQ(g.size(), w.size());
    for (size_t i = 0; i < g.size(); ++i) {
      const double bound = rtol * std::max(1.0f, std::fabs(w[i]));
      const bool ok = std::isnan(w[i]) ? std::isnan(g[i]) : (g[i] == w[i] || std::fabs(g[i] - w[i]) <= bound);
      EXPECT_TRUE(ok) << id << " " << threads << " threads: element " << i << " got " << g[i] << ", reference "
                      << w[i];
    }
  }
}

// [1, 2, 9, 13] with NaN, +inf and -inf scattered, a 3x3 block of NaN in channel 0 and a
// 2x4 block of -inf in channel 1.
Tensor special_input() {
  const Shape shape{1, 2, 9, 13};
  std::vector<float> v = random_floats(shape.numel(), 7);
  const float specials[] = {kNaN, kInf, -kInf};
  for (size_t i = 0; i < v.size(); i += 5) v[i] = specials[(i / 5) % 3];
  for (int64_t h = 2; h < 5; ++h)
    for (int64_t w = 4; w < 7; ++w) v[static_cast<size_t>(h * 13 + w)] = kNaN;
  for (int64_t h = 5; h < 7; ++h)
    for (int64_t w = 0; w < 4; ++w) v[static_cast<size_t>(117 + h * 13 + w)] = -kInf;
  return make_tensor_f32(shape, v);
}

struct Window {
  std::vector<int64_t> kernel, strides, pads;
  bool ceil_mode = false;
};

OpCall pool_call(const std::string& op, const Window& w) {
  OpCall call;
  call.op_type = op;
  call.opset = 19;
  call.inputs = {special_input()};
  call.attrs.set("kernel_shape", attr_ints(w.kernel));
  call.attrs.set("strides", attr_ints(w.strides));
  if (!w.pads.empty()) call.attrs.set("pads", attr_ints(w.pads));
  if (w.ceil_mode) call.attrs.set("ceil_mode", attr_int(1));
  return call;
}

const Window kWindows[] = {
    {{3, 3}, {1, 1}, {1, 1, 1, 1}},
    {{2, 2}, {2, 2}, {}},
    {{3, 3}, {2, 2}, {1, 1, 1, 1}, true},
    {{3, 3}, {3, 3}, {0, 1, 2, 0}, true},
    {{1, 1}, {1, 1}, {}},
};

TEST(PoolX86, MaxPoolIgnoresNaNUnlessTheWholeWindowIsNaN) {
  for (const Window& w : kWindows) expect_matches_reference(pool_call("MaxPool", w), "x86/maxpool_f32_avx2", 0.0);
}

TEST(PoolX86, AveragePoolPropagatesInfinitiesAndNaN) {
  for (const Window& w : kWindows) {
    OpCall call = pool_call("AveragePool", w);
    expect_matches_reference(call, "x86/averagepool_f32_avx2", 1e-6);
    call.attrs.set("count_include_pad", attr_int(1));
    expect_matches_reference(call, "x86/averagepool_f32_avx2", 1e-6);
  }
}

// One plane per row of `planes`, each of `size` values.
Tensor planes_tensor(const std::vector<std::vector<float>>& planes) {
  std::vector<float> v;
  for (const auto& p : planes) v.insert(v.end(), p.begin(), p.end());
  return make_tensor_f32({1, static_cast<int64_t>(planes.size()), 1, static_cast<int64_t>(planes[0].size())}, v);
}

TEST(PoolX86, GlobalPoolsOnSpecialValues) {
  for (int64_t size : {1, 7, 8, 40, 77}) {
    std::vector<std::vector<float>> planes;
    const std::vector<float> base = random_floats(size, static_cast<uint32_t>(size));
    planes.push_back(std::vector<float>(static_cast<size_t>(size), kNaN));    // all NaN
    planes.push_back(std::vector<float>(static_cast<size_t>(size), -kInf));   // all -inf
    auto with = [&](std::vector<std::pair<int64_t, float>> sets) {
      std::vector<float> p = base;
      for (auto [i, x] : sets) p[static_cast<size_t>(i % size)] = x;
      planes.push_back(p);
    };
    with({{0, kNaN}});
    with({{size - 1, kNaN}});
    with({{size / 2, kInf}});
    with({{0, kInf}, {size - 1, -kInf}});
    with({{1, kNaN}, {size / 3, -kInf}});
    std::vector<float> mostly_nan(static_cast<size_t>(size), kNaN);
    mostly_nan[static_cast<size_t>(size / 2)] = -3.0f;
    planes.push_back(mostly_nan);
    OpCall call;
  call.op_type = "GlobalMaxPool";
  call.opset = 1;
    call.inputs = {planes_tensor(planes)};
    expect_matches_reference(call, "x86/globalmaxpool_f32_avx2", 0.0);
    call.op_type = "GlobalAveragePool";
    expect_matches_reference(call, "x86/globalaveragepool_f32_avx2", 1e-5);
  }
}

// One kernel instance (as a plan keeps it) run on inputs whose spatial extents change between
// runs, as with dynamic image sizes: each run must use its own input's geometry.
TEST(PoolX86, OneKernelFollowsChangingInputShapes) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id("x86/maxpool_f32_avx2");
  ASSERT_NE(def, nullptr);
  if (!kernels::isa_available(def->isa)) GTEST_SKIP() << "this CPU lacks AVX2";
  AttrMap attrs;
  attrs.set("kernel_shape", attr_ints({2, 2}));
  attrs.set("strides", attr_ints({2, 2}));
  const std::vector<DType> dtypes{DType::F32};
  const std::vector<const Tensor*> constants{nullptr};
  kernels::KernelInit init{attrs, 12, dtypes, constants};
  auto kernel = kernels::make_kernel(*def, init);
  ASSERT_TRUE(kernel.has_value()) << kernel.error().to_string();
  const std::pair<Shape, Shape> shapes[] = {
      {{1, 2, 8, 8}, {1, 2, 4, 4}}, {{1, 2, 6, 19}, {1, 2, 3, 9}}, {{1, 2, 8, 8}, {1, 2, 4, 4}}};
  uint32_t seed = 1;
  for (const auto& [in, out] : shapes) {
    const Tensor x = random_tensor(in, seed++);
    OpCall call;
    call.op_type = "MaxPool";
    call.opset = 12;
    call.attrs = attrs;
    call.inputs = {x};
    const std::vector<float> want = values_of<float>(run1(call));
    Tensor y = Tensor::empty(DType::F32, out);
    const Tensor* inputs[] = {&x};
    Tensor* outputs[] = {&y};
    kernels::Scratch scratch;
    kernels::KernelContext ctx(attrs, 12, inputs, outputs, nullptr, &scratch);
    ASSERT_TRUE((*kernel)->run(ctx).is_ok());
    EXPECT_EQ(values_of<float>(y), want) << "input " << in.str();
  }
}

}  // namespace
}  // namespace ignis::nn_test
#endif  // IGNIS_HAVE_X86_KERNELS
