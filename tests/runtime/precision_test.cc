// SPDX-License-Identifier: Apache-2.0
// SessionOptions::precision: with Bf16, MatMul and Gemm with constant weights compute with both
// operands rounded to bfloat16 (checked against a double loop over the rounded operands)
// where the CPU has AVX512_BF16, and exactly as float32 elsewhere; ops without constant
// weights stay float32 either way. With F16 the constant weights of MatMul and Gemm are stored
// as half (checked against a double loop over float32 x half-rounded weights) where the CPU has
// F16C, take half the memory, and everything else stays float32.
#include <gtest/gtest.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cmath>
#include <fstream>
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

// Whether this build runs under AddressSanitizer (GCC defines the macro, clang has the feature).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAddressSanitizer = true;
#else
constexpr bool kAddressSanitizer = false;
#endif
#else
constexpr bool kAddressSanitizer = false;
#endif

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
double f16(float v) { return static_cast<double>(half_to_float(float_to_half(v))); }

bool f16_runs() { return kernels::isa_enabled(kernels::Isa::Avx2) && cpu_features().f16c; }

double exact(float v) { return static_cast<double>(v); }

// MatMul, and Gemm with W transposed ([N, K], transB = 1, as exporters write linear layers), of
// x [kRows, kDepth] by a constant W [kDepth, kCols] at `precision`, checked against a double
// loop over round_x(x) * round_w(W) (only the float32 summation differs). The largest
// difference from the float32 session's result goes to `max_diff_from_f32`, per op.
void check_rounded_products(Precision precision, double (*round_x)(float), double (*round_w)(float), uint32_t seed,
                            double (&max_diff_from_f32)[2]) {
  const std::vector<float> w = random_floats(kDepth * kCols, seed);
  Tensor x = Tensor::empty(DType::F32, {kRows, kDepth});
  const std::vector<float> xv = random_floats(kRows * kDepth, seed + 1);
  std::copy(xv.begin(), xv.end(), x.data_as<float>());
  for (bool gemm : {false, true}) {
    ModelBuilder b;
    b.input("x", DType::F32, {kRows, kDepth}).output("y", DType::F32);
    std::vector<float> wt(w.size());
    for (int64_t k = 0; k < kDepth; ++k)
      for (int64_t n = 0; n < kCols; ++n) wt[n * kDepth + k] = w[k * kCols + n];
    if (gemm) b.initializer_f32("W", {kCols, kDepth}, wt).node("Gemm", {"x", "W"}, {"y"}, "g", {{"transB", 1}});
    else b.initializer_f32("W", {kDepth, kCols}, w).node("MatMul", {"x", "W"}, {"y"});
    const Tensor f32 = run(b, Precision::F32, x);
    const Tensor low = run(b, precision, x);
    double& max_diff = max_diff_from_f32[gemm ? 1 : 0];
    max_diff = 0.0;
    for (int64_t i = 0; i < kRows; ++i)
      for (int64_t j = 0; j < kCols; ++j) {
        double want = 0.0, magnitude = 0.0;
        for (int64_t k = 0; k < kDepth; ++k) {
          const double t = round_x(xv[i * kDepth + k]) * round_w(w[k * kCols + j]);
          want += t;
          magnitude += std::fabs(t);
        }
        const float got = low.data_as<float>()[i * kCols + j];
        ASSERT_NEAR(got, want, 1e-6 * (magnitude + 1.0)) << (gemm ? "Gemm" : "MatMul") << " at " << i << "," << j;
        max_diff = std::max(max_diff, std::fabs(static_cast<double>(got) - f32.data_as<float>()[i * kCols + j]));
      }
  }
}

TEST(Precision, Bf16RoundsMatMulAndGemmOperands) {
  double max_diff_from_f32[2];
  check_rounded_products(Precision::Bf16, bf16_runs() ? bf16 : exact, bf16_runs() ? bf16 : exact, 1, max_diff_from_f32);
  // bfloat16 is visibly coarser than float32 where it runs, and identical where it does not.
  for (double d : max_diff_from_f32) {
    if (bf16_runs()) EXPECT_GT(d, 1e-4);
    else EXPECT_EQ(d, 0.0);
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

namespace ignis {
namespace {

TEST(Precision, F16StoresMatMulAndGemmWeightsAsHalf) {
  double max_diff_from_f32[2];
  check_rounded_products(Precision::F16, exact, f16_runs() ? f16 : exact, 5, max_diff_from_f32);
  for (double d : max_diff_from_f32) {
    if (f16_runs()) EXPECT_GT(d, 1e-5);
    else EXPECT_EQ(d, 0.0);
  }
}

// A two-layer MLP (MatMul, Add, Relu, MatMul: fused by the optimizer) at batch 1 and 7: the
// half weights move each output by at most about 2^-11 of the products' magnitude.
TEST(Precision, F16MlpMatchesF32WithinHalfPrecision) {
  constexpr int64_t kIn = 96, kHidden = 200, kOut = 30;
  for (int64_t rows : {1, 7}) {
    ModelBuilder b;
    b.input("x", DType::F32, {rows, kIn}).output("y", DType::F32);
    b.initializer_f32("W1", {kIn, kHidden}, random_floats(kIn * kHidden, 11))
        .initializer_f32("B1", {kHidden}, random_floats(kHidden, 12))
        .initializer_f32("W2", {kHidden, kOut}, random_floats(kHidden * kOut, 13));
    b.node("MatMul", {"x", "W1"}, {"h"}).node("Add", {"h", "B1"}, {"hb"}).node("Relu", {"hb"}, {"r"});
    b.node("MatMul", {"r", "W2"}, {"y"});
    Tensor x = Tensor::empty(DType::F32, {rows, kIn});
    const std::vector<float> xv = random_floats(rows * kIn, 14);
    std::copy(xv.begin(), xv.end(), x.data_as<float>());
    const Tensor f32 = run(b, Precision::F32, x);
    const Tensor half = run(b, Precision::F16, x);
    // |x| <= 1 and |W| <= 1: a layer's products sum to at most its depth; half's relative
    // rounding is 2^-11 per weight, and the first layer's error reaches the second's inputs.
    const double tol = 0x1p-11 * (kIn * kHidden + kHidden) * 0.05;
    double max_diff = 0.0;
    for (int64_t i = 0; i < f32.numel(); ++i)
      max_diff = std::max(max_diff, std::fabs(static_cast<double>(half.data_as<float>()[i]) - f32.data_as<float>()[i]));
    EXPECT_LT(max_diff, tol) << "rows " << rows;
    if (f16_runs()) {
      EXPECT_GT(max_diff, 0.0) << "rows " << rows;
    }
  }
}

// Resident memory of this process (/proc/self/statm), 0 where it cannot be read.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * 4096;
}

// The packed weights of an F16 session take half the bytes of an F32 session's (packed once).
// Measured as the growth of resident memory while each session is open: the F16 session
// opens first and both stay open (so neither reuses the other's pages), and freed heap
// memory is returned to the system before each measurement (malloc_trim), so the parser's
// temporaries do not count.
TEST(Precision, F16HalvesPackedWeightMemory) {
#ifndef __GLIBC__
  GTEST_SKIP() << "needs glibc's malloc_trim";
#else
  if (!f16_runs()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  if (resident_bytes() == 0) GTEST_SKIP() << "no /proc/self/statm";
  // AddressSanitizer's allocator keeps freed blocks in quarantine and ignores malloc_trim, so
  // resident memory there says nothing about what a session keeps (the regular build runs it).
  if (kAddressSanitizer) GTEST_SKIP() << "resident memory is not measurable under AddressSanitizer";
  constexpr int64_t kK = 3072, kN = 2048;  // 24 MiB of float32 weights
  ModelBuilder b;
  b.input("x", DType::F32, {1, kK}).output("y", DType::F32);
  b.initializer_f32("W", {kK, kN}, random_floats(kK * kN, 21)).node("MatMul", {"x", "W"}, {"y"});
  const std::string bytes = b.bytes();
  Tensor x = Tensor::empty(DType::F32, {1, kK});
  std::fill_n(x.data_as<float>(), kK, 0.5f);
  std::vector<Session> open;
  auto growth = [&](Precision precision) {
    SessionOptions options;
    options.precision = precision;
    malloc_trim(0);
    const int64_t before = resident_bytes();
    auto s = Session::open_bytes(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), options);
    EXPECT_TRUE(s) << s.error().to_string();
    if (!s) return int64_t{0};
    auto out = s->run({{"x", x}});
    EXPECT_TRUE(out) << out.error().to_string();
    open.push_back(std::move(*s));
    malloc_trim(0);
    return resident_bytes() - before;
  };
  const int64_t half = growth(Precision::F16), f32 = growth(Precision::F32);
  const int64_t weights = kK * kN * 4;
  // f32 holds the 24 MiB packing (+ anything else the session keeps), half 12 MiB less; the
  // rest of the growth moves by a few MiB from run to run.
  EXPECT_GT(f32, weights * 9 / 10) << "f32 session grew " << f32 << " bytes";
  EXPECT_NEAR(static_cast<double>(f32 - half), weights * 0.5, weights * 0.2)
      << "f32 session grew " << f32 << " bytes, f16 " << half;
#endif
}

}  // namespace
}  // namespace ignis
