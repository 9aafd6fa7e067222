// SPDX-License-Identifier: Apache-2.0
#include "serve/adaptive_delay.h"

#include <algorithm>
#include <cmath>

namespace ignis::serve {
namespace {

double micros(AdaptiveDelay::Duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
AdaptiveDelay::Duration from_micros(double us) {
  return std::chrono::duration_cast<AdaptiveDelay::Duration>(std::chrono::duration<double, std::micro>(us));
}

}  // namespace

AdaptiveDelay::AdaptiveDelay(int64_t max_batch_size, Duration p99_target)
    : max_batch_size_(std::max<int64_t>(1, max_batch_size)),
      p99_target_(p99_target),
      run_us_(static_cast<size_t>(max_batch_size_) + 1, 0.0),
      samples_(static_cast<size_t>(max_batch_size_) + 1, 0) {}

void AdaptiveDelay::observe_run(int64_t rows, Duration run) {
  if (rows < 1 || rows > max_batch_size_) return;
  double& t = run_us_[static_cast<size_t>(rows)];
  t = t == 0 ? micros(run) : 0.8 * t + 0.2 * micros(run);
  ++samples_[static_cast<size_t>(rows)];
  ++runs_;
}

int64_t AdaptiveDelay::best_rows() const {
  double best = 0;
  for (size_t b = 1; b < run_us_.size(); ++b)
    if (samples_[b] >= kMinSamples) {
      const double per_row = run_us_[b] / static_cast<double>(b);
      if (best == 0 || per_row < best) best = per_row;
    }
  if (best == 0) return max_batch_size_;  // nothing measured enough yet: no cap
  for (size_t b = 1; b < run_us_.size(); ++b)
    if (samples_[b] >= kMinSamples && run_us_[b] / static_cast<double>(b) <= 1.05 * best)
      return static_cast<int64_t>(b);
  return max_batch_size_;
}

int64_t AdaptiveDelay::max_rows() const {
  if (runs_ % kExploreEvery == kExploreEvery - 1) {
    // Sizes 1, 2, 4, ... and max in turn.
    std::vector<int64_t> sizes;
    for (int64_t b = 1; b < max_batch_size_; b *= 2) sizes.push_back(b);
    sizes.push_back(max_batch_size_);
    return sizes[(runs_ / kExploreEvery) % sizes.size()];
  }
  return best_rows();
}

void AdaptiveDelay::observe_arrival(TimePoint at) {
  if (seen_arrival_ && at > last_arrival_) {
    const double gap_s = std::chrono::duration<double>(at - last_arrival_).count();
    const double instant = 1.0 / std::max(gap_s, 1e-7);
    // A moving average of the gaps, not of the rates: bursts of near-zero gaps would
    // otherwise dominate.
    const double gap = rate_ > 0 ? 0.95 / rate_ + 0.05 / instant : 1.0 / instant;
    rate_ = 1.0 / gap;
  }
  last_arrival_ = std::max(last_arrival_, at);
  seen_arrival_ = true;
}

void AdaptiveDelay::observe_latency(Duration request) {
  latencies_us_.push_back(micros(request));
  if (latencies_us_.size() > kLatencyWindow) latencies_us_.pop_front();
  if (++since_check_ < kLatencyWindow / 4 || latencies_us_.size() < kLatencyWindow / 2) return;
  since_check_ = 0;
  std::vector<double> sorted(latencies_us_.begin(), latencies_us_.end());
  const size_t k = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(sorted.size()))) - 1;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
  const double target = micros(p99_target());
  if (target <= 0) return;
  scale_ = sorted[k] > target ? std::max(scale_ * 0.5, 1.0 / 64) : std::min(1.0, scale_ * 1.25);
}

AdaptiveDelay::Duration AdaptiveDelay::p99_target() const {
  if (p99_target_.count() > 0) return p99_target_;
  return from_micros(2 * run_us_[1]);
}

AdaptiveDelay::Duration AdaptiveDelay::run_time(int64_t rows) const {
  rows = std::clamp<int64_t>(rows, 1, max_batch_size_);
  if (run_us_[static_cast<size_t>(rows)] > 0) return from_micros(run_us_[static_cast<size_t>(rows)]);
  // Between two measured sizes: linear. Above the largest measured below: proportional to the
  // rows (no gain assumed beyond what was seen). Only larger ones measured: the smallest of them.
  int64_t lo = rows - 1, hi = rows + 1;
  while (lo >= 1 && run_us_[static_cast<size_t>(lo)] == 0) --lo;
  while (hi <= max_batch_size_ && run_us_[static_cast<size_t>(hi)] == 0) ++hi;
  const bool has_lo = lo >= 1, has_hi = hi <= max_batch_size_;
  if (has_lo && has_hi) {
    const double tl = run_us_[static_cast<size_t>(lo)], th = run_us_[static_cast<size_t>(hi)];
    return from_micros(tl + (th - tl) * static_cast<double>(rows - lo) / static_cast<double>(hi - lo));
  }
  if (has_lo) return from_micros(run_us_[static_cast<size_t>(lo)] * static_cast<double>(rows) / static_cast<double>(lo));
  if (has_hi) return from_micros(run_us_[static_cast<size_t>(hi)]);
  return Duration::zero();
}

AdaptiveDelay::Duration AdaptiveDelay::delay(int64_t queued_rows) const {
  const int64_t cap = max_rows();
  if (queued_rows >= cap || rate_ <= 0 || run_us_[1] <= 0) return Duration::zero();
  // Half the target for this batch's wait and run; the rest is left for waiting behind the
  // batch before it.
  const double budget = micros(p99_target()) / 2;
  const double gap_us = 1e6 / rate_;
  double best_wait = 0, best_score = 0;
  for (int64_t extra = 0; queued_rows + extra <= cap; ++extra) {
    const double wait = static_cast<double>(extra) * gap_us;  // time for `extra` more arrivals, on average
    const int64_t rows = queued_rows + extra;
    const double run = micros(run_time(rows));
    if (extra > 0 && wait + run > budget) break;
    const double score = static_cast<double>(rows) / (wait + run);
    if (score > best_score * 1.02) {  // a longer wait must earn a clear gain
      best_score = score;
      best_wait = wait;
    }
  }
  return from_micros(best_wait * scale_);
}

}  // namespace ignis::serve
