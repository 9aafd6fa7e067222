// SPDX-License-Identifier: Apache-2.0
// The GEMM/Conv epilogue activations on 16 float32 lanes, for the *_avx512.cc files only
// (AVX-512F intrinsics). Every function performs the same operations, in the same order and
// with the same constants, as its 8-lane twin in activation_avx2.h, so that both GEMM tiles
// compute the same approximations (described there, with their error). AVX-512F has no float bitwise ops
// (those are AVX-512DQ): sign handling goes through the integer forms. Intrinsics with an
// undefined pass-through operand (min, max, rounding, conversion, shifts, bitwise ops) are
// used in their zero-masked forms with every lane selected, which GCC 12 does not flag as
// maybe-uninitialized. min/max, like vminps/vmaxps, return the second operand when either is
// NaN; v always goes second so that NaN propagates through every activation, as in ONNX's
// reference implementation and onnxruntime.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/gemm.h"
#include "kernels/x86/with_activation.h"

namespace ignis::kernels::x86 {
namespace {

inline __m512 max_avx512(__m512 a, __m512 b) { return _mm512_maskz_max_ps(0xFFFF, a, b); }
inline __m512 min_avx512(__m512 a, __m512 b) { return _mm512_maskz_min_ps(0xFFFF, a, b); }

// e^x = 2^n * e^r: returns e^r and sets n (a whole number as float), for x already clamped.
inline __m512 exp_reduced_avx512(__m512 x, __m512& n) {
  n = _mm512_maskz_roundscale_ps(0xFFFF, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                 _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040.0f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
}

// e^x for x in [-87.3, 88.3] (clamped there), as exp_avx2.
inline __m512 exp_avx512(__m512 x) {
  x = min_avx512(_mm512_set1_ps(88.3f), max_avx512(_mm512_set1_ps(-87.3f), x));
  __m512 n;
  const __m512 p = exp_reduced_avx512(x, n);
  const __m512i biased = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(0xFFFF, n), _mm512_set1_epi32(127));
  const __m512i bits = _mm512_maskz_slli_epi32(0xFFFF, biased, 23);
  return _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
}

// 1 / (1 + e^-x)
inline __m512 sigmoid_avx512(__m512 x) {
  const __m512 one = _mm512_set1_ps(1.0f);
  return _mm512_div_ps(one, _mm512_add_ps(one, exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

// Abramowitz-Stegun 7.1.26 on |x|, the sign restored last, as erf_avx2.
inline __m512 erf_avx512(__m512 x) {
  const __m512i xi = _mm512_castps_si512(x);
  const __m512i sign = _mm512_maskz_and_epi32(0xFFFF, xi, _mm512_set1_epi32(INT32_MIN));
  const __m512 z = _mm512_castsi512_ps(_mm512_maskz_andnot_epi32(0xFFFF, _mm512_set1_epi32(INT32_MIN), xi));
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 t = _mm512_div_ps(one, _mm512_fmadd_ps(z, _mm512_set1_ps(0.3275911f), one));
  __m512 p = _mm512_set1_ps(1.061405429f);
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-1.453152027f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(1.421413741f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(-0.284496736f));
  p = _mm512_fmadd_ps(p, t, _mm512_set1_ps(0.254829592f));
  p = _mm512_mul_ps(p, t);
  const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(z, z)));
  const __m512 y = _mm512_fnmadd_ps(p, e, one);  // erf(|x|)
  return _mm512_castsi512_ps(_mm512_maskz_or_epi32(0xFFFF, _mm512_castps_si512(y), sign));
}

// The activation's parameters broadcast once per tile.
struct ActivationParams512 {
  __m512 lo, hi, alpha, beta;
  explicit ActivationParams512(const GemmEpilogue& e)
      : lo(_mm512_set1_ps(e.act_lo)),
        hi(_mm512_set1_ps(e.act_hi)),
        alpha(_mm512_set1_ps(e.act_alpha)),
        beta(_mm512_set1_ps(e.act_beta)) {}
};

// Activation A (the one of the epilogue `k` was made from) on 16 lanes. A template so that
// the tile's row loop carries no per-vector switch.
template <Activation A>
inline __m512 activate_avx512(__m512 v, const ActivationParams512& k) {
  const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
  if constexpr (A == Activation::None) {
    return v;
  } else if constexpr (A == Activation::Relu) {
    return max_avx512(zero, v);
  } else if constexpr (A == Activation::Clip) {
    return min_avx512(k.hi, max_avx512(k.lo, v));
  } else if constexpr (A == Activation::LeakyRelu) {
    // Ordered compare: NaN lanes keep v.
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, zero, _CMP_LT_OQ), v, k.alpha);
  } else if constexpr (A == Activation::Sigmoid) {
    return sigmoid_avx512(v);
  } else if constexpr (A == Activation::HardSigmoid) {
    return max_avx512(zero, min_avx512(one, _mm512_fmadd_ps(v, k.alpha, k.beta)));
  } else if constexpr (A == Activation::HardSwish) {
    const __m512 gate = _mm512_fmadd_ps(v, _mm512_set1_ps(1.0f / 6.0f), _mm512_set1_ps(0.5f));
    return _mm512_mul_ps(v, max_avx512(zero, min_avx512(one, gate)));
  } else if constexpr (A == Activation::SiLU) {
    return _mm512_mul_ps(v, sigmoid_avx512(v));
  } else if constexpr (A == Activation::Gelu) {
    const __m512 half_v = _mm512_mul_ps(v, _mm512_set1_ps(0.5f));
    const __m512 erf = erf_avx512(_mm512_mul_ps(v, _mm512_set1_ps(0.70710678118654752f)));
    return _mm512_fmadd_ps(half_v, erf, half_v);
  } else {
    static_assert(A == Activation::GeluTanh, "every Activation has a branch");
    // 0.5 v (1 + tanh(u)) = v * sigmoid(2u), u = sqrt(2 / pi) (v + 0.044715 v^3)
    const __m512 v2 = _mm512_mul_ps(v, v);
    const __m512 inner = _mm512_fmadd_ps(_mm512_mul_ps(v2, v), _mm512_set1_ps(0.044715f), v);
    return _mm512_mul_ps(v, sigmoid_avx512(_mm512_mul_ps(inner, _mm512_set1_ps(2.0f * 0.7978845608028654f))));
  }
}

// The epilogue's activation on 16 lanes, chosen at run time (one switch per call).
inline __m512 activate_avx512(__m512 v, const GemmEpilogue& e) {
  return with_activation(e.act, [&]<Activation A>() { return activate_avx512<A>(v, ActivationParams512(e)); });
}

}  // namespace
}  // namespace ignis::kernels::x86
