// SPDX-License-Identifier: Apache-2.0
// SessionOptions::precision: with Bf16, MatMul and Gemm with constant weights compute with both
// operands rounded to bfloat16 (checked against a double loop over the rounded operands)
// where the CPU has AVX512_BF16, and exactly as float32 elsewhere; ops without constant
// weights stay float32 either way.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/half.h"
#include "ignis/session.h"
#include "kernels/nn_test_util.h"
#include "kernels/registry.h"
#include "testing/model_builder.h"

namespace ignis {
namespace {

using testing::ModelBuilder;

constexpr int64_t kRows = 5, kDepth = 70, kCols = 40;

using nn_test::random_floats;

bool bf16_runs() {
  return kernels::isa_enabled(kernels::Isa::Avx512) && cpu_features().avx512bf16;
}

Tensor run(const ModelBuilder& b, Precision precision, const Tensor& x) {
  SessionOptions options;
  options.precision = precision;
  const std::string bytes = b.bytes();
  auto s = Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
  EXPECT_TRUE(s) << s.error().to_string();
  auto out = s->run({{"x", x}});
  EXPECT_TRUE(out) << out.error().to_string();
  return (*out)[0];
}

double bf16(float v) { return static_cast<double>(bf16_to_float(float_to_bf16(v))); }

TEST(Precision, Bf16RoundsMatMulAndGemmOperands) {
  const std::vector<float> w = random_floats(kDepth * kCols, 1);
  Tensor x = Tensor::empty(DType::F32, {kRows, kDepth});
  const std::vector<float> xv = random_floats(kRows * kDepth, 2);
  std::copy(xv.begin(), xv.end(), x.data_as<float>());
  for (bool gemm : {false, true}) {
    ModelBuilder b;
    b.input("x", DType::F32, {kRows, kDepth}).output("y", DType::F32);
    // Gemm takes W transposed ([N, K], transB = 1), as exporters write linear layers.
    std::vector<float> wt(w.size());
    for (int64_t k = 0; k < kDepth; ++k)
      for (int64_t n = 0; n < kCols; ++n) wt[n * kDepth + k] = w[k * kCols + n];
    if (gemm) b.initializer_f32("W", {kCols, kDepth}, wt).node("Gemm", {"x", "W"}, {"y"}, "g", {{"transB", 1}});
    else b.initializer_f32("W", {kDepth, kCols}, w).node("MatMul", {"x", "W"}, {"y"});
    const Tensor f32 = run(b, Precision::F32, x);
    const Tensor low = run(b, Precision::Bf16, x);
    double max_diff_from_f32 = 0.0;
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kCols; ++j) {
        double want = 0.0, magnitude = 0.0;
        for (int64_t k = 0; k < kDepth; ++k) {
          const double t = bf16_runs() ? bf16(xv[i * kDepth + k]) * bf16(w[k * kCols + j])
                                       : static_cast<double>(xv[i * kDepth + k]) * w[k * kCols + j];
          want += t;
          magnitude += std::fabs(t);
        }
        const float got = low.data_as<float>()[i * kCols + j];
        ASSERT_NEAR(got, want, 1e-6 * (magnitude + 1.0)) << (gemm ? "Gemm" : "MatMul") << " at " << i << "," << j;
        max_diff_from_f32 = std::max(max_diff_from_f32, std::fabs(static_cast<double>(got) - f32.data_as<float>()[i * kCols + j]));
      }
    // bfloat16 is visibly coarser than float32 where it runs, and identical where it does not.
    if (bf16_runs()) EXPECT_GT(max_diff_from_f32, 1e-4);
    else EXPECT_EQ(max_diff_from_f32, 0.0);
  }
}

TEST(Precision, ProductsOfTwoInputsStayFloat32) {
  ModelBuilder b;
  b.input("x", DType::F32, {kRows, kDepth}).input("w", DType::F32, {kDepth, kCols}).output("y", DType::F32);
  b.node("MatMul", {"x", "w"}, {"y"});
  const std::string bytes = b.bytes();
  Tensor x = Tensor::empty(DType::F32, {kRows, kDepth}), w = Tensor::empty(DType::F32, {kDepth, kCols});
  const std::vector<float> xv = random_floats(kRows * kDepth, 3), wv = random_floats(kDepth * kCols, 4);
  std::copy(xv.begin(), xv.end(), x.data_as<float>());
  std::copy(wv.begin(), wv.end(), w.data_as<float>());
  std::vector<Tensor> outs;
  for (Precision p : {Precision::F32, Precision::Bf16}) {
    SessionOptions options;
    options.precision = p;
    auto s = Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
    ASSERT_TRUE(s) << s.error().to_string();
    auto out = s->run({{"x", x}, {"w", w}});
    ASSERT_TRUE(out) << out.error().to_string();
    outs.push_back((*out)[0]);
  }
  for (int64_t i = 0; i < outs[0].numel(); ++i) ASSERT_EQ(outs[0].data_as<float>()[i], outs[1].data_as<float>()[i]);
}

}  // namespace
}  // namespace ignis
