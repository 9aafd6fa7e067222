// SPDX-License-Identifier: Apache-2.0
// AVX2 float32 elementwise kernels: Add, Sub, Mul, Div, Max, Min with broadcasting; Relu,
// Sigmoid, Tanh, Exp, Erf, Log, Sqrt, Abs, Neg, Reciprocal, Clip, LeakyRelu; Pow by a scalar.
//
// A binary op walks its output row by row in the coalesced form of broadcast_layout.h, each
// row reading each operand contiguously or as one repeated value; forms with more than three
// coalesced dims go to the reference kernel, as do Max and Min of more than two inputs. The arithmetic is one IEEE
// operation per element (Max/Min pick an operand the way the reference does, NaN and the sign
// of zero included), so results equal the reference's exactly. Unary ops run the vector functions below or in activation_avx2.h,
// tails through masked loads and stores so every element sees the same approximation. Work
// is split over the pool only from 64 Ki elements on.
#include "kernels/x86/elementwise_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "kernels/x86/activation_avx2.h"
#include "kernels/x86/broadcast_layout.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

// Elements per part when splitting over the pool: tensors below twice this stay on the
// calling thread.
constexpr int64_t kElementsPerPart = int64_t{1} << 15;

int parts_for(ThreadPool* pool, int64_t n) {
  const int64_t threads = pool ? pool->threads() : 1;
  return static_cast<int>(std::clamp<int64_t>(n / kElementsPerPart, 1, threads));
}

// Runs fn(begin, end) over [0, n), split in `parts` contiguous ranges of whole vectors.
template <class Fn>
void run_split(ThreadPool* pool, int64_t n, const Fn& fn) {
  const int parts = parts_for(pool, n);
  if (parts == 1) {
    fn(int64_t{0}, n);
    return;
  }
  parallel_for(pool, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t part = begin; part < end; ++part) {
      const int64_t b = n * part / parts / 8 * 8, e = part + 1 == parts ? n : n * (part + 1) / parts / 8 * 8;
      if (b < e) fn(b, e);
    }
  });
}

// Lanes [0, n) of a tail, n in [0, 8].
inline __m256i tail_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// ---------------------------------------------------------------------------------------------
// Binary arithmetic

enum class BinaryOp { Add, Sub, Mul, Div, Max, Min };

// The reference's Max is `a < b ? b : a` and its Min `b < a ? b : a` (so equal operands, +0 and
// -0, give a), with a NaN operand winning. vmaxps(b, a) is `b > a ? b : a` and returns a when
// either is NaN: the blend then puts b where b is NaN.
template <BinaryOp Op>
inline __m256 apply8(__m256 a, __m256 b) {
  if constexpr (Op == BinaryOp::Add) return _mm256_add_ps(a, b);
  else if constexpr (Op == BinaryOp::Sub) return _mm256_sub_ps(a, b);
  else if constexpr (Op == BinaryOp::Mul) return _mm256_mul_ps(a, b);
  else if constexpr (Op == BinaryOp::Div) return _mm256_div_ps(a, b);
  else if constexpr (Op == BinaryOp::Max) return _mm256_blendv_ps(_mm256_max_ps(b, a), b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
  else return _mm256_blendv_ps(_mm256_min_ps(b, a), b, _mm256_cmp_ps(b, b, _CMP_UNORD_Q));
}
template <BinaryOp Op>
inline float apply1(float a, float b) {
  if constexpr (Op == BinaryOp::Add) return a + b;
  else if constexpr (Op == BinaryOp::Sub) return a - b;
  else if constexpr (Op == BinaryOp::Mul) return a * b;
  else if constexpr (Op == BinaryOp::Div) return a / b;
  else if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
  else if constexpr (Op == BinaryOp::Max) return a < b ? b : a;
  else return b < a ? b : a;
}

// z[i] = a[i * SA] op b[i * SB] for i < n, strides 0 (one repeated value) or 1.
template <BinaryOp Op, int SA, int SB>
void binary_row(const float* a, const float* b, float* z, int64_t n) {
  const __m256 va = _mm256_set1_ps(a[0]), vb = _mm256_set1_ps(b[0]);
  auto load_a = [&](int64_t i) { return SA ? _mm256_loadu_ps(a + i) : va; };
  auto load_b = [&](int64_t i) { return SB ? _mm256_loadu_ps(b + i) : vb; };
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 r0 = apply8<Op>(load_a(i), load_b(i));
    const __m256 r1 = apply8<Op>(load_a(i + 8), load_b(i + 8));
    _mm256_storeu_ps(z + i, r0);
    _mm256_storeu_ps(z + i + 8, r1);
  }
  if (i + 8 <= n) {
    _mm256_storeu_ps(z + i, apply8<Op>(load_a(i), load_b(i)));
    i += 8;
  }
  for (; i < n; ++i) z[i] = apply1<Op>(a[SA ? i : 0], b[SB ? i : 0]);
}

template <BinaryOp Op>
void binary_row_any(const float* a, int64_t sa, const float* b, int64_t sb, float* z, int64_t n) {
  if (sa && sb) binary_row<Op, 1, 1>(a, b, z, n);
  else if (sa) binary_row<Op, 1, 0>(a, b, z, n);
  else if (sb) binary_row<Op, 0, 1>(a, b, z, n);
  else binary_row<Op, 0, 0>(a, b, z, n);
}

template <BinaryOp Op>
class BinaryKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    constexpr const char* kNames[] = {"Add", "Sub", "Mul", "Div", "Max", "Min"};
    auto k = std::make_unique<BinaryKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", kNames[static_cast<int>(Op)], init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  Status run(KernelContext& ctx) const override {
    if (ctx.num_inputs() != 2) return reference_->run(ctx);  // variadic Max / Min
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    Tensor& z = ctx.output(0);
    if (b.dtype() != DType::F32) return reference_->run(ctx);
    const int64_t total = z.numel();
    if (total == 0) return Status::ok();
    BroadcastLayout l;
    if (!make_broadcast_layout(z.shape(), a.shape(), b.shape(), l)) return reference_->run(ctx);
    const float* pa = a.data_as<float>();
    const float* pb = b.data_as<float>();
    float* pz = z.data_as<float>();
    // Elements [begin, end) of the output, row piece by row piece.
    run_split(ctx.pool(), total, [&](int64_t begin, int64_t end) {
      for_each_broadcast_row(l, begin, end, [&](int64_t oa, int64_t ob, int64_t at, int64_t len) {
        binary_row_any<Op>(pa + oa, l.sa[0], pb + ob, l.sb[0], pz + at, len);
      });
    });
    return Status::ok();
  }

 private:
  std::unique_ptr<Kernel> reference_;  // operands that do not coalesce to three dims
};

// ---------------------------------------------------------------------------------------------
// Unary

// e^x over the whole float range: x is clamped to [-104, 89], where e^x has already
// underflowed to 0 or overflowed to infinity, and 2^n is applied in two halves so that both
// factors stay normal floats. The polynomial is exp_avx2's.
inline __m256 exp_full_avx2(__m256 x) {
  x = _mm256_min_ps(_mm256_set1_ps(89.0f), _mm256_max_ps(_mm256_set1_ps(-104.0f), x));
  __m256 n;
  const __m256 p = exp_reduced_avx2(x, n);
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1), n2 = _mm256_sub_epi32(ni, n1);
  const __m256i bias = _mm256_set1_epi32(127);
  const __m256 s1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, bias), 23));
  const __m256 s2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, bias), 23));
  return _mm256_mul_ps(_mm256_mul_ps(p, s1), s2);
}

// tanh |x| is the odd Taylor series through x^15 below 0.5 (truncation below 1e-8 relative)
// and 1 - 2 / (e^2|x| + 1) above, where the subtraction loses at most one bit; the sign is
// restored last.
inline __m256 tanh_avx2(__m256 x) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256 sign = _mm256_and_ps(x, sign_bit);
  const __m256 z = _mm256_andnot_ps(sign_bit, x);
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 e = exp_avx2(_mm256_add_ps(z, z));
  const __m256 large = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f), _mm256_add_ps(e, one)));
  const __m256 z2 = _mm256_mul_ps(z, z);
  __m256 p = _mm256_set1_ps(-929569.0f / 638512875.0f);
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(21844.0f / 6081075.0f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(-1382.0f / 155925.0f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(62.0f / 2835.0f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(-17.0f / 315.0f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(2.0f / 15.0f));
  p = _mm256_fmadd_ps(p, z2, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(z, z2), p, z);
  const __m256 r = _mm256_blendv_ps(large, small, _mm256_cmp_ps(z, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
  return _mm256_or_ps(r, sign);
}

// erf: below 0.75 in magnitude the Maclaurin series 2/sqrt(pi) sum (-1)^k x^(2k+1) / (k! (2k+1))
// through k = 8 (truncation below 2e-8 relative), which keeps small results accurate relative
// to their size; above, erf_avx2 (Abramowitz-Stegun 7.1.26, absolute error below 3e-7 in float).
inline __m256 erf_series_avx2(__m256 x) {
  const __m256 x2 = _mm256_mul_ps(x, x);
  __m256 p = _mm256_set1_ps(1.0f / 685440.0f);
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 75600.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.0f / 9360.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 1320.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.0f / 216.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 42.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(1.0f / 10.0f));
  p = _mm256_fmadd_ps(p, x2, _mm256_set1_ps(-1.0f / 3.0f));
  const __m256 series = _mm256_fmadd_ps(_mm256_mul_ps(x, x2), p, x);
  const __m256 small = _mm256_mul_ps(series, _mm256_set1_ps(1.12837916709551257f));
  const __m256 z = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
  return _mm256_blendv_ps(erf_avx2(x), small, _mm256_cmp_ps(z, _mm256_set1_ps(0.75f), _CMP_LT_OQ));
}

// Natural logarithm: x = 2^e m with m in [sqrt(1/2), sqrt(2)), log x = e ln2 + 2 atanh(s),
// s = (m - 1) / (m + 1), |s| <= 0.172, by the odd series through s^11 (truncation below 2e-10
// relative); m - 1 is exact (Sterbenz). Subnormal inputs are scaled by 2^23 first. Within
// 3e-7 relative of the correctly rounded result (tests/kernels/x86/elementwise_test.cc);
// 0 -> -inf, negative -> NaN, +inf and NaN pass through, as std::log.
inline __m256 log_avx2(__m256 x) {
  const __m256 tiny = _mm256_cmp_ps(x, _mm256_set1_ps(std::numeric_limits<float>::min()), _CMP_LT_OQ);
  const __m256 xs = _mm256_blendv_ps(x, _mm256_mul_ps(x, _mm256_set1_ps(8388608.0f)), tiny);
  const __m256i bits = _mm256_castps_si256(xs);
  __m256 e = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(bits, 23), _mm256_set1_epi32(127)));
  e = _mm256_sub_ps(e, _mm256_and_ps(tiny, _mm256_set1_ps(23.0f)));
  __m256 m = _mm256_castsi256_ps(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f800000)));
  const __m256 big = _mm256_cmp_ps(m, _mm256_set1_ps(1.41421356f), _CMP_GT_OQ);
  m = _mm256_blendv_ps(m, _mm256_mul_ps(m, _mm256_set1_ps(0.5f)), big);
  e = _mm256_add_ps(e, _mm256_and_ps(big, _mm256_set1_ps(1.0f)));
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 f = _mm256_sub_ps(m, one);
  const __m256 s = _mm256_div_ps(f, _mm256_add_ps(m, one));
  const __m256 s2 = _mm256_mul_ps(s, s);
  __m256 p = _mm256_set1_ps(1.0f / 11.0f);
  p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(1.0f / 9.0f));
  p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(1.0f / 7.0f));
  p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(1.0f / 5.0f));
  p = _mm256_fmadd_ps(p, s2, _mm256_set1_ps(1.0f / 3.0f));
  p = _mm256_mul_ps(p, s2);
  // log m = 2s + 2s p; ln 2 split so that e * ln2_hi is exact.
  const __m256 two_s = _mm256_add_ps(s, s);
  const __m256 log_m = _mm256_fmadd_ps(two_s, p, two_s);
  __m256 r = _mm256_fmadd_ps(e, _mm256_set1_ps(-2.12194440e-4f), log_m);
  r = _mm256_fmadd_ps(e, _mm256_set1_ps(0.693359375f), r);
  r = _mm256_blendv_ps(r, _mm256_set1_ps(-std::numeric_limits<float>::infinity()),
                       _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ));
  r = _mm256_blendv_ps(r, _mm256_set1_ps(std::numeric_limits<float>::quiet_NaN()),
                       _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ));
  const __m256 pass = _mm256_or_ps(_mm256_cmp_ps(x, x, _CMP_UNORD_Q),
                                   _mm256_cmp_ps(x, _mm256_set1_ps(std::numeric_limits<float>::infinity()), _CMP_EQ_OQ));
  return _mm256_blendv_ps(r, x, pass);
}

struct ReluFn {
  // max returns its second operand when either is NaN: NaN stays NaN, -0 stays -0.
  __m256 operator()(__m256 v) const { return _mm256_max_ps(_mm256_setzero_ps(), v); }
};
struct SigmoidFn {
  __m256 operator()(__m256 v) const { return sigmoid_avx2(v); }
};
struct TanhFn {
  __m256 operator()(__m256 v) const { return tanh_avx2(v); }
};
struct ExpFn {
  __m256 operator()(__m256 v) const { return exp_full_avx2(v); }
};
struct ErfFn {
  __m256 operator()(__m256 v) const { return erf_series_avx2(v); }
};
struct LogFn {
  __m256 operator()(__m256 v) const { return log_avx2(v); }
};
struct SqrtFn {
  __m256 operator()(__m256 v) const { return _mm256_sqrt_ps(v); }
};
struct AbsFn {
  __m256 operator()(__m256 v) const { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
};
struct NegFn {
  __m256 operator()(__m256 v) const { return _mm256_xor_ps(_mm256_set1_ps(-0.0f), v); }
};
struct ReciprocalFn {
  __m256 operator()(__m256 v) const { return _mm256_div_ps(_mm256_set1_ps(1.0f), v); }
};
// min(hi, max(lo, v)) with v second, so NaN propagates; lo > hi gives hi, as the reference.
struct ClipFn {
  __m256 lo, hi;
  __m256 operator()(__m256 v) const { return _mm256_min_ps(hi, _mm256_max_ps(lo, v)); }
};
struct LeakyReluFn {
  __m256 alpha;
  __m256 operator()(__m256 v) const {
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, alpha), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
};
template <Activation kAct>
struct ActivationFn {
  __m256 operator()(__m256 v) const {
    GemmEpilogue e;
    e.act = kAct;
    return activate_avx2(v, e);
  }
};

// f over v[0:n] in place, on the calling thread.
template <class F>
void apply_in_place(float* v, int64_t n) {
  const F f;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(v + i, f(_mm256_loadu_ps(v + i)));
  if (i < n) {
    const __m256i mask = tail_mask(n - i);
    _mm256_maskstore_ps(v + i, mask, f(_mm256_maskload_ps(v + i, mask)));
  }
}

template <class F>
Status run_unary(KernelContext& ctx, const F& f = F{}) {
  const Tensor& x = ctx.input(0);
  const float* px = x.data_as<float>();
  float* py = ctx.output(0).data_as<float>();
  run_split(ctx.pool(), x.numel(), [&](int64_t begin, int64_t end) {
    int64_t i = begin;
    for (; i + 8 <= end; i += 8) _mm256_storeu_ps(py + i, f(_mm256_loadu_ps(px + i)));
    if (i < end) {
      const __m256i mask = tail_mask(end - i);
      _mm256_maskstore_ps(py + i, mask, f(_mm256_maskload_ps(px + i, mask)));
    }
  });
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Pow by a scalar exponent

// The reference computes pow in double and rounds to float once. For the exponents below the
// same double result comes from at most one rounded double operation on exact values (a float
// squared is exact in double), so converting it to float gives the reference's value; the
// lanes are widened to double for that. x^0.5 is sqrt except at -0 (+0) and -inf (+inf).
enum class PowCase { One, Two, Three, MinusOne, MinusTwo, Half, MinusHalf, Other };

PowCase pow_case(double e) {
  if (e == 1.0) return PowCase::One;
  if (e == 2.0) return PowCase::Two;
  if (e == 3.0) return PowCase::Three;
  if (e == -1.0) return PowCase::MinusOne;
  if (e == -2.0) return PowCase::MinusTwo;
  if (e == 0.5) return PowCase::Half;
  if (e == -0.5) return PowCase::MinusHalf;
  return PowCase::Other;
}

template <PowCase C>
inline __m256d pow4(__m256d x) {
  const __m256d one = _mm256_set1_pd(1.0);
  if constexpr (C == PowCase::One) return x;
  else if constexpr (C == PowCase::Two) return _mm256_mul_pd(x, x);
  else if constexpr (C == PowCase::Three) return _mm256_mul_pd(_mm256_mul_pd(x, x), x);
  else if constexpr (C == PowCase::MinusOne) return _mm256_div_pd(one, x);
  else if constexpr (C == PowCase::MinusTwo) return _mm256_div_pd(one, _mm256_mul_pd(x, x));
  else {
    const __m256d inf = _mm256_set1_pd(std::numeric_limits<double>::infinity());
    const __m256d minus_inf = _mm256_cmp_pd(x, _mm256_sub_pd(_mm256_setzero_pd(), inf), _CMP_EQ_OQ);
    __m256d r = _mm256_add_pd(_mm256_sqrt_pd(x), _mm256_setzero_pd());  // -0 + 0 = +0
    if constexpr (C == PowCase::MinusHalf) r = _mm256_div_pd(one, r);
    return _mm256_blendv_pd(r, C == PowCase::Half ? inf : _mm256_setzero_pd(), minus_inf);
  }
}

template <PowCase C>
inline __m256 pow8(__m256 v) {
  const __m256d lo = pow4<C>(_mm256_cvtps_pd(_mm256_castps256_ps128(v)));
  const __m256d hi = pow4<C>(_mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(lo)), _mm256_cvtpd_ps(hi), 1);
}

template <PowCase C>
struct PowFn {
  __m256 operator()(__m256 v) const { return pow8<C>(v); }
};

// The single exponent value, or nullopt for a dtype this kernel does not read.
std::optional<double> scalar_exponent(const Tensor& b) {
  switch (b.dtype()) {
    case DType::F32: return static_cast<double>(b.data_as<float>()[0]);
    case DType::F64: return b.data_as<double>()[0];
    case DType::I32: return static_cast<double>(b.data_as<int32_t>()[0]);
    case DType::I64: return static_cast<double>(b.data_as<int64_t>()[0]);
    default: return std::nullopt;
  }
}

class PowKernel final : public Kernel {
 public:
  static Result<std::unique_ptr<Kernel>> create(const KernelInit& init) {
    auto k = std::make_unique<PowKernel>();
    IGNIS_ASSIGN_OR_RETURN(k->reference_, make_reference_kernel("", "Pow", init));
    return std::unique_ptr<Kernel>(std::move(k));
  }

  // A single-element exponent leaves the base's elements in their order (the output may only
  // gain leading extent-1 dims), so the base is mapped as a flat array.
  Status run(KernelContext& ctx) const override {
    const Tensor& b = ctx.input(1);
    const auto e = b.numel() == 1 ? scalar_exponent(b) : std::nullopt;
    switch (e ? pow_case(*e) : PowCase::Other) {
      case PowCase::One: return run_unary<PowFn<PowCase::One>>(ctx);
      case PowCase::Two: return run_unary<PowFn<PowCase::Two>>(ctx);
      case PowCase::Three: return run_unary<PowFn<PowCase::Three>>(ctx);
      case PowCase::MinusOne: return run_unary<PowFn<PowCase::MinusOne>>(ctx);
      case PowCase::MinusTwo: return run_unary<PowFn<PowCase::MinusTwo>>(ctx);
      case PowCase::Half: return run_unary<PowFn<PowCase::Half>>(ctx);
      case PowCase::MinusHalf: return run_unary<PowFn<PowCase::MinusHalf>>(ctx);
      case PowCase::Other: break;
    }
    return reference_->run(ctx);
  }

 private:
  std::unique_ptr<Kernel> reference_;  // tensor exponents and exponents without a fast form
};

}  // namespace

Result<std::unique_ptr<Kernel>> elementwise_f32_create_add(const KernelInit& init) {
  return BinaryKernel<BinaryOp::Add>::create(init);
}
Result<std::unique_ptr<Kernel>> elementwise_f32_create_sub(const KernelInit& init) {
  return BinaryKernel<BinaryOp::Sub>::create(init);
}
Result<std::unique_ptr<Kernel>> elementwise_f32_create_mul(const KernelInit& init) {
  return BinaryKernel<BinaryOp::Mul>::create(init);
}
Result<std::unique_ptr<Kernel>> elementwise_f32_create_div(const KernelInit& init) {
  return BinaryKernel<BinaryOp::Div>::create(init);
}
Result<std::unique_ptr<Kernel>> elementwise_f32_create_max(const KernelInit& init) {
  return BinaryKernel<BinaryOp::Max>::create(init);
}
Result<std::unique_ptr<Kernel>> elementwise_f32_create_min(const KernelInit& init) {
  return BinaryKernel<BinaryOp::Min>::create(init);
}
Result<std::unique_ptr<Kernel>> elementwise_f32_create_pow(const KernelInit& init) { return PowKernel::create(init); }

Status elementwise_f32_relu(KernelContext& ctx) { return run_unary<ReluFn>(ctx); }
Status elementwise_f32_sigmoid(KernelContext& ctx) { return run_unary<SigmoidFn>(ctx); }
Status elementwise_f32_tanh(KernelContext& ctx) { return run_unary<TanhFn>(ctx); }
Status elementwise_f32_exp(KernelContext& ctx) { return run_unary<ExpFn>(ctx); }
Status elementwise_f32_erf(KernelContext& ctx) { return run_unary<ErfFn>(ctx); }
Status elementwise_f32_log(KernelContext& ctx) { return run_unary<LogFn>(ctx); }
Status elementwise_f32_sqrt(KernelContext& ctx) { return run_unary<SqrtFn>(ctx); }
Status elementwise_f32_abs(KernelContext& ctx) { return run_unary<AbsFn>(ctx); }
Status elementwise_f32_neg(KernelContext& ctx) { return run_unary<NegFn>(ctx); }
Status elementwise_f32_reciprocal(KernelContext& ctx) { return run_unary<ReciprocalFn>(ctx); }
Status elementwise_f32_clip(KernelContext& ctx) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (ctx.opset() < 11) {
    lo = ctx.attrs().get_float("min", lo);
    hi = ctx.attrs().get_float("max", hi);
  } else {
    if (ctx.has_input(1)) lo = ctx.input(1).data_as<float>()[0];
    if (ctx.has_input(2)) hi = ctx.input(2).data_as<float>()[0];
  }
  return run_unary(ctx, ClipFn{_mm256_set1_ps(lo), _mm256_set1_ps(hi)});
}
Status elementwise_f32_leaky_relu(KernelContext& ctx) {
  return run_unary(ctx, LeakyReluFn{_mm256_set1_ps(ctx.attrs().get_float("alpha", 0.01f))});
}
Status elementwise_f32_gelu(KernelContext& ctx) {
  if (ctx.attrs().get_string("approximate", "none") == "tanh") return run_unary<ActivationFn<Activation::GeluTanh>>(ctx);
  return run_unary<ActivationFn<Activation::Gelu>>(ctx);
}

void sigmoid_f32_in_place(float* v, int64_t n) { apply_in_place<SigmoidFn>(v, n); }
void tanh_f32_in_place(float* v, int64_t n) { apply_in_place<TanhFn>(v, n); }

}  // namespace ignis::kernels::x86
