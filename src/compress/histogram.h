// SPDX-License-Identifier: Apache-2.0
// Calibration statistics of one activation tensor, accumulated sample by sample in memory that
// does not grow with the number of samples: its min and max, and a histogram of |x| from which
// the percentile and entropy (KL) calibrators pick a clipping threshold.
#pragma once

#include <cstdint>
#include <vector>

namespace ignis::compress {

// Histogram of |x| over [0, bins * width). The first values seen with a nonzero magnitude set
// width = max|x| / initial_bins; a later value beyond the range appends bins of the same width,
// and when the count would pass max_bins, adjacent pairs merge (the width doubles) until it
// fits. So the memory is at most max_bins counters however many samples are added.
// The smallest and largest finite values of x (NaN and infinities skipped); min > max when
// there are none. One pass that the compiler vectorizes (calibration reads every activation
// of every sample through it).
struct FiniteRange {
  float min, max;
};
FiniteRange finite_range(const float* x, int64_t n);

class AbsHistogram {
 public:
  explicit AbsHistogram(int initial_bins = 2048, int max_bins = 8192);

  void add(const float* x, int64_t n);  // NaN and infinite values are ignored
  // The same when the largest finite |x| is known (finite_range gives it with the range).
  void add(const float* x, int64_t n, float max_abs);

  int64_t bins() const { return static_cast<int64_t>(counts_.size()); }
  double width() const { return width_; }
  const std::vector<uint64_t>& counts() const { return counts_; }
  uint64_t total() const;

 private:
  void grow_to(double max_abs);

  int initial_bins_, max_bins_;
  double width_ = 0.0;            // 0 until a nonzero magnitude arrives
  uint64_t zeros_pending_ = 0;    // exact zeros seen while width_ is still 0
  std::vector<uint64_t> counts_;
};

// The smallest T = k * width such that at least `percentile` % of the values have |x| <= T
// (bin granularity), for percentile in (0, 100].
double percentile_threshold(const AbsHistogram& h, double percentile);

// The KL-divergence threshold of TensorRT's entropy calibrator (steps in histogram.cc): among
// the candidate ranges of i >= levels bins, the one
// whose `levels`-level quantization loses the least information about the whole histogram
// (clipped values folded into the last kept bin). `levels` is 128 for tensors with negative
// values (one side of int8) and 256 for non-negative ones. Returns bins * width when the
// histogram has fewer than `levels` bins.
double entropy_threshold(const AbsHistogram& h, int levels);

}  // namespace ignis::compress
