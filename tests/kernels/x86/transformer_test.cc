// SPDX-License-Identifier: Apache-2.0
// The x86 transformer kernels (nn_transformer.cc) against the reference kernels on what the
// registry-wide consistency test cannot express: edge values (padding masks of -10000 and
// -inf, fully masked rows, NaN and infinite scores, near one-hot softmax, rows far from zero
// relative to their spread, constant rows) and the optional outputs (SkipLayerNorm's Sum,
// LayerNormalization's Mean and InvStdDev). Random shapes and mask forms are covered by
// tests/kernels/cases/nn_transformer.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

#ifdef IGNIS_HAVE_X86_KERNELS
namespace ignis::nn_test {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Runs `call` on the kernel `id` and on `ref_id` (1 and 2 threads for `id`) and compares every
// output: NaN where the reference has NaN, else within rel * max(1, |ref|).
void expect_matches_reference(const OpCall& call, std::string_view id, std::string_view ref_id, double rel = 1e-5) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(id);
  ASSERT_NE(def, nullptr) << id;
  if (!kernels::isa_available(def->isa)) GTEST_SKIP() << id << ": this CPU lacks the kernel's ISA";
  const kernels::KernelDef* ref = kernels::KernelRegistry::global().find_by_id(ref_id);
  ASSERT_NE(ref, nullptr) << ref_id;
  auto want = testing::run_op_with(call, [&](const std::vector<DType>&) { return ref; }, std::string(ref_id));
  ASSERT_TRUE(want.has_value()) << want.error().to_string();
  for (int threads : {1, 2}) {
    auto got = testing::run_op_with(call, [&](const std::vector<DType>&) { return def; }, std::string(id), threads);
    ASSERT_TRUE(got.has_value()) << got.error().to_string();
    ASSERT_EQ(got->size(), want->size());
    for (size_t o = 0; o < got->size(); ++o) {
      const float* g = (*got)[o].data_as<float>();
      const float* w = (*want)[o].data_as<float>();
      for (int64_t i = 0; i < (*want)[o].numel(); ++i) {
        if (std::isnan(w[i])) {
          EXPECT_TRUE(std::isnan(g[i])) << id << " output " << o << " element " << i << ": got " << g[i]
                                        << ", reference NaN (" << threads << " threads)";
          continue;
        }
        const double tol = rel * std::max(1.0, std::fabs(static_cast<double>(w[i])));
        ASSERT_NEAR(g[i], w[i], tol) << id << " output " << o << " element " << i << " (" << threads << " threads)";
      }
    }
  }
}

OpCall attention_call(std::vector<Tensor> inputs, int64_t heads) {
  OpCall c;
  c.domain = "ai.ignis";
  c.op_type = "Attention";
  c.opset = 1;
  c.attrs.set("num_heads", attr_int(heads));
  c.inputs = std::move(inputs);
  return c;
}

TEST(X86Attention, PaddingMasksOfLargeNegativesAndInfinity) {
  const int64_t b = 2, s = 37, heads = 3, d = 8;
  std::vector<float> mask(static_cast<size_t>(b * s), 0.0f);
  for (int64_t j = s - 9; j < s; ++j) mask[j] = -10000.0f;     // batch 0: padded tail
  for (int64_t j = 0; j < s; j += 3) mask[s + j] = -kInf;      // batch 1: every third key hidden
  OpCall c = attention_call({random_tensor({b, s, heads * d}, 1), random_tensor({b, s, heads * d}, 2),
                             random_tensor({b, s, heads * d}, 3), make_tensor_f32({b, 1, 1, s}, mask)},
                            heads);
  expect_matches_reference(c, "x86/attention_f32_avx2", "ref/attention");
}

TEST(X86Attention, FullyMaskedRowsAreNaNAsInTheReference) {
  const int64_t s = 9;
  std::vector<float> mask(static_cast<size_t>(s * s), 0.0f);
  for (int64_t j = 0; j < s; ++j) mask[4 * s + j] = -kInf;  // query 4 sees no key
  OpCall c = attention_call({random_tensor({1, s, 16}, 4), random_tensor({1, s, 16}, 5), random_tensor({1, s, 16}, 6),
                             make_tensor_f32({1, 1, s, s}, mask)},
                            2);
  expect_matches_reference(c, "x86/attention_f32_avx2", "ref/attention");
}

TEST(X86Attention, LargeScoresGiveNearOneHotWeights) {
  OpCall c = attention_call({random_tensor({1, 20, 64}, 7, -30.0f, 30.0f), random_tensor({1, 23, 64}, 8),
                             random_tensor({1, 23, 64}, 9)},
                            4);
  // Scores reach ~10^3, so their float rounding moves the weights by ~1e-4 relative.
  expect_matches_reference(c, "x86/attention_f32_avx2", "ref/attention", 2e-3);
}

OpCall softmax_call(const Shape& shape, std::vector<float> values) {
  OpCall c;
  c.op_type = "Softmax";
  c.opset = 13;
  c.inputs = {make_tensor_f32(shape, values)};
  return c;
}

TEST(X86Softmax, InfinitiesNaNAndHugeValues) {
  const int64_t n = 19;
  std::vector<float> v = random_floats(7 * n, 10, -5.0f, 5.0f);
  v[0 * n + 3] = -kInf;                                           // one hidden entry
  for (int64_t j = 0; j < n; ++j) v[1 * n + j] = -kInf;           // all hidden: NaN
  v[2 * n + 5] = std::numeric_limits<float>::quiet_NaN();         // NaN row
  v[3 * n + 7] = kInf;                                            // +inf: NaN row
  for (int64_t j = 0; j < n; ++j) v[4 * n + j] = j % 2 ? 1e4f : -1e4f;  // exp underflow
  for (int64_t j = 0; j < n; ++j) v[5 * n + j] = 80.0f + 0.1f * j;     // large, close
  for (int64_t j = 0; j < n; ++j) v[6 * n + j] = -3.0f;                // constant
  expect_matches_reference(softmax_call({7, n}, v), "x86/softmax_f32_avx2", "ref/softmax");
}

TEST(X86LayerNorm, MeanAndInvStdDevOutputsOnOffsetAndConstantRows) {
  const int64_t n = 45;
  std::vector<float> x = random_floats(4 * n, 11);
  for (int64_t j = 0; j < n; ++j) x[n + j] = 1000.0f + 0.01f * x[n + j];  // far from zero
  for (int64_t j = 0; j < n; ++j) x[2 * n + j] = 7.5f;                     // constant
  OpCall c;
  c.op_type = "LayerNormalization";
  c.opset = 17;
  c.attrs.set("epsilon", attr_float(1e-12f));
  c.inputs = {make_tensor_f32({4, n}, x), random_tensor({n}, 12), random_tensor({n}, 13)};
  c.num_outputs = 3;
  expect_matches_reference(c, "x86/layernormalization_f32_avx2", "ref/layernormalization");
}

TEST(X86SkipLayerNorm, SumOutputAndOffsetRows) {
  const int64_t n = 100;
  std::vector<float> x = random_floats(3 * n, 14);
  for (int64_t j = 0; j < n; ++j) x[j] += 500.0f;
  OpCall c;
  c.domain = "ai.ignis";
  c.op_type = "SkipLayerNorm";
  c.opset = 1;
  c.attrs.set("epsilon", attr_float(1e-12f));
  c.inputs = {make_tensor_f32({3, n}, x), random_tensor({3, n}, 15), random_tensor({n}, 16),
              random_tensor({n}, 17), random_tensor({n}, 18)};
  c.num_outputs = 2;
  expect_matches_reference(c, "x86/skiplayernorm_f32_avx2", "ref/skiplayernorm");
}

}  // namespace
}  // namespace ignis::nn_test
#endif
