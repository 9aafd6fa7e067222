// SPDX-License-Identifier: Apache-2.0
// Vectorized activations of the GEMM/Conv epilogue (8 float32 lanes), for the *_avx2.cc
// files only: everything here uses AVX2/FMA intrinsics. Internal linkage on purpose (see
// gemm_blocked.h): each file keeps its own copy, compiled with its own flags.
//
// exp: x = n ln2 + r with |r| <= ln2 / 2, e^r by its Taylor series through r^7 (truncation
// below 6e-9 relative), scaled by 2^n through the exponent bits; inputs are clamped to
// [-87.3, 88.3] so that 2^n stays a normal float. sigmoid = 1 / (1 + e^-x) with an exact
// division; tanh-GELU is x * sigmoid(2u). erf uses the rational approximation of Abramowitz
// and Stegun 7.1.26 (absolute error below 1.5e-7).
#pragma once

#include <immintrin.h>

#include "kernels/x86/gemm.h"
#include "kernels/x86/with_activation.h"

namespace ignis::kernels::x86 {
namespace {

// e^x = 2^n * e^r: returns e^r and sets n (a whole number as float), for x already clamped.
inline __m256 exp_reduced_avx2(__m256 x, __m256& n) {
  n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  // ln 2 split in two so that n * ln2_hi is exact.
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.0f / 5040.0f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 720.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 120.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 24.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f / 6.0f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(0.5f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
  return _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.0f));
}

inline __m256 exp_avx2(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(88.3f), _mm256_max_ps(_mm256_set1_ps(-87.3f), x));
  __m256 n;
  const __m256 p = exp_reduced_avx2(x, n);
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  return _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
}

// 1 / (1 + e^-x)
inline __m256 sigmoid_avx2(__m256 x) {
  const __m256 one = _mm256_set1_ps(1.0f);
  return _mm256_div_ps(one, _mm256_add_ps(one, exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

inline __m256 erf_avx2(__m256 x) {
  const __m256 sign = _mm256_and_ps(x, _mm256_set1_ps(-0.0f));
  const __m256 z = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 t = _mm256_div_ps(one, _mm256_fmadd_ps(z, _mm256_set1_ps(0.3275911f), one));
  __m256 p = _mm256_set1_ps(1.061405429f);
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-1.453152027f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(1.421413741f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(-0.284496736f));
  p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(0.254829592f));
  p = _mm256_mul_ps(p, t);
  const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(z, z)));
  const __m256 y = _mm256_fnmadd_ps(p, e, one);  // erf(|x|)
  return _mm256_or_ps(y, sign);
}

// The activation's parameters broadcast once per tile.
struct ActivationParams256 {
  __m256 lo, hi, alpha, beta;
  explicit ActivationParams256(const GemmEpilogue& e)
      : lo(_mm256_set1_ps(e.act_lo)),
        hi(_mm256_set1_ps(e.act_hi)),
        alpha(_mm256_set1_ps(e.act_alpha)),
        beta(_mm256_set1_ps(e.act_beta)) {}
};

// Activation A (the one of the epilogue `k` was made from) on 8 lanes. A template so that a
// loop over vectors carries no per-vector switch. max/min return their second operand when
// either is NaN: v goes second so that NaN propagates, as in the reference kernels.
template <Activation A>
inline __m256 activate_avx2(__m256 v, const ActivationParams256& k) {
  const __m256 zero = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
  if constexpr (A == Activation::None) {
    return v;
  } else if constexpr (A == Activation::Relu) {
    return _mm256_max_ps(zero, v);
  } else if constexpr (A == Activation::Clip) {
    return _mm256_min_ps(k.hi, _mm256_max_ps(k.lo, v));
  } else if constexpr (A == Activation::LeakyRelu) {
    const __m256 neg = _mm256_cmp_ps(v, zero, _CMP_LT_OQ);
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, k.alpha), neg);
  } else if constexpr (A == Activation::Sigmoid) {
    return sigmoid_avx2(v);
  } else if constexpr (A == Activation::HardSigmoid) {
    return _mm256_max_ps(zero, _mm256_min_ps(one, _mm256_fmadd_ps(v, k.alpha, k.beta)));
  } else if constexpr (A == Activation::HardSwish) {
    const __m256 gate = _mm256_fmadd_ps(v, _mm256_set1_ps(1.0f / 6.0f), _mm256_set1_ps(0.5f));
    return _mm256_mul_ps(v, _mm256_max_ps(zero, _mm256_min_ps(one, gate)));
  } else if constexpr (A == Activation::SiLU) {
    return _mm256_mul_ps(v, sigmoid_avx2(v));
  } else if constexpr (A == Activation::Gelu) {
    const __m256 half_v = _mm256_mul_ps(v, _mm256_set1_ps(0.5f));
    const __m256 erf = erf_avx2(_mm256_mul_ps(v, _mm256_set1_ps(0.70710678118654752f)));
    return _mm256_fmadd_ps(half_v, erf, half_v);
  } else {
    static_assert(A == Activation::GeluTanh, "every Activation has a branch");
    // 0.5 v (1 + tanh(u)) = v * sigmoid(2u), u = sqrt(2 / pi) (v + 0.044715 v^3)
    const __m256 v2 = _mm256_mul_ps(v, v);
    const __m256 inner = _mm256_fmadd_ps(_mm256_mul_ps(v2, v), _mm256_set1_ps(0.044715f), v);
    return _mm256_mul_ps(v, sigmoid_avx2(_mm256_mul_ps(inner, _mm256_set1_ps(2.0f * 0.7978845608028654f))));
  }
}

// The epilogue's activation on 8 lanes, chosen at run time (one switch per call).
inline __m256 activate_avx2(__m256 v, const GemmEpilogue& e) {
  return with_activation(e.act, [&]<Activation A>() { return activate_avx2<A>(v, ActivationParams256(e)); });
}

}  // namespace
}  // namespace ignis::kernels::x86
