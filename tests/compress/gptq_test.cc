// SPDX-License-Identifier: Apache-2.0
// GPTQ's pieces on small random problems: the inverse factor against H, the calibrated codes
// against round-to-nearest on the output error ||X W - X Q(W)|| they are meant to reduce, and
// the error-correcting target against the weight it replaces.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>
#include <vector>

#include "compress/gptq.h"
#include "compress/int4_weights.h"
#include "core/thread_pool.h"

namespace ignis::compress {
namespace {

constexpr unsigned kSeed = 20240611;

// [rows, k] activations with correlated columns of unequal scale (x = z A, column j scaled by
// 1 + j % 5), the structure that lets GPTQ trade one weight's error against another's.
std::vector<float> correlated_inputs(int64_t rows, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> normal;
  std::vector<float> mix(static_cast<size_t>(k * k));
  for (auto& v : mix) v = normal(rng) / std::sqrt(static_cast<float>(k));
  for (int64_t i = 0; i < k; ++i) mix[static_cast<size_t>(i * k + i)] += 1.0f;
  std::vector<float> z(static_cast<size_t>(rows * k)), x(static_cast<size_t>(rows * k), 0.0f);
  for (auto& v : z) v = normal(rng);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) {
      float s = 0.0f;
      for (int64_t i = 0; i < k; ++i) s += z[static_cast<size_t>(r * k + i)] * mix[static_cast<size_t>(i * k + j)];
      x[static_cast<size_t>(r * k + j)] = s * static_cast<float>(1 + j % 5);
    }
  return x;
}

Tensor random_weight(int64_t k, int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 0.1f);
  Tensor w = Tensor::empty(DType::F32, Shape{k, n});
  for (int64_t i = 0; i < w.numel(); ++i) w.data_as<float>()[i] = normal(rng);
  return w;
}

// ||X A - X B||_F^2 for [k, n] A and B, in float64.
double output_error(const std::vector<float>& x, int64_t rows, int64_t k, int64_t n, const std::vector<double>& a,
                    const std::vector<double>& b) {
  double e = 0.0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double d = 0.0;
      for (int64_t i = 0; i < k; ++i)
        d += static_cast<double>(x[static_cast<size_t>(r * k + i)]) *
             (a[static_cast<size_t>(i * n + j)] - b[static_cast<size_t>(i * n + j)]);
      e += d * d;
    }
  return e;
}

std::vector<double> as_doubles(const Tensor& w) {
  return std::vector<double>(w.data_as<float>(), w.data_as<float>() + w.numel());
}

std::vector<double> dequantized(const Int4Codes& c) {
  std::vector<double> out(static_cast<size_t>(c.k * c.n));
  for (int64_t i = 0; i < c.k; ++i)
    for (int64_t j = 0; j < c.n; ++j) out[static_cast<size_t>(i * c.n + j)] = c.value(i, j);
  return out;
}

InputStatistics statistics_of(const std::vector<float>& x, const std::vector<float>& x_ref, int64_t rows, int64_t k,
                              ThreadPool* pool) {
  InputStatistics s;
  s.k = k;
  s.add(x.data(), x_ref.data(), rows, pool);
  return s;
}

TEST(Gptq, InverseFactorTimesDampedHessianIsIdentity) {
  std::mt19937 rng(kSeed);
  const int64_t rows = 40, k = 37;  // fewer rows than 2k: H is far from diagonal
  const auto x = correlated_inputs(rows, k, rng);
  ThreadPool pool(2);
  const InputStatistics s = statistics_of(x, x, rows, k, &pool);
  double damp = 0.0;
  auto u = gptq_inverse_factor(s.h, k, 0.01, &damp, &pool);
  ASSERT_TRUE(u) << u.error().to_string();
  EXPECT_GT(damp, 0.0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < i; ++j) ASSERT_EQ((*u)[static_cast<size_t>(i * k + j)], 0.0) << "U not upper at " << i;
  // (U^T U)(H + damp I) = I.
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) {
      double v = 0.0;
      for (int64_t m = 0; m < k; ++m) {
        double inv = 0.0;  // (U^T U)[i][m]
        for (int64_t l = 0; l <= std::min(i, m); ++l) inv += (*u)[static_cast<size_t>(l * k + i)] * (*u)[static_cast<size_t>(l * k + m)];
        v += inv * (s.h[static_cast<size_t>(m * k + j)] + (m == j ? damp : 0.0));
      }
      EXPECT_NEAR(v, i == j ? 1.0 : 0.0, 1e-8) << "at " << i << ", " << j;
    }
}

TEST(Gptq, CalibratedCodesBeatRoundToNearestOnTheOutputError) {
  ThreadPool pool(2);
  for (const auto& [k, n, block] : {std::tuple<int64_t, int64_t, int64_t>{96, 24, 32}, {77, 9, 16}, {128, 40, 64}}) {
    std::mt19937 rng(kSeed + static_cast<unsigned>(k));
    const int64_t rows = 3 * k;
    const auto x = correlated_inputs(rows, k, rng);
    const Tensor w = random_weight(k, n, rng);
    const InputStatistics s = statistics_of(x, x, rows, k, &pool);
    double damp = 0.0;
    auto u = gptq_inverse_factor(s.h, k, 0.01, &damp, &pool);
    ASSERT_TRUE(u) << u.error().to_string();
    const Int4Codes gptq = gptq_int4(w, *u, block, &pool);
    const Int4Codes rtn = int4_round_to_nearest(w, block);
    ASSERT_EQ(gptq.codes.size(), static_cast<size_t>(k * n));
    ASSERT_EQ(gptq.grids.size(), static_cast<size_t>(n * ((k + block - 1) / block)));
    for (uint8_t q : gptq.codes) ASSERT_LE(q, 15);
    for (const Int4Grid& g : gptq.grids) {
      ASSERT_TRUE(std::isfinite(g.scale) && g.scale > 0.0f);
      ASSERT_TRUE(g.zero_point >= 0 && g.zero_point <= 15);
    }
    const auto exact = as_doubles(w);
    const double e_gptq = output_error(x, rows, k, n, exact, dequantized(gptq));
    const double e_rtn = output_error(x, rows, k, n, exact, dequantized(rtn));
    EXPECT_LT(e_gptq, 0.8 * e_rtn) << "k=" << k << " n=" << n << " block=" << block << " seed=" << kSeed + k;
  }
}

TEST(Gptq, NoCalibrationEvidenceGivesRoundToNearest) {
  std::mt19937 rng(kSeed);
  const int64_t k = 64, n = 8;
  const Tensor w = random_weight(k, n, rng);
  double damp = 0.0;
  auto u = gptq_inverse_factor(std::vector<double>(static_cast<size_t>(k * k), 0.0), k, 0.01, &damp, nullptr);
  ASSERT_TRUE(u) << u.error().to_string();
  const Int4Codes gptq = gptq_int4(w, *u, 32, nullptr);
  const Int4Codes rtn = int4_round_to_nearest(w, 32);
  EXPECT_EQ(gptq.codes, rtn.codes);
}

TEST(Gptq, TargetIsTheWeightWhenInputsMatchAndCorrectsShiftedInputs) {
  ThreadPool pool(2);
  std::mt19937 rng(kSeed);
  const int64_t k = 48, n = 16, rows = 200;
  const auto x = correlated_inputs(rows, k, rng);
  const Tensor w = random_weight(k, n, rng);
  double damp = 0.0;
  {
    const InputStatistics s = statistics_of(x, x, rows, k, &pool);
    auto u = gptq_inverse_factor(s.h, k, 0.01, &damp, &pool);
    ASSERT_TRUE(u);
    const Tensor t = gptq_target(w, s, *u, damp, &pool);
    for (int64_t i = 0; i < w.numel(); ++i) ASSERT_NEAR(t.data_as<float>()[i], w.data_as<float>()[i], 1e-4);
  }
  // x (the quantized model's input) is x_ref with a systematic error: x_ref = x M, M near I.
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> m(static_cast<size_t>(k * k));
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = 0; j < k; ++j) m[static_cast<size_t>(i * k + j)] = (i == j ? 1.0f : 0.0f) + normal(rng);
  std::vector<float> x_ref(x.size(), 0.0f);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      for (int64_t i = 0; i < k; ++i)
        x_ref[static_cast<size_t>(r * k + j)] += x[static_cast<size_t>(r * k + i)] * m[static_cast<size_t>(i * k + j)];
  const InputStatistics s = statistics_of(x, x_ref, rows, k, &pool);
  auto u = gptq_inverse_factor(s.h, k, 0.01, &damp, &pool);
  ASSERT_TRUE(u);
  const Tensor t = gptq_target(w, s, *u, damp, &pool);
  // ||x_ref W - x W'|| against ||x_ref W - x W||: the expected product, w x_ref W = x (M W).
  std::vector<double> mw(static_cast<size_t>(k * n), 0.0);
  for (int64_t i = 0; i < k; ++i)
    for (int64_t l = 0; l < k; ++l)
      for (int64_t j = 0; j < n; ++j)
        mw[static_cast<size_t>(i * n + j)] += m[static_cast<size_t>(i * k + l)] * w.data_as<float>()[l * n + j];
  const double before = output_error(x, rows, k, n, mw, as_doubles(w));
  const double after = output_error(x, rows, k, n, mw, as_doubles(t));
  EXPECT_LT(after, 0.1 * before);
}

}  // namespace
}  // namespace ignis::compress
