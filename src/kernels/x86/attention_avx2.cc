// SPDX-License-Identifier: Apache-2.0
// AVX2/FMA attention block and row softmax (transformer_avx2.h).
//
// One block of query rows of one head runs on the calling thread, with the scores in a
// per-thread buffer small enough to stay in L2 (nn_transformer.cc sizes the blocks):
//   1. S = scale * Q K^T + mask by the sgemm, reading Q and K in place as strided column slices
//      of the [B, S, H * D] activations (K through the transposed-B path, so no copy of K^T),
//      the mask added as the GEMM epilogue's bias;
//   2. E = exp(S - rowmax(S)) in place, keeping 1 / rowsum(E);
//   3. Y = E V by the sgemm, reading V in place and writing straight into the head's columns
//      of the output, then each Y row scaled by its 1 / rowsum: dv multiplies per row instead
//      of sk for normalizing E.
//
// Row softmax: pass 1 takes the maximum (adding the mask and storing the sum when there is
// one), pass 2 stores e = exp(x - max) and sums it; softmax_f32_rows then scales by 1 / sum.
// The row is a few KiB at most, so the later passes read it from L1. Tails use masked loads
// and stores; the maximum and the sum ignore the masked lanes. NaN needs no special case: max
// may drop a NaN score, but exp(NaN - max) in pass 2 then makes the sum, and so the whole row,
// NaN, as in the reference kernel.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "kernels/x86/gemm.h"
#include "kernels/x86/transformer_avx2.h"

namespace ignis::kernels::x86 {

namespace {

alignas(64) constexpr int32_t kSoftmaxTailMask[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

// Lanes [0, n) set, n in [0, 8].
inline __m256i tail_mask(int64_t n) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kSoftmaxTailMask + 8 - n));
}

// e^x for x <= 0 (softmax arguments x - max; NaN stays NaN). Cheaper than exp_avx2, whose
// range and accuracy it matches where softmax needs them: x = n ln2 + r with |r| <= ln2 / 2,
// n found by the round-to-nearest of adding 1.5 * 2^23 (whose low mantissa bits then hold n),
// e^r by a degree-5 minimax polynomial (Cephes expf; relative error ~1e-7), and 2^n applied by
// adding n to the exponent field. x is clamped below at -86.5 so that the result stays a
// normal float (e^-86.5 = 2.6e-38, negligible next to the row maximum's term, 1).
inline __m256 exp_nonpositive(__m256 x) {
  x = _mm256_max_ps(_mm256_set1_ps(-86.5f), x);
  const __m256 magic = _mm256_set1_ps(12582912.0f);
  const __m256 t = _mm256_fmadd_ps(x, _mm256_set1_ps(1.44269504088896341f), magic);
  const __m256 n = _mm256_sub_ps(t, magic);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  const __m256i scale = _mm256_slli_epi32(_mm256_castps_si256(t), 23);
  return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), scale));
}

inline float hmax(__m256 v) {
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// y = exp(x + mask - max(x + mask)) over n floats; returns the sum of y. mask_cs 0 broadcasts
// mask[0] over the row.
float softmax_exp_row(const float* x, float* y, int64_t n, const float* mask, int64_t mask_cs) {
  const int64_t full = n / 8 * 8;
  const int64_t tail = n - full;
  const __m256i tmask = tail_mask(tail);
  const __m256 neg_inf = _mm256_set1_ps(-INFINITY);
  // Pass 1: t = x + mask (stored in y), running maximum.
  __m256 mx0 = neg_inf, mx1 = neg_inf;
  if (mask == nullptr && x == y) {
    int64_t j = 0;
    for (; j + 16 <= full; j += 16) {
      mx0 = _mm256_max_ps(mx0, _mm256_loadu_ps(x + j));
      mx1 = _mm256_max_ps(mx1, _mm256_loadu_ps(x + j + 8));
    }
    if (j < full) mx0 = _mm256_max_ps(mx0, _mm256_loadu_ps(x + j));
  } else {
    const __m256 mask_all = mask && mask_cs == 0 ? _mm256_broadcast_ss(mask) : _mm256_setzero_ps();
    for (int64_t j = 0; j < full; j += 8) {
      __m256 t = _mm256_loadu_ps(x + j);
      if (mask) t = _mm256_add_ps(t, mask_cs ? _mm256_loadu_ps(mask + j) : mask_all);
      _mm256_storeu_ps(y + j, t);
      mx0 = _mm256_max_ps(mx0, t);
    }
    if (tail) {
      __m256 t = _mm256_maskload_ps(x + full, tmask);
      if (mask) t = _mm256_add_ps(t, mask_cs ? _mm256_maskload_ps(mask + full, tmask) : mask_all);
      _mm256_maskstore_ps(y + full, tmask, t);
    }
  }
  if (tail) {
    const __m256 t = _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(y + full, tmask), _mm256_castsi256_ps(tmask));
    mx1 = _mm256_max_ps(mx1, t);
  }
  const __m256 mx = _mm256_set1_ps(hmax(_mm256_max_ps(mx0, mx1)));
  // Pass 2: e = exp(t - max), summed.
  __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
  int64_t j = 0;
  for (; j + 16 <= full; j += 16) {
    const __m256 e0 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(y + j), mx));
    const __m256 e1 = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(y + j + 8), mx));
    _mm256_storeu_ps(y + j, e0);
    _mm256_storeu_ps(y + j + 8, e1);
    s0 = _mm256_add_ps(s0, e0);
    s1 = _mm256_add_ps(s1, e1);
  }
  if (j < full) {
    const __m256 e = exp_nonpositive(_mm256_sub_ps(_mm256_loadu_ps(y + j), mx));
    _mm256_storeu_ps(y + j, e);
    s0 = _mm256_add_ps(s0, e);
  }
  if (tail) {
    const __m256 e = _mm256_and_ps(exp_nonpositive(_mm256_sub_ps(_mm256_maskload_ps(y + full, tmask), mx)),
                                   _mm256_castsi256_ps(tmask));
    _mm256_maskstore_ps(y + full, tmask, e);
    s1 = _mm256_add_ps(s1, e);
  }
  return hsum(_mm256_add_ps(s0, s1));
}

// y[0, n) *= f.
void scale_row(float* y, int64_t n, float f) {
  const int64_t full = n / 8 * 8;
  const __m256 fv = _mm256_set1_ps(f);
  for (int64_t j = 0; j < full; j += 8) _mm256_storeu_ps(y + j, _mm256_mul_ps(_mm256_loadu_ps(y + j), fv));
  if (n > full) {
    const __m256i tmask = tail_mask(n - full);
    _mm256_maskstore_ps(y + full, tmask, _mm256_mul_ps(_mm256_maskload_ps(y + full, tmask), fv));
  }
}

GemmArgs scores_gemm(const AttentionBlock& blk, float* scores) {
  GemmArgs g;
  g.m = blk.rows;
  g.n = blk.sk;
  g.k = blk.d;
  g.a = {.data = blk.q, .ld = blk.ldq};
  g.b = {.data = blk.k, .ld = blk.ldk, .trans = true};
  g.c = scores;
  g.ldc = blk.sk;
  g.alpha = blk.scale;
  if (blk.mask) g.epilogue = {.bias = blk.mask, .bias_rs = blk.mask_rs, .bias_cs = blk.mask_cs};
  return g;
}

GemmArgs context_gemm(const AttentionBlock& blk, const float* probs) {
  GemmArgs g;
  g.m = blk.rows;
  g.n = blk.dv;
  g.k = blk.sk;
  g.a = {.data = probs, .ld = blk.sk};
  g.b = {.data = blk.v, .ld = blk.ldv};
  g.c = blk.y;
  g.ldc = blk.ldy;
  return g;
}

size_t round_up_16(size_t floats) { return (floats + 15) / 16 * 16; }

}  // namespace

size_t attention_f32_block_scratch(int64_t rows, int64_t sk, int64_t d, int64_t dv) {
  AttentionBlock blk;
  blk.rows = rows;
  blk.sk = sk;
  blk.d = d;
  blk.dv = dv;
  const size_t ws = std::max(gemm_f32_thread_workspace(scores_gemm(blk, nullptr)),
                             gemm_f32_thread_workspace(context_gemm(blk, nullptr)));
  return round_up_16(static_cast<size_t>(rows * sk)) + round_up_16(static_cast<size_t>(rows)) + round_up_16(ws);
}

void attention_f32_block(const AttentionBlock& blk, float* scratch) {
  float* scores = scratch;
  float* inv_sum = scores + round_up_16(static_cast<size_t>(blk.rows * blk.sk));
  float* ws = inv_sum + round_up_16(static_cast<size_t>(blk.rows));
  const GemmArgs s = scores_gemm(blk, scores);
  gemm_f32_range(s, 0, s.m, 0, s.n, ws);
  for (int64_t i = 0; i < blk.rows; ++i) {
    float* row = scores + i * blk.sk;
    inv_sum[i] = 1.0f / softmax_exp_row(row, row, blk.sk, nullptr, 0);
  }
  const GemmArgs c = context_gemm(blk, scores);
  gemm_f32_range(c, 0, c.m, 0, c.n, ws);
  for (int64_t i = 0; i < blk.rows; ++i) scale_row(blk.y + i * blk.ldy, blk.dv, inv_sum[i]);
}

void softmax_f32_rows(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t rows, int64_t n, const float* mask,
                      int64_t mask_rs, int64_t mask_cs) {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = y + r * ldy;
    scale_row(row, n, 1.0f / softmax_exp_row(x + r * ldx, row, n, mask ? mask + r * mask_rs : nullptr, mask_cs));
  }
}

}  // namespace ignis::kernels::x86
