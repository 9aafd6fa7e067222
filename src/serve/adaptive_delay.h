// SPDX-License-Identifier: Apache-2.0
// `max_queue_delay_microseconds: auto`: the queue delay is chosen from what the batcher
// measures instead of fixed in the config. It learns the engine's time per batch size and the
// arrival rate, and for the rows already queued picks the wait that maximizes the batch's
// completion rate, rows / (wait + run time), among waits whose wait + run time fits a share of
// the P99 target. The P99 of recent requests is the feedback: above the target the waits
// shrink (halved each time), under it they recover. It also caps the rows of a batch at the
// smallest size whose measured time per row is within 5% of the best: where bigger batches
// run no faster per row (or slower, once their activations outgrow the caches), requests run
// alone. Every 16th run explores one size of 1, 2, 4, ... max so that each stays measured.
// No threads, no clock: callers pass times, so tests drive it deterministically.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <vector>

namespace ignis::serve {

class AdaptiveDelay {
 public:
  using Duration = std::chrono::steady_clock::duration;
  using TimePoint = std::chrono::steady_clock::time_point;

  // `p99_target` zero: twice the learned time of a one-row run.
  AdaptiveDelay(int64_t max_batch_size, Duration p99_target);

  void observe_run(int64_t rows, Duration run);
  void observe_arrival(TimePoint at);
  void observe_latency(Duration request);

  // The wait for a batch that has `queued_rows` rows now.
  Duration delay(int64_t queued_rows) const;
  // The most rows the next batch may take.
  int64_t max_rows() const;

  static constexpr int kExploreEvery = 16;  // runs between two explored sizes
  static constexpr int kMinSamples = 3;     // runs of a size before its time counts

  // The cap from measurements alone (no exploration).
  int64_t best_rows() const;

  // What it has learned, for metrics and tests.
  Duration run_time(int64_t rows) const;      // estimated engine time of a batch of `rows`
  double arrivals_per_second() const { return rate_; }
  Duration p99_target() const;
  double scale() const { return scale_; }      // the feedback factor on waits, in (0, 1]

  static constexpr size_t kLatencyWindow = 256;  // requests behind the observed P99

 private:
  int64_t max_batch_size_;
  Duration p99_target_;
  std::vector<double> run_us_;     // by rows (index 0 unused); 0 = not measured
  std::vector<int> samples_;       // runs measured, by rows
  uint64_t runs_ = 0;
  double rate_ = 0;                // arrivals per second, moving average
  TimePoint last_arrival_{};
  bool seen_arrival_ = false;
  std::deque<double> latencies_us_;
  double scale_ = 1.0;
  size_t since_check_ = 0;  // latencies observed since the P99 was last checked
};

}  // namespace ignis::serve
