// SPDX-License-Identifier: Apache-2.0
// The adaptive queue delay on a fake clock: what it learns (run time per batch size, arrival
// rate), when waiting pays (only when bigger batches run sublinearly), the P99 budget, and the
// feedback that shrinks waits while the observed P99 is over target.
#include "serve/adaptive_delay.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ignis::serve {
namespace {

using std::chrono::microseconds;
const AdaptiveDelay::TimePoint T0 = AdaptiveDelay::TimePoint() + std::chrono::hours(1);

// Arrivals every `gap_us`, `n` of them.
void arrive(AdaptiveDelay& a, int64_t gap_us, int n) {
  for (int i = 0; i < n; ++i) a.observe_arrival(T0 + microseconds(gap_us * i));
}

double us(AdaptiveDelay::Duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

TEST(AdaptiveDelay, WaitsNothingBeforeItHasMeasured) {
  AdaptiveDelay a(8, microseconds(10'000));
  EXPECT_EQ(a.delay(1).count(), 0);
  arrive(a, 100, 50);
  EXPECT_EQ(a.delay(1).count(), 0);  // no run measured yet
}

TEST(AdaptiveDelay, LearnsTheArrivalRate) {
  AdaptiveDelay a(8, microseconds(10'000));
  arrive(a, 100, 200);
  EXPECT_NEAR(a.arrivals_per_second(), 10'000, 1);
}

TEST(AdaptiveDelay, InterpolatesRunTimesBetweenMeasuredSizes) {
  AdaptiveDelay a(16, microseconds(10'000));
  a.observe_run(1, microseconds(1000));
  a.observe_run(5, microseconds(2000));
  EXPECT_NEAR(us(a.run_time(3)), 1500, 1e-3);
  EXPECT_NEAR(us(a.run_time(10)), 4000, 1e-3);  // above: proportional to rows from the largest measured
  EXPECT_NEAR(us(a.run_time(1)), 1000, 1e-3);
}

TEST(AdaptiveDelay, DoesNotWaitWhenBiggerBatchesGainNothing) {
  AdaptiveDelay a(8, microseconds(100'000));
  for (int64_t rows = 1; rows <= 8; ++rows) a.observe_run(rows, microseconds(1000 * rows));
  arrive(a, 50, 100);
  EXPECT_EQ(a.delay(1).count(), 0);
}

TEST(AdaptiveDelay, WaitsForArrivalsWhenBatchesRunSublinearly) {
  AdaptiveDelay a(8, microseconds(20'000));
  for (int64_t rows = 1; rows <= 8; ++rows) a.observe_run(rows, microseconds(1000 + 100 * rows));
  arrive(a, 200, 100);  // 5000 per second
  const double wait = us(a.delay(1));
  EXPECT_GT(wait, 0);
  EXPECT_LE(wait + us(a.run_time(8)), 20'000 / 2.0);  // within half the P99 target
  EXPECT_NEAR(std::fmod(wait, 200.0), 0.0, 1e-6);     // a whole number of expected arrivals
  EXPECT_EQ(a.delay(8).count(), 0);                   // a full batch never waits
}

TEST(AdaptiveDelay, ATightTargetLeavesNoRoomToWait) {
  AdaptiveDelay a(8, microseconds(2400));  // half: 1200 us, barely one run
  for (int64_t rows = 1; rows <= 8; ++rows) a.observe_run(rows, microseconds(1000 + 100 * rows));
  arrive(a, 200, 100);
  EXPECT_EQ(a.delay(1).count(), 0);
}

TEST(AdaptiveDelay, TheDefaultTargetIsTwiceTheOneRowRun) {
  AdaptiveDelay a(8, AdaptiveDelay::Duration::zero());
  a.observe_run(1, microseconds(700));
  EXPECT_NEAR(us(a.p99_target()), 1400, 1e-3);
}

TEST(AdaptiveDelay, WaitsShrinkWhileTheObservedP99IsOverTarget) {
  AdaptiveDelay a(8, microseconds(20'000));
  for (int64_t rows = 1; rows <= 8; ++rows) a.observe_run(rows, microseconds(1000 + 100 * rows));
  arrive(a, 200, 100);
  const double full = us(a.delay(1));
  ASSERT_GT(full, 0);
  for (size_t i = 0; i < AdaptiveDelay::kLatencyWindow; ++i) a.observe_latency(microseconds(30'000));
  EXPECT_LT(a.scale(), 1.0);
  EXPECT_NEAR(us(a.delay(1)), full * a.scale(), 1e-3);
  for (size_t i = 0; i < 8 * AdaptiveDelay::kLatencyWindow; ++i) a.observe_latency(microseconds(5000));
  EXPECT_EQ(a.scale(), 1.0);  // recovered under the target
  EXPECT_NEAR(us(a.delay(1)), full, 1e-3);
}

// Three runs of each size with the given times (us).
void runs(AdaptiveDelay& a, const std::vector<std::pair<int64_t, int64_t>>& rows_us) {
  for (int i = 0; i < AdaptiveDelay::kMinSamples; ++i)
    for (auto [rows, t] : rows_us) a.observe_run(rows, microseconds(t));
}

TEST(AdaptiveDelay, DoesNotCapBeforeSizesAreMeasuredEnough) {
  AdaptiveDelay a(8, microseconds(50'000));
  a.observe_run(1, microseconds(2000));
  a.observe_run(8, microseconds(30'000));
  EXPECT_EQ(a.best_rows(), 8);
}

TEST(AdaptiveDelay, CapsBatchesWhereBiggerOnesRunSlowerPerRow) {
  AdaptiveDelay a(8, microseconds(50'000));
  runs(a, {{1, 2000}, {4, 9000}, {8, 18'800}});  // 2000, 2250 and 2350 us per row
  EXPECT_EQ(a.best_rows(), 1);
}

TEST(AdaptiveDelay, KeepsBatchesThatRunFasterPerRow) {
  AdaptiveDelay a(8, microseconds(50'000));
  runs(a, {{1, 1000}, {2, 1200}, {4, 1600}, {8, 2400}});  // 1000, 600, 400 and 300 us per row
  EXPECT_EQ(a.best_rows(), 8);
}

TEST(AdaptiveDelay, TakesTheSmallestSizeWithinFivePercentOfTheBest) {
  AdaptiveDelay a(16, microseconds(50'000));
  runs(a, {{1, 1000}, {4, 1240}, {16, 4800}});  // 1000, 310 and 300 us per row
  EXPECT_EQ(a.best_rows(), 4);
}

TEST(AdaptiveDelay, ExploresOneSizeEverySixteenthRun) {
  AdaptiveDelay a(8, microseconds(50'000));
  for (int i = 0; i < 15; ++i) a.observe_run(1, microseconds(1000));  // 15 runs: the cap is 1
  EXPECT_EQ(a.max_rows(), 1);  // the 16th run explores size 1 (the first of 1, 2, 4, 8)
  a.observe_run(1, microseconds(1000));
  EXPECT_EQ(a.max_rows(), 1);
  std::vector<int64_t> caps;  // after runs 17, 18, ...: the cap is 1 except at runs 31, 47, 63 and 79
  for (int run = 17; run <= 80; ++run) {
    a.observe_run(1, microseconds(1000));
    if (a.max_rows() != 1 || run % AdaptiveDelay::kExploreEvery == AdaptiveDelay::kExploreEvery - 1)
      caps.push_back(a.max_rows());
  }
  EXPECT_EQ(caps, (std::vector<int64_t>{2, 4, 8, 1}));
}

}  // namespace
}  // namespace ignis::serve
