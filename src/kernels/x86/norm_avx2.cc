// SPDX-License-Identifier: Apache-2.0
// AVX2/FMA last-axis layer normalization of one row (transformer_avx2.h), the body of the x86
// LayerNormalization and SkipLayerNorm kernels.
//
// Three passes over a row that stays in L1 (a few KiB): pass 1 forms s = a + b + bias,
// stores it when it is not simply `a`, and sums it; pass 2 sums d = s - mean and d^2 (the
// corrected two-pass formula: var = (sum d^2 - (sum d)^2 / n) / n, where the second term
// removes the rounding error of the float mean, and no E[s^2] - E[s]^2 cancellation occurs);
// pass 3 writes (s - mean) * inv_std * gamma + beta, with s - mean formed as (s - mean0) - the
// small correction. Sums run in four 8-lane float
// accumulators; the scalar mean and inverse deviation are formed in double.
#include <immintrin.h>

#include <cmath>

#include "kernels/x86/transformer_avx2.h"

namespace ignis::kernels::x86 {

namespace {

alignas(64) constexpr int32_t kNormTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, n) set, n in [0, 8].
inline __m256i tail_mask(int64_t n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kNormTailMask + 8 - n));
}

inline double hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return static_cast<double>(_mm_cvtss_f32(s));
}

// s[j] for j in [j, j + 8): a + b + bias, lanes outside `mask` zero when kTail.
template <bool kTail>
inline __m256 load_sum(const LayerNormRow& r, int64_t j, __m256i mask) {
  auto load = [&](const float* p) { return kTail ? _mm256_maskload_ps(p + j, mask) : _mm256_loadu_ps(p + j); };
  __m256 v = load(r.a);
  if (r.b) v = _mm256_add_ps(v, load(r.b));
  if (r.bias) v = _mm256_add_ps(v, load(r.bias));
  return v;
}

}  // namespace

void layer_norm_f32_row(const LayerNormRow& r) {
  const int64_t n = r.n;
  const int64_t full = n / 8 * 8;
  const int64_t tail = n - full;
  const __m256i tmask = tail_mask(tail);
  // Pass 1: s, stored to `sum`, else to y when it differs from a; its sum.
  float* dst = r.sum ? r.sum : (r.b || r.bias ? r.y : nullptr);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t j = 0; j < full; j += 8) {
    const __m256 v = load_sum<false>(r, j, tmask);
    if (dst) _mm256_storeu_ps(dst + j, v);
    acc[(j >> 3) & 3] = _mm256_add_ps(acc[(j >> 3) & 3], v);
  }
  if (tail) {
    const __m256 v = load_sum<true>(r, full, tmask);
    if (dst) _mm256_maskstore_ps(dst + full, tmask, v);
    acc[3] = _mm256_add_ps(acc[3], v);
  }
  const float* s = dst ? dst : r.a;
  const double dn = static_cast<double>(n);
  const float mean0 =
      static_cast<float>(hsum(_mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3]))) / dn);
  // Pass 2: sum of d = s - mean0 and of d^2.
  const __m256 m0 = _mm256_set1_ps(mean0);
  __m256 sd[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  __m256 sq[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int64_t j = 0; j < full; j += 8) {
    const __m256 d = _mm256_sub_ps(_mm256_loadu_ps(s + j), m0);
    const int k = (j >> 3) & 1;
    sd[k] = _mm256_add_ps(sd[k], d);
    sq[k] = _mm256_fmadd_ps(d, d, sq[k]);
  }
  if (tail) {
    const __m256 d = _mm256_and_ps(_mm256_sub_ps(_mm256_maskload_ps(s + full, tmask), m0), _mm256_castsi256_ps(tmask));
    sd[1] = _mm256_add_ps(sd[1], d);
    sq[1] = _mm256_fmadd_ps(d, d, sq[1]);
  }
  const double sum_d = hsum(_mm256_add_ps(sd[0], sd[1]));
  const double sum_d2 = hsum(_mm256_add_ps(sq[0], sq[1]));
  const double shift = sum_d / dn;  // mean - mean0
  double var = (sum_d2 - sum_d * shift) / dn;
  if (var < 0.0) var = 0.0;  // rounding; NaN stays NaN
  const double inv = 1.0 / std::sqrt(var + static_cast<double>(r.eps));
  if (r.mean_out) *r.mean_out = static_cast<float>(static_cast<double>(mean0) + shift);
  if (r.inv_out) *r.inv_out = static_cast<float>(inv);
  // Pass 3: y = ((s - mean0) - shift) * inv * gamma + beta. Rows far from zero relative to
  // their spread keep their precision: s - mean0 is exact when s is within a factor of two of
  // mean0, where s - float(mean) would round at the scale of the mean.
  const __m256 cv = _mm256_set1_ps(static_cast<float>(shift));
  const __m256 iv = _mm256_set1_ps(static_cast<float>(inv));
  for (int64_t j = 0; j < full; j += 8) {
    const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_loadu_ps(s + j), m0), cv), iv);
    const __m256 g = _mm256_loadu_ps(r.gamma + j);
    const __m256 y = r.beta ? _mm256_fmadd_ps(t, g, _mm256_loadu_ps(r.beta + j)) : _mm256_mul_ps(t, g);
    _mm256_storeu_ps(r.y + j, y);
  }
  if (tail) {
    const __m256 t = _mm256_mul_ps(_mm256_sub_ps(_mm256_sub_ps(_mm256_maskload_ps(s + full, tmask), m0), cv), iv);
    const __m256 g = _mm256_maskload_ps(r.gamma + full, tmask);
    const __m256 y =
        r.beta ? _mm256_fmadd_ps(t, g, _mm256_maskload_ps(r.beta + full, tmask)) : _mm256_mul_ps(t, g);
    _mm256_maskstore_ps(r.y + full, tmask, y);
  }
}

}  // namespace ignis::kernels::x86
