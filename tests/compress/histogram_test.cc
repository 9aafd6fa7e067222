// SPDX-License-Identifier: Apache-2.0
// AbsHistogram's bounded memory and the percentile and entropy thresholds. The entropy search
// (prefix sums) is checked against a direct evaluation of the TensorRT steps written here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "compress/histogram.h"

namespace ignis::compress {
namespace {

std::vector<float> gaussian(size_t n, float sigma, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sigma);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(AbsHistogram, BinCountStaysBoundedOver200Samples) {
  AbsHistogram h;
  uint64_t added = 0;
  for (int s = 0; s < 200; ++s) {
    // Every tenth sample reaches further out than all before it, so the range keeps growing.
    const float sigma = s % 10 == 9 ? 1.0f + static_cast<float>(s) : 1.0f;
    const auto x = gaussian(1000, sigma, static_cast<uint32_t>(s));
    h.add(x.data(), static_cast<int64_t>(x.size()));
    added += x.size();
    ASSERT_LE(h.bins(), 8192) << "sample " << s;
    ASSERT_EQ(h.total(), added) << "sample " << s;
  }
  // The range covers everything seen.
  EXPECT_GT(static_cast<double>(h.bins()) * h.width(), 3.0 * 190.0);
}

TEST(AbsHistogram, SameRangeSamplesKeepTheInitialBins) {
  AbsHistogram h;
  std::vector<float> x(4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<float>(i) - 2048.0f) / 1024.0f;  // [-2, 2)
  for (int s = 0; s < 200; ++s) h.add(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(h.bins(), 2048);
  EXPECT_DOUBLE_EQ(h.width(), 2.0 / 2048);
  EXPECT_EQ(h.total(), 200u * 4096u);
}

TEST(AbsHistogram, AppendsSameWidthBinsThenMergesPastTheCap) {
  AbsHistogram h(4, 8);
  const float first[] = {1.0f, 0.1f};
  h.add(first, 2);  // width 0.25, 4 bins
  EXPECT_EQ(h.bins(), 4);
  const float wider[] = {1.9f};
  h.add(wider, 1);  // needs 8 bins of 0.25: appended
  EXPECT_EQ(h.bins(), 8);
  EXPECT_DOUBLE_EQ(h.width(), 0.25);
  const float far[] = {3.0f};
  h.add(far, 1);  // would need 12 bins: merged to width 0.5, 6 bins
  EXPECT_DOUBLE_EQ(h.width(), 0.5);
  EXPECT_EQ(h.bins(), 6);
  // 0.1; 1.0 (the first range's top, clamped into its last bin [0.75, 1)); 1.9; 3.0 (the top).
  EXPECT_EQ(h.counts(), (std::vector<uint64_t>{1, 1, 0, 1, 0, 1}));
  EXPECT_EQ(h.total(), 4u);
}

TEST(AbsHistogram, ZerosBeforeAnyRangeAndNonFiniteValues) {
  AbsHistogram h;
  const float zeros[] = {0.0f, 0.0f, 0.0f};
  h.add(zeros, 3);
  EXPECT_EQ(h.total(), 3u);
  const float mixed[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), -2.0f};
  h.add(mixed, 3);
  EXPECT_EQ(h.total(), 4u);
  EXPECT_EQ(h.counts()[0], 3u);
  EXPECT_DOUBLE_EQ(static_cast<double>(h.bins()) * h.width(), 2.0);
}

TEST(PercentileThreshold, CutsTheTail) {
  AbsHistogram h(1000);
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i + 1) / 100000.0f;  // uniform on (0, 1]
  h.add(x.data(), static_cast<int64_t>(x.size()));
  EXPECT_NEAR(percentile_threshold(h, 90.0), 0.9, 2e-3);
  EXPECT_NEAR(percentile_threshold(h, 100.0), 1.0, 1e-9);
}

// The TensorRT steps, evaluated directly for every candidate.
double entropy_threshold_direct(const AbsHistogram& h, int levels) {
  std::vector<double> hist(h.counts().begin(), h.counts().end());
  const size_t n = hist.size(), nq = static_cast<size_t>(levels);
  hist[0] = hist[1];
  double best_kl = std::numeric_limits<double>::infinity();
  size_t best = n;
  for (size_t i = nq; i <= n; ++i) {
    std::vector<double> p(hist.begin(), hist.begin() + static_cast<long>(i));
    for (size_t j = i; j < n; ++j) p[i - 1] += hist[j];
    std::vector<double> q(i, 0.0), total(nq, 0.0), nonzero(nq, 0.0);
    for (size_t j = 0; j < i; ++j) {
      const size_t g = j * nq / i;
      total[g] += hist[j];
      nonzero[g] += hist[j] > 0;
    }
    for (size_t j = 0; j < i; ++j)
      if (hist[j] > 0) q[j] = total[j * nq / i] / nonzero[j * nq / i];
    const double sp = std::accumulate(p.begin(), p.end(), 0.0), sq = std::accumulate(q.begin(), q.end(), 0.0);
    double kl = 0.0;
    for (size_t j = 0; j < i; ++j) {
      if (p[j] == 0) continue;
      kl = q[j] == 0 ? std::numeric_limits<double>::infinity() : kl + p[j] / sp * std::log((p[j] / sp) / (q[j] / sq));
    }
    if (kl <= best_kl) best_kl = kl, best = i;
  }
  return static_cast<double>(best) * h.width();
}

TEST(EntropyThreshold, MatchesTheDirectEvaluation) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    AbsHistogram h(512);
    auto x = gaussian(20000, 1.0f, seed);
    for (int k = 0; k < 20; ++k) x[static_cast<size_t>(k)] = 4.0f + static_cast<float>(k) * 0.3f;
    h.add(x.data(), static_cast<int64_t>(x.size()));
    for (int levels : {128, 256}) EXPECT_DOUBLE_EQ(entropy_threshold(h, levels), entropy_threshold_direct(h, levels)) << seed;
  }
}

TEST(EntropyThreshold, ClipsFarOutliersThatMinMaxKeeps) {
  // N(0, 1) with five values at +-40 sigma: the min-max range is 40, the KL threshold stays
  // within a few sigma. (Candidates start at `levels` bins, so the threshold cannot fall below
  // 128 bin widths: outliers more than ~16x beyond the body put all of it in the first 128 of
  // 2048 bins, and then only candidates ending on an outlier's bin have a finite divergence.)
  for (bool outliers_first : {true, false}) {
    AbsHistogram h;
    auto x = gaussian(200000, 1.0f, 7);
    const size_t at = outliers_first ? 0 : x.size() - 5;
    for (size_t k = 0; k < 5; ++k) x[at + k] = k % 2 ? 40.0f : -40.0f;
    float max_abs = 0.0f;
    for (float v : x) max_abs = std::max(max_abs, std::fabs(v));
    for (size_t s = 0; s < 20; ++s) h.add(x.data() + s * 10000, 10000);  // 20 samples, as calibration adds them
    const double t = entropy_threshold(h, 128);
    EXPECT_EQ(max_abs, 40.0f);
    EXPECT_GT(t, 2.5) << outliers_first;
    EXPECT_LT(t, 6.0) << outliers_first;
    EXPECT_LT(percentile_threshold(h, 99.99), 6.0) << outliers_first;
  }
}

// finite_range against a plain loop, on sizes around its 8 and 16 lanes, with NaN and infinities
// scattered in; and the empty and all-non-finite cases.
TEST(FiniteRange, MatchesAPlainLoopAndSkipsNonFiniteValues) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 5.0f);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (int n : {1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 1000, 1003}) {
    std::vector<float> x(static_cast<size_t>(n));
    for (auto& v : x) v = dist(rng);
    if (n > 3) {
      x[1] = nan;
      x[static_cast<size_t>(n) - 2] = inf;
      x[static_cast<size_t>(n) / 2] = -inf;
    }
    if (n > 20) {  // inside the vector loop's body too, in either half of a 16-value step
      x[4] = inf;
      x[13] = -inf;
      x[15] = nan;
    }
    float lo = inf, hi = -inf;
    for (float v : x)
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    const FiniteRange r = finite_range(x.data(), n);
    EXPECT_EQ(r.min, lo) << n;
    EXPECT_EQ(r.max, hi) << n;
  }
  const FiniteRange none = finite_range(nullptr, 0);
  EXPECT_GT(none.min, none.max);
  const float bad[] = {nan, inf, -inf, nan, nan, inf, -inf, nan, inf};
  const FiniteRange all_bad = finite_range(bad, 9);
  EXPECT_GT(all_bad.min, all_bad.max);
}

// The vectorized binning puts values where floor(|x| / width) does, away from bin edges.
TEST(AbsHistogram, BinsMatchTheDivision) {
  AbsHistogram h(64, 64);
  std::vector<float> x;
  for (int k = 0; k < 64; ++k) x.push_back((static_cast<float>(k) + 0.5f) * (k % 2 ? -1.0f : 1.0f));
  x.push_back(64.0f);  // the top: the last bin
  h.add(x.data(), static_cast<int64_t>(x.size()));
  ASSERT_EQ(h.bins(), 64);
  EXPECT_DOUBLE_EQ(h.width(), 1.0);
  std::vector<uint64_t> want(64, 1);
  want[63] = 2;
  EXPECT_EQ(h.counts(), want);
}

}  // namespace
}  // namespace ignis::compress
