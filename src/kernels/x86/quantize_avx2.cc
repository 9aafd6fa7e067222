// SPDX-License-Identifier: Apache-2.0
// AVX2 DynamicQuantizeLinear: the range pass and the quantize pass each split over the pool;
// and ai.ignis DynamicQuantizeRows, rows split over the pool, each row's two passes while it
// is in cache. The arithmetic is the reference kernels', lane by lane (x / scale with a true
// division, round half to even, add the zero point, saturate; NaN saturates low), so both give
// the same bytes.
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/dynamic_quantize_rows.h"
#include "kernels/x86/quantize_avx2.h"

namespace ignis::kernels::x86 {

namespace {

constexpr int64_t kElementsPerPart = int64_t{1} << 14;

int parts_for(ThreadPool* pool, int64_t n) {
  const int64_t threads = pool ? pool->threads() : 1;
  return static_cast<int>(std::clamp<int64_t>(n / kElementsPerPart, 1, threads));
}

// [begin, end) of part `part` of `parts`, in whole vectors of 8 except the last.
void part_range(int64_t n, int part, int parts, int64_t& begin, int64_t& end) {
  begin = n * part / parts / 8 * 8;
  end = part + 1 == parts ? n : n * (part + 1) / parts / 8 * 8;
}

// min(0, min x) and max(0, max x), skipping NaN like std::min / std::max with the running
// value first.
void range_of(const float* x, int64_t begin, int64_t end, float& lo, float& hi) {
  __m256 vlo = _mm256_setzero_ps(), vhi = _mm256_setzero_ps();
  int64_t i = begin;
  // min_ps / max_ps return the second operand when either is NaN: the running value.
  for (; i + 8 <= end; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    vlo = _mm256_min_ps(v, vlo);
    vhi = _mm256_max_ps(v, vhi);
  }
  alignas(32) float l[8], h[8];
  _mm256_store_ps(l, vlo);
  _mm256_store_ps(h, vhi);
  lo = 0.0f;
  hi = 0.0f;
  for (int j = 0; j < 8; ++j) {
    lo = std::min(lo, l[j]);
    hi = std::max(hi, h[j]);
  }
  for (; i < end; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}

void quantize_range(const float* x, uint8_t* y, int64_t begin, int64_t end, float scale, uint8_t zero_point) {
  const __m256 vs = _mm256_set1_ps(scale), vz = _mm256_set1_ps(static_cast<float>(zero_point));
  const __m256 zero = _mm256_setzero_ps(), top = _mm256_set1_ps(255.0f);
  int64_t i = begin;
  for (; i + 8 <= end; i += 8) {
    __m256 q = _mm256_add_ps(_mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs),
                                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC),
                             vz);
    q = _mm256_min_ps(_mm256_max_ps(q, zero), top);  // max(NaN, 0) is 0
    const __m256i w = _mm256_cvtps_epi32(q);
    const __m128i w16 = _mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packus_epi16(w16, w16));
  }
  for (; i < end; ++i) {
    const float r = std::nearbyint(x[i] / scale) + static_cast<float>(zero_point);
    y[i] = !(r >= 0.0f) ? 0 : static_cast<uint8_t>(std::min(r, 255.0f));
  }
}

// One row of DynamicQuantizeRows: returns the row's scale.
float quantize_row(const float* x, int8_t* y, const QuantizeRowsCall& c) {
  const int64_t k = c.k;
  const __m256 abs_mask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
  __m256 vm = _mm256_setzero_ps();
  int64_t i = 0;
  // max_ps returns its second operand when either is NaN: the running maximum.
  for (; i + 8 <= k; i += 8) vm = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + i), abs_mask), vm);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, vm);
  float m = 0.0f;
  for (float v : lanes) m = std::max(m, v);
  for (; i < k; ++i) m = std::max(m, std::fabs(x[i]));
  const float scale = row_scale(m, c);

  const __m256 vs = _mm256_set1_ps(scale), lo = _mm256_set1_ps(-c.limit), hi = _mm256_set1_ps(c.limit);
  for (i = 0; i + 8 <= k; i += 8) {
    __m256 q = _mm256_round_ps(_mm256_div_ps(_mm256_loadu_ps(x + i), vs),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    q = _mm256_min_ps(_mm256_max_ps(q, lo), hi);  // max(NaN, lo) is lo
    const __m256i w = _mm256_cvtps_epi32(q);
    const __m128i w16 = _mm_packs_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), _mm_packs_epi16(w16, w16));
  }
  for (; i < k; ++i) y[i] = row_code(x[i], scale, c.limit);
  return scale;
}

}  // namespace

Status dynamic_quantize_rows_avx2(KernelContext& ctx) {
  const QuantizeRowsCall c = quantize_rows_call(ctx);
  parallel_for(ctx.pool(), c.rows, std::max<int64_t>(1, kElementsPerPart / std::max<int64_t>(c.k, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const float scale = quantize_row(c.x + r * c.k, c.y + r * c.k, c);
                   if (c.scales) c.scales[r] = scale;
                 }
               });
  return Status::ok();
}

Status dynamic_quantize_linear_avx2(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const float* xp = x.data_as<float>();
  const int64_t n = x.numel();
  const int parts = parts_for(ctx.pool(), n);
  std::vector<float> lows(static_cast<size_t>(parts)), highs(static_cast<size_t>(parts));
  parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      int64_t b, e;
      part_range(n, static_cast<int>(p), parts, b, e);
      range_of(xp, b, e, lows[static_cast<size_t>(p)], highs[static_cast<size_t>(p)]);
    }
  });
  float lo = 0.0f, hi = 0.0f;
  for (int p = 0; p < parts; ++p) {
    lo = std::min(lo, lows[static_cast<size_t>(p)]);
    hi = std::max(hi, highs[static_cast<size_t>(p)]);
  }
  const float scale = (hi - lo) / 255.0f;
  uint8_t zero_point = 0;
  if (scale > 0.0f) {
    const float z = std::nearbyint(-lo / scale);
    zero_point = !(z >= 0.0f) ? 0 : static_cast<uint8_t>(std::min(z, 255.0f));
  }
  uint8_t* yp = ctx.output(0).data_as<uint8_t>();
  if (scale > 0.0f) {
    parallel_for(ctx.pool(), parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        int64_t b, e;
        part_range(n, static_cast<int>(p), parts, b, e);
        quantize_range(xp, yp, b, e, scale, zero_point);
      }
    });
  } else {
    std::fill_n(yp, n, uint8_t{0});
  }
  if (ctx.has_output(1)) *ctx.output(1).data_as<float>() = scale;
  if (ctx.has_output(2)) *ctx.output(2).data_as<uint8_t>() = zero_point;
  return Status::ok();
}

}  // namespace ignis::kernels::x86
