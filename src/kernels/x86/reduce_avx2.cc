// SPDX-License-Identifier: Apache-2.0
// AVX2 float32 reductions over a coalesced [rows, n] (innermost axes reduced) or
// [outer, m, n] (middle axes reduced) view. Sums, sums of squares and their means and norms
// accumulate in double, as the reference does, so only the order of the additions differs;
// max and min run in float and turn a lane into NaN once it has seen one (numpy semantics,
// as the reference). Rows: four 4-lane double accumulators per row, a masked tail; rows split
// over the pool. Columns: a strip of 32 kept columns held in eight double vectors while the
// m reduced rows stream past; (outer, strip) pairs split over the pool.
#include "kernels/x86/reduce_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/x86/simd_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kStrip = 32;

double finish(ReduceOp op, double acc, int64_t count) {
  if (op == ReduceOp::Mean) return acc / static_cast<double>(count);
  if (op == ReduceOp::L2) return std::sqrt(acc);
  return acc;
}

// Adds v (or v^2) widened to double into the two accumulators.
template <bool kSquare>
inline void add8(__m256 v, __m256d& lo, __m256d& hi) {
  const __m256d a = _mm256_cvtps_pd(_mm256_castps256_ps128(v));
  const __m256d b = _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
  if constexpr (kSquare) {
    lo = _mm256_fmadd_pd(a, a, lo);
    hi = _mm256_fmadd_pd(b, b, hi);
  } else {
    lo = _mm256_add_pd(lo, a);
    hi = _mm256_add_pd(hi, b);
  }
}

inline double hsum(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

template <bool kSquare>
double sum_row(const float* x, int64_t n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    add8<kSquare>(_mm256_loadu_ps(x + j), a0, a1);
    add8<kSquare>(_mm256_loadu_ps(x + j + 8), a2, a3);
  }
  for (; j + 8 <= n; j += 8) add8<kSquare>(_mm256_loadu_ps(x + j), a0, a1);
  if (j < n) add8<kSquare>(_mm256_maskload_ps(x + j, lane_mask(static_cast<int>(n - j))), a2, a3);
  return hsum(_mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3)));
}

// acc = max(acc, v) (or min), v second so NaN lanes are flagged in `nan` instead.
template <bool kMax>
inline __m256 extremum8(__m256 acc, __m256 v, __m256& nan) {
  nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  return kMax ? _mm256_max_ps(acc, v) : _mm256_min_ps(acc, v);
}

template <bool kMax>
float extremum_row(const float* x, int64_t n) {
  const __m256 init = _mm256_set1_ps(kMax ? -std::numeric_limits<float>::infinity()
                                          : std::numeric_limits<float>::infinity());
  __m256 a0 = init, a1 = init, nan = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    a0 = extremum8<kMax>(a0, _mm256_loadu_ps(x + j), nan);
    a1 = extremum8<kMax>(a1, _mm256_loadu_ps(x + j + 8), nan);
  }
  if (j < n) {
    for (; j + 8 <= n; j += 8) a0 = extremum8<kMax>(a0, _mm256_loadu_ps(x + j), nan);
    if (j < n) {
      const __m256i mask = lane_mask(static_cast<int>(n - j));
      a1 = extremum8<kMax>(a1, _mm256_blendv_ps(init, _mm256_maskload_ps(x + j, mask), _mm256_castsi256_ps(mask)), nan);
    }
  }
  alignas(32) float lanes[8], nans[8];
  _mm256_store_ps(lanes, kMax ? _mm256_max_ps(a0, a1) : _mm256_min_ps(a0, a1));
  _mm256_store_ps(nans, nan);
  float r = lanes[0];
  bool any_nan = false;
  for (int q = 0; q < 8; ++q) {
    r = kMax ? std::max(r, lanes[q]) : std::min(r, lanes[q]);
    any_nan |= std::isnan(nans[q]);
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : r;
}

float reduce_row(ReduceOp op, const float* x, int64_t n) {
  switch (op) {
    case ReduceOp::Max: return extremum_row<true>(x, n);
    case ReduceOp::Min: return extremum_row<false>(x, n);
    case ReduceOp::SumSquare:
    case ReduceOp::L2: return static_cast<float>(finish(op, sum_row<true>(x, n), n));
    default: return static_cast<float>(finish(op, sum_row<false>(x, n), n));
  }
}

// Columns [j0, j0 + w) of one [m, n] slab, w <= kStrip.
template <ReduceOp kOp>
void reduce_strip(const float* x, float* y, int64_t m, int64_t n, int64_t j0, int64_t w) {
  const int vecs = static_cast<int>((w + 7) / 8);
  const int tail = static_cast<int>(w - (vecs - 1) * 8);
  const __m256i tail_mask = lane_mask(tail);
  auto load = [&](const float* row, int q) {
    return q + 1 < vecs ? _mm256_loadu_ps(row + j0 + q * 8) : _mm256_maskload_ps(row + j0 + q * 8, tail_mask);
  };
  alignas(32) float out[kStrip];
  if constexpr (kOp == ReduceOp::Max || kOp == ReduceOp::Min) {
    constexpr bool kMax = kOp == ReduceOp::Max;
    __m256 acc[kStrip / 8], nan[kStrip / 8];
    for (int q = 0; q < vecs; ++q) {
      acc[q] = load(x, q);
      nan[q] = _mm256_cmp_ps(acc[q], acc[q], _CMP_UNORD_Q);
    }
    for (int64_t i = 1; i < m; ++i)
      for (int q = 0; q < vecs; ++q) acc[q] = extremum8<kMax>(acc[q], load(x + i * n, q), nan[q]);
    for (int q = 0; q < vecs; ++q)
      _mm256_store_ps(out + q * 8, _mm256_blendv_ps(acc[q], _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()), nan[q]));
  } else {
    constexpr bool kSquare = kOp == ReduceOp::SumSquare || kOp == ReduceOp::L2;
    __m256d lo[kStrip / 8], hi[kStrip / 8];
    for (int q = 0; q < vecs; ++q) lo[q] = hi[q] = _mm256_setzero_pd();
    for (int64_t i = 0; i < m; ++i)
      for (int q = 0; q < vecs; ++q) add8<kSquare>(load(x + i * n, q), lo[q], hi[q]);
    alignas(32) double sums[kStrip];
    for (int q = 0; q < vecs; ++q) {
      _mm256_store_pd(sums + q * 8, lo[q]);
      _mm256_store_pd(sums + q * 8 + 4, hi[q]);
    }
    for (int64_t j = 0; j < w; ++j) out[j] = static_cast<float>(finish(kOp, sums[j], m));
  }
  std::copy(out, out + w, y + j0);
}

template <ReduceOp kOp>
void reduce_columns(const float* x, float* y, int64_t outer, int64_t m, int64_t n, ThreadPool* pool) {
  const int64_t strips = (n + kStrip - 1) / kStrip;
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / (m * kStrip));
  parallel_for(pool, outer * strips, grain, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t o = item / strips, j0 = item % strips * kStrip;
      reduce_strip<kOp>(x + o * m * n, y + o * n, m, n, j0, std::min(kStrip, n - j0));
    }
  });
}

}  // namespace

void reduce_rows_f32_avx2(ReduceOp op, const float* x, float* y, int64_t rows, int64_t n, ThreadPool* pool) {
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / n);
  parallel_for(pool, rows, grain, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) y[r] = reduce_row(op, x + r * n, n);
  });
}

void reduce_columns_f32_avx2(ReduceOp op, const float* x, float* y, int64_t outer, int64_t m, int64_t n,
                             ThreadPool* pool) {
  switch (op) {
    case ReduceOp::Sum: return reduce_columns<ReduceOp::Sum>(x, y, outer, m, n, pool);
    case ReduceOp::Mean: return reduce_columns<ReduceOp::Mean>(x, y, outer, m, n, pool);
    case ReduceOp::Max: return reduce_columns<ReduceOp::Max>(x, y, outer, m, n, pool);
    case ReduceOp::Min: return reduce_columns<ReduceOp::Min>(x, y, outer, m, n, pool);
    case ReduceOp::SumSquare: return reduce_columns<ReduceOp::SumSquare>(x, y, outer, m, n, pool);
    case ReduceOp::L2: return reduce_columns<ReduceOp::L2>(x, y, outer, m, n, pool);
  }
}

}  // namespace ignis::kernels::x86
