// SPDX-License-Identifier: Apache-2.0
// AbsHistogram and the thresholds calibration derives from it.
//
// Entropy (KL) calibration, as TensorRT describes its entropy calibrator:
//  1. hist[0] = hist[1], damping the spike of exact zeros (ReLU outputs) that would otherwise
//     dominate the distribution.
//  2. For each candidate i in [levels, bins]: P = hist[0:i] with every count beyond, sum
//     hist[i:], added to P[i-1] (clipping moves those values to the edge).
//  3. Q: hist[0:i] split into `levels` groups (bin j in group floor(j * levels / i)), each
//     group's total spread evenly over its nonzero bins; zero bins stay zero.
//  4. KL(P || Q) = sum p ln(p / q) over p > 0, P and Q each normalized to sum 1 (infinite
//     when some p > 0 meets q = 0).
//  5. The threshold is i* * width for the last i* with the smallest divergence.
// Step 4 per candidate costs O(levels) instead of O(i) with prefix sums: within a group every
// nonzero bin has the same q, so sum p ln(p / q) = sum p ln p - ln q * sum p over the group.
#include "compress/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/cpu_features.h"
#ifdef IGNIS_HAVE_X86_KERNELS
#include "kernels/x86/finite_range_avx2.h"
#endif

namespace ignis::compress {

AbsHistogram::AbsHistogram(int initial_bins, int max_bins)
    : initial_bins_(std::max(initial_bins, 1)), max_bins_(std::max(max_bins, initial_bins_)) {}

uint64_t AbsHistogram::total() const {
  return std::accumulate(counts_.begin(), counts_.end(), zeros_pending_);
}

void AbsHistogram::grow_to(double max_abs) {
  if (width_ == 0.0) {
    width_ = max_abs / initial_bins_;
    counts_.assign(static_cast<size_t>(initial_bins_), 0);
    counts_[0] += zeros_pending_;
    zeros_pending_ = 0;
    return;
  }
  auto needed = [&] { return static_cast<size_t>(std::ceil(max_abs / width_)); };
  if (needed() <= counts_.size()) return;
  while (needed() > static_cast<size_t>(max_bins_)) {
    std::vector<uint64_t> merged((counts_.size() + 1) / 2, 0);
    for (size_t k = 0; k < counts_.size(); ++k) merged[k / 2] += counts_[k];
    counts_ = std::move(merged);
    width_ *= 2;
  }
  counts_.resize(std::max(needed(), counts_.size()), 0);
}

FiniteRange finite_range(const float* x, int64_t n) {
#ifdef IGNIS_HAVE_X86_KERNELS
  if (cpu_features().avx2) {
    FiniteRange r;
    kernels::x86::finite_range_avx2(x, n, &r.min, &r.max);
    return r;
  }
#endif
  // Sixteen independent lanes of min and max. v - v is 0 for a finite v and NaN otherwise; a
  // non-finite v is replaced by the identity of each reduction. Written as selects without
  // && so that GCC vectorizes the loop (with a short-circuit test it stayed scalar and took a
  // fifth of a calibration's time).
  constexpr int kLanes = 16;
  const float inf = std::numeric_limits<float>::infinity();
  float lo[kLanes], hi[kLanes];
  for (int k = 0; k < kLanes; ++k) {
    lo[k] = inf;
    hi[k] = -inf;
  }
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int k = 0; k < kLanes; ++k) {
      const float v = x[i + k];
      const bool finite = v - v == 0.0f;
      const float for_min = finite ? v : inf, for_max = finite ? v : -inf;
      lo[k] = for_min < lo[k] ? for_min : lo[k];
      hi[k] = for_max > hi[k] ? for_max : hi[k];
    }
  for (; i < n; ++i) {
    const float v = x[i];
    if (v - v != 0.0f) continue;
    lo[0] = std::min(lo[0], v);
    hi[0] = std::max(hi[0], v);
  }
  FiniteRange r{lo[0], hi[0]};
  for (int k = 1; k < kLanes; ++k) {
    r.min = std::min(r.min, lo[k]);
    r.max = std::max(r.max, hi[k]);
  }
  return r;
}

void AbsHistogram::add(const float* x, int64_t n) {
  const FiniteRange r = finite_range(x, n);
  add(x, n, r.min <= r.max ? std::max(-r.min, r.max) : 0.0f);
}

void AbsHistogram::add(const float* x, int64_t n, float max_abs) {
  if (max_abs > 0.0f) grow_to(max_abs);
  if (width_ == 0.0) {  // nothing but zeros so far
    for (int64_t i = 0; i < n; ++i) zeros_pending_ += x[i] == 0.0f;
    return;
  }
  // Bin indices a block at a time (vectorized: |x| times the inverse width, truncated), then
  // the counts; a non-finite value goes to the slot past the last bin, which is dropped.
  // Bins are [k w, (k + 1) w) up to the rounding of that product, which moves a value lying
  // within an ulp of a bin edge to its neighbour: nothing a threshold can see. The counts go
  // to four interleaved copies: runs of equal bins (the zeros after a ReLU) would otherwise
  // chain each increment to the last one's store.
  const uint32_t last = static_cast<uint32_t>(counts_.size() - 1);
  const float inverse = static_cast<float>(1.0 / width_);
  constexpr int kWays = 4;
  const size_t slots = counts_.size() + 1;
  std::vector<uint32_t> counts(kWays * slots);
  constexpr int64_t kBlock = 512, kFlush = int64_t{1} << 28;  // uint32 copies stay below 2^32
  uint32_t bin[kBlock];
  for (int64_t f0 = 0; f0 < n; f0 += kFlush) {
    const int64_t f1 = std::min(n, f0 + kFlush);
    std::fill(counts.begin(), counts.end(), 0u);
    for (int64_t i0 = f0; i0 < f1; i0 += kBlock) {
      const int64_t m = std::min(kBlock, f1 - i0);
      for (int64_t k = 0; k < m; ++k) {
        const float v = x[i0 + k];
        const float scaled = std::min(std::fabs(v) * inverse, static_cast<float>(last));
        bin[k] = v - v == 0.0f ? static_cast<uint32_t>(scaled) : last + 1;
      }
      int64_t k = 0;
      for (; k + kWays <= m; k += kWays)
        for (int w = 0; w < kWays; ++w) ++counts[static_cast<size_t>(w) * slots + bin[k + w]];
      for (; k < m; ++k) ++counts[bin[k]];
    }
    for (size_t b = 0; b < counts_.size(); ++b)
      for (int w = 0; w < kWays; ++w) counts_[b] += counts[static_cast<size_t>(w) * slots + b];
  }
}

double percentile_threshold(const AbsHistogram& h, double percentile) {
  const auto& c = h.counts();
  const double target = percentile / 100.0 * static_cast<double>(h.total());
  double seen = 0.0;
  for (size_t k = 0; k < c.size(); ++k) {
    seen += static_cast<double>(c[k]);
    if (seen >= target) return static_cast<double>(k + 1) * h.width();
  }
  return static_cast<double>(c.size()) * h.width();
}

double entropy_threshold(const AbsHistogram& h, int levels) {
  const size_t n = h.counts().size();
  if (n < static_cast<size_t>(levels) || levels < 1) return static_cast<double>(n) * h.width();
  std::vector<double> hist(h.counts().begin(), h.counts().end());
  if (n >= 2) hist[0] = hist[1];
  // Prefix sums over bins [0, k): counts, nonzero bins, and sum of c ln c.
  std::vector<double> sum(n + 1, 0.0), nonzero(n + 1, 0.0), c_ln_c(n + 1, 0.0);
  for (size_t k = 0; k < n; ++k) {
    sum[k + 1] = sum[k] + hist[k];
    nonzero[k + 1] = nonzero[k] + (hist[k] > 0 ? 1.0 : 0.0);
    c_ln_c[k + 1] = c_ln_c[k] + (hist[k] > 0 ? hist[k] * std::log(hist[k]) : 0.0);
  }
  const double total = sum[n];
  if (total <= 0.0) return static_cast<double>(n) * h.width();

  size_t best = n;
  double best_kl = std::numeric_limits<double>::infinity();
  const size_t nq = static_cast<size_t>(levels);
  for (size_t i = nq; i <= n; ++i) {
    const double outliers = total - sum[i];
    const double s_i = sum[i];  // Q's total before normalizing
    if (s_i <= 0.0) continue;
    // Unnormalized: KL = (1/total) * sum_j p_j [ln p_j - ln q_j] + ln(s_i / total), where the
    // last term comes from normalizing P by `total` and Q by `s_i`.
    double acc = 0.0;
    bool infinite = false;
    for (size_t g = 0; g < nq; ++g) {
      // Bins of group g: j with floor(j * nq / i) == g, i.e. [ceil(g * i / nq), ceil((g + 1) * i / nq)).
      const size_t a = (g * i + nq - 1) / nq, b = ((g + 1) * i + nq - 1) / nq;
      if (a >= b) continue;
      const double count = nonzero[b] - nonzero[a];
      if (count == 0.0) {
        if (b == i && outliers > 0.0) infinite = true;  // the last bin gets p > 0 but has q = 0
        continue;
      }
      const double q = (sum[b] - sum[a]) / count;
      acc += (c_ln_c[b] - c_ln_c[a]) - std::log(q) * (sum[b] - sum[a]);
      if (b == i && outliers > 0.0) {
        const double last = hist[i - 1];
        if (last == 0.0) {
          infinite = true;
        } else {  // replace the last bin's term with the one of last + outliers
          const double p = last + outliers;
          acc += p * std::log(p / q) - last * std::log(last / q);
        }
      }
    }
    if (infinite) continue;
    const double kl = acc / total + std::log(s_i / total);
    if (kl <= best_kl) {  // <=: the last of equal minima
      best_kl = kl;
      best = i;
    }
  }
  return static_cast<double>(best) * h.width();
}

}  // namespace ignis::compress
