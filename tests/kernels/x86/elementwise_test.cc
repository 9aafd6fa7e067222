// SPDX-License-Identifier: Apache-2.0
// The x86 elementwise kernels (src/kernels/x86/elementwise_avx2.cc) against the reference
// kernels beyond the [-1, 1] inputs of the registry-wide consistency test: the whole float
// range of each unary function (overflow, underflow, tiny arguments), NaN, infinities and
// signed zeros, and the arithmetic ops on special values in each broadcast form.
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

Attribute kernel_attr_float(float v) {
  Attribute a;
  a.kind = Attribute::Kind::Float;
  a.f = v;
  return a;
}

// Runs `call` with kernel `id` and with the reference kernel: NaN where the reference has
// NaN, otherwise |got - ref| <= rtol * |ref| + atol (infinities must match exactly).
void expect_matches_reference(const OpCall& call, std::string_view id, double rtol, double atol) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  ASSERT_NE(def, nullptr) << id;
  if (!kernels::isa_available(def->isa)) GTEST_SKIP() << id << ": this CPU lacks the kernel's ISA";
  auto want = run_op_threads(call, 1);
  ASSERT_TRUE(want.has_value()) << want.error().to_string();
  auto got = run_op_with(call, [&](const std::vector<DType>&) { return def; }, std::string(id), 1);
  ASSERT_TRUE(got.has_value()) << got.error().to_string();
  const std::vector<float> g = values_of<float>((*got)[0]), w = values_of<float>((*want)[0]);
  ASSERT_EQ(g.size(), w.size());
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    bool ok;
    if (std::isnan(w[i])) ok = std::isnan(g[i]);
    else if (std::isinf(w[i]) || std::isinf(g[i])) ok = g[i] == w[i];
    else ok = std::fabs(double(g[i]) - double(w[i])) <= rtol * std::fabs(double(w[i])) + atol;
    if (!ok) {
      ++bad;
      ADD_FAILURE() << id << ": element " << i << " got " << g[i] << ", reference " << w[i];
    }
  }
}

// lo..hi in `steps` even steps, then NaN, +-inf, +-0 and a few tiny magnitudes; the length
// is not a multiple of 8, so the masked tail sees special values too.
std::vector<float> sweep(float lo, float hi, int steps) {
  std::vector<float> v;
  for (int i = 0; i <= steps; ++i) v.push_back(lo + (hi - lo) * static_cast<float>(i) / static_cast<float>(steps));
  for (float x : {kNaN, kInf, -kInf, 0.0f, -0.0f, 1e-30f, -1e-30f, 3e-8f, -2e-5f, 1e-3f, 0.4999f, 0.5f, 0.5001f})
    v.push_back(x);
  return v;
}

OpCall unary_call(const std::string& op, const std::vector<float>& v) {
  OpCall call;
  call.op_type = op;
  call.opset = 13;
  call.inputs = {make_tensor_f32({static_cast<int64_t>(v.size())}, v)};
  return call;
}

TEST(ElementwiseX86, ExpOverTheFloatRange) {
  // Below e^-87.3 results are subnormal: compared with an absolute bound there.
  expect_matches_reference(unary_call("Exp", sweep(-110.0f, 95.0f, 4099)), "x86/exp_f32_avx2", 1e-6, 1e-38);
  expect_matches_reference(unary_call("Exp", sweep(88.0f, 89.0f, 400)), "x86/exp_f32_avx2", 1e-6, 0.0);
}

TEST(ElementwiseX86, SigmoidTanhErfOverTheFloatRange) {
  expect_matches_reference(unary_call("Sigmoid", sweep(-120.0f, 120.0f, 4001)), "x86/sigmoid_f32_avx2", 1e-6, 1e-37);
  // tanh of tiny arguments is the argument itself: relative accuracy matters there.
  expect_matches_reference(unary_call("Tanh", sweep(-25.0f, 25.0f, 4001)), "x86/tanh_f32_avx2", 4e-7, 0.0);
  expect_matches_reference(unary_call("Tanh", sweep(-1.0f, 1.0f, 3001)), "x86/tanh_f32_avx2", 4e-7, 0.0);
  // A series below 0.75 in magnitude (relative accuracy), a rational approximation above.
  expect_matches_reference(unary_call("Erf", sweep(-0.7f, 0.7f, 1001)), "x86/erf_f32_avx2", 4e-7, 0.0);
  expect_matches_reference(unary_call("Erf", sweep(-7.0f, 7.0f, 4001)), "x86/erf_f32_avx2", 0.0, 5e-7);
}

TEST(ElementwiseX86, ReluKeepsNaNAndNegativeZero) {
  const OpCall call = unary_call("Relu", sweep(-3.0f, 3.0f, 50));
  expect_matches_reference(call, "x86/relu_f32_avx2", 0.0, 0.0);
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id("x86/relu_f32_avx2");
  ASSERT_NE(def, nullptr);
  if (!kernels::isa_available(def->isa)) GTEST_SKIP();
  auto got = run_op_with(unary_call("Relu", {-0.0f, -2.0f}), [&](const std::vector<DType>&) { return def; }, "relu");
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(std::signbit(values_of<float>((*got)[0])[0]));
}

TEST(ElementwiseX86, ArithmeticOnSpecialValuesInEveryBroadcastForm) {
  const std::vector<float> specials = {kNaN, kInf, -kInf, 0.0f, -0.0f, 1.5f, -2.0f, 3e38f, 1e-40f};
  const int64_t n = static_cast<int64_t>(specials.size());
  // Every pair of specials in the same-shape form; each special as the repeated operand.
  std::vector<float> a, b;
  for (float x : specials)
    for (float y : specials) {
      a.push_back(x);
      b.push_back(y);
    }
  const Tensor ta = make_tensor_f32({n, n}, a), tb = make_tensor_f32({n, n}, b);
  const Tensor column = make_tensor_f32({n, 1}, specials), row = make_tensor_f32({n}, specials);
  const Tensor channel = make_tensor_f32({1, n, 1, 1}, specials);
  const Tensor planes = make_tensor_f32({1, n, 3, 3}, [&] {
    std::vector<float> v;
    for (int64_t i = 0; i < 9; ++i) v.insert(v.end(), specials.begin(), specials.end());
    return v;
  }());
  const std::pair<Tensor, Tensor> forms[] = {
      {ta, tb}, {ta, row}, {row, ta}, {column, ta}, {ta, column}, {channel, planes}, {planes, channel},
      {make_tensor_f32({}, {kNaN}), ta}, {ta, make_tensor_f32({1}, {-0.0f})}};
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    const std::string id = std::string("x86/") + static_cast<char>(std::tolower(op[0])) + (op + 1) + "_f32_avx2";
    for (const auto& [x, y] : forms) {
      OpCall call;
  call.op_type = op;
  call.opset = 14;
      call.inputs = {x, y};
      expect_matches_reference(call, id, 0.0, 0.0);
    }
  }
}

TEST(ElementwiseX86, LogOverTheFloatRange) {
  // Relative accuracy everywhere, subnormal inputs and the neighbourhood of 1 included.
  expect_matches_reference(unary_call("Log", sweep(0.0f, 1000.0f, 4001)), "x86/log_f32_avx2", 3e-7, 0.0);
  expect_matches_reference(unary_call("Log", sweep(0.99f, 1.01f, 4001)), "x86/log_f32_avx2", 3e-7, 0.0);
  std::vector<float> powers;
  for (int e = -149; e <= 127; ++e) powers.push_back(std::ldexp(1.37f, e));
  expect_matches_reference(unary_call("Log", powers), "x86/log_f32_avx2", 3e-7, 0.0);
  expect_matches_reference(unary_call("Log", sweep(-5.0f, 5.0f, 101)), "x86/log_f32_avx2", 3e-7, 0.0);
}

TEST(ElementwiseX86, ExactUnaryOpsOnSpecialValues) {
  const std::vector<float> v = sweep(-3e38f, 3e38f, 40);
  for (const char* op : {"Sqrt", "Abs", "Neg", "Reciprocal"}) {
    const std::string id = std::string("x86/") + static_cast<char>(std::tolower(op[0])) + (op + 1) + "_f32_avx2";
    expect_matches_reference(unary_call(op, v), id, 0.0, 0.0);
    expect_matches_reference(unary_call(op, sweep(-2.0f, 2.0f, 77)), id, 0.0, 0.0);
  }
  OpCall leaky = unary_call("LeakyRelu", sweep(-2.0f, 2.0f, 77));
  leaky.attrs.set("alpha", kernel_attr_float(0.3f));
  expect_matches_reference(leaky, "x86/leakyrelu_f32_avx2", 0.0, 0.0);
  for (const auto& [lo, hi] : std::vector<std::pair<float, float>>{{-1.0f, 1.0f}, {0.0f, kInf}, {1.0f, -1.0f}}) {
    OpCall clip = unary_call("Clip", sweep(-2.0f, 2.0f, 77));
    clip.inputs.push_back(make_tensor_f32({}, {lo}));
    clip.inputs.push_back(make_tensor_f32({}, {hi}));
    expect_matches_reference(clip, "x86/clip_f32_avx2", 0.0, 0.0);
  }
}

TEST(ElementwiseX86, PowByScalarsMatchesDoublePow) {
  // The fast exponents give the reference's double pow rounded once, so exactly its values.
  for (float e : {1.0f, 2.0f, 3.0f, -1.0f, -2.0f, 0.5f, -0.5f, 2.5f}) {
    for (const std::vector<float>& v : {sweep(-40.0f, 40.0f, 301), sweep(-3e38f, 3e38f, 40)}) {
      OpCall call = unary_call("Pow", v);
      call.opset = 15;
      call.inputs.push_back(make_tensor_f32({}, {e}));
      expect_matches_reference(call, "x86/pow_f32_avx2", 0.0, 0.0);
    }
  }
}

}  // namespace
}  // namespace ignis::nn_test
#endif  // IGNIS_HAVE_X86_KERNELS
