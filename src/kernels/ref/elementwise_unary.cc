// SPDX-License-Identifier: Apache-2.0
// Reference kernels for unary elementwise ops: math functions, activations, predicates and Clip.
// Each is one flat loop over the contiguous input, split across the pool. fp16/bf16 compute in
// float and round back; integers use exact, wrapping arithmetic.
#include <cmath>
#include <cstring>
#include <limits>
#include <numbers>
#include <type_traits>

#include "kernels/ref/elementwise_internal.h"

namespace ignis::kernels::ref {
namespace {

using namespace ew;

template <class T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || is_half_like_v<T>;
template <class T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
inline constexpr bool kIsNumeric = kIsFloat<T> || kIsInt<T>;
template <class T>
inline constexpr bool kIsSignedNumeric = kIsFloat<T> || (kIsInt<T> && std::is_signed_v<T>);

enum class Domain { Float, Numeric, SignedNumeric, Int, Bool };

template <Domain D, class T>
constexpr bool in_domain() {
  if constexpr (D == Domain::Float) return kIsFloat<T>;
  else if constexpr (D == Domain::Numeric) return kIsNumeric<T>;
  else if constexpr (D == Domain::SignedNumeric) return kIsSignedNumeric<T>;
  else if constexpr (D == Domain::Int) return kIsInt<T>;
  else return std::is_same_v<T, bool>;
}

// y[i] = op(x[i]) computed on compute_t values; TO is T or bool.
template <class TI, class TO, class Op>
void unary_map(ThreadPool* pool, const Tensor& in, Tensor& out, const Op& op) {
  const TI* x = static_cast<const TI*>(in.data());
  TO* y = out.data_as<TO>();
  parallel_for(pool, in.numel(), kGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = store_as<TO>(op(to_compute(x[i])));
  });
}

// Runs `op` on input 0 for dtypes in D, writing T (or bool when BoolOut).
template <Domain D, bool BoolOut = false, class Op>
Status run_unary(KernelContext& ctx, std::string_view name, const Op& op) {
  const Tensor& x = ctx.input(0);
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (in_domain<D, T>()) {
      using TO = std::conditional_t<BoolOut, bool, T>;
      unary_map<T, TO>(ctx.pool(), x, ctx.output(0), op);
      return Status::ok();
    } else {
      return dtype_unsupported(name, x.dtype());
    }
  });
}

// Float-only ops: `f` is a generic lambda on float or double.
template <class F>
Status run_float(KernelContext& ctx, std::string_view name, F f) {
  return run_unary<Domain::Float>(ctx, name, f);
}

// ---------------------------------------------------------------------------------------------
// Math

Status abs_kernel(KernelContext& ctx) {
  return run_unary<Domain::Numeric>(ctx, "Abs", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) return std::fabs(x);
    else if constexpr (std::is_signed_v<C>) return x < 0 ? wrap_neg(x) : x;
    else return x;
  });
}

Status neg_kernel(KernelContext& ctx) {
  return run_unary<Domain::SignedNumeric>(ctx, "Neg", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) return -x;
    else return wrap_neg(x);
  });
}

Status sign_kernel(KernelContext& ctx) {
  return run_unary<Domain::Numeric>(ctx, "Sign", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(x)) return x;
      return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));
    } else if constexpr (std::is_signed_v<C>) {
      return static_cast<C>(x > 0 ? 1 : (x < 0 ? -1 : 0));
    } else {
      return static_cast<C>(x > 0 ? 1 : 0);
    }
  });
}

Status reciprocal_kernel(KernelContext& ctx) {
  return run_float(ctx, "Reciprocal", [](auto x) { return decltype(x)(1) / x; });
}
Status floor_kernel(KernelContext& ctx) {
  return run_float(ctx, "Floor", [](auto x) { return std::floor(x); });
}
Status ceil_kernel(KernelContext& ctx) {
  return run_float(ctx, "Ceil", [](auto x) { return std::ceil(x); });
}
Status round_kernel(KernelContext& ctx) {
  return run_float(ctx, "Round", [](auto x) { return round_half_even(x); });
}
Status sqrt_kernel(KernelContext& ctx) {
  return run_float(ctx, "Sqrt", [](auto x) { return std::sqrt(x); });
}
Status exp_kernel(KernelContext& ctx) {
  return run_float(ctx, "Exp", [](auto x) { return std::exp(x); });
}
Status log_kernel(KernelContext& ctx) {
  return run_float(ctx, "Log", [](auto x) { return std::log(x); });
}
Status sin_kernel(KernelContext& ctx) {
  return run_float(ctx, "Sin", [](auto x) { return std::sin(x); });
}
Status cos_kernel(KernelContext& ctx) {
  return run_float(ctx, "Cos", [](auto x) { return std::cos(x); });
}
Status tan_kernel(KernelContext& ctx) {
  return run_float(ctx, "Tan", [](auto x) { return std::tan(x); });
}
Status asin_kernel(KernelContext& ctx) {
  return run_float(ctx, "Asin", [](auto x) { return std::asin(x); });
}
Status acos_kernel(KernelContext& ctx) {
  return run_float(ctx, "Acos", [](auto x) { return std::acos(x); });
}
Status atan_kernel(KernelContext& ctx) {
  return run_float(ctx, "Atan", [](auto x) { return std::atan(x); });
}
Status sinh_kernel(KernelContext& ctx) {
  return run_float(ctx, "Sinh", [](auto x) { return std::sinh(x); });
}
Status cosh_kernel(KernelContext& ctx) {
  return run_float(ctx, "Cosh", [](auto x) { return std::cosh(x); });
}
Status asinh_kernel(KernelContext& ctx) {
  return run_float(ctx, "Asinh", [](auto x) { return std::asinh(x); });
}
Status acosh_kernel(KernelContext& ctx) {
  return run_float(ctx, "Acosh", [](auto x) { return std::acosh(x); });
}
Status atanh_kernel(KernelContext& ctx) {
  return run_float(ctx, "Atanh", [](auto x) { return std::atanh(x); });
}

// Erf on integers (allowed by opset 9..12) is computed in double and truncated back.
Status erf_kernel(KernelContext& ctx) {
  return run_unary<Domain::Numeric>(ctx, "Erf", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) return std::erf(x);
    else return std::erf(static_cast<double>(x));
  });
}

Status isnan_kernel(KernelContext& ctx) {
  return run_unary<Domain::Float, true>(ctx, "IsNaN", [](auto x) { return std::isnan(x); });
}

Status isinf_kernel(KernelContext& ctx) {
  const bool neg = ctx.attrs().get_int("detect_negative", 1) != 0;
  const bool pos = ctx.attrs().get_int("detect_positive", 1) != 0;
  return run_unary<Domain::Float, true>(ctx, "IsInf", [neg, pos](auto x) {
    return std::isinf(x) && ((x > 0 && pos) || (x < 0 && neg));
  });
}

Status not_kernel(KernelContext& ctx) {
  return run_unary<Domain::Bool>(ctx, "Not", [](bool x) { return !x; });
}

Status bitwise_not_kernel(KernelContext& ctx) {
  return run_unary<Domain::Int>(ctx, "BitwiseNot", [](auto x) { return static_cast<decltype(x)>(~x); });
}

// ---------------------------------------------------------------------------------------------
// Activations

Status relu_kernel(KernelContext& ctx) {
  return run_unary<Domain::SignedNumeric>(ctx, "Relu", [](auto x) {
    using C = decltype(x);
    if constexpr (std::is_floating_point_v<C>) return x < C(0) ? C(0) : x;  // NaN stays NaN
    else return x < 0 ? C(0) : x;
  });
}

Status leaky_relu_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 0.01f);
  return run_float(ctx, "LeakyRelu", [alpha](auto x) {
    using C = decltype(x);
    return x < C(0) ? C(alpha) * x : x;
  });
}

// 1 / (1 + e^-x) without overflow of e^-x for large negative x.
template <class C>
C sigmoid(C x) {
  if (x >= C(0)) return C(1) / (C(1) + std::exp(-x));
  const C e = std::exp(x);
  return e / (C(1) + e);
}

Status sigmoid_kernel(KernelContext& ctx) {
  return run_float(ctx, "Sigmoid", [](auto x) { return sigmoid(x); });
}

// Swish-24: x * sigmoid(alpha * x).
Status swish_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 1.0f);
  return run_float(ctx, "Swish", [alpha](auto x) { return x * sigmoid(decltype(x)(alpha) * x); });
}

Status hard_sigmoid_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 0.2f);
  const float beta = ctx.attrs().get_float("beta", 0.5f);
  return run_float(ctx, "HardSigmoid", [alpha, beta](auto x) {
    using C = decltype(x);
    const C y = C(alpha) * x + C(beta);
    return std::isnan(y) ? y : std::max(C(0), std::min(C(1), y));  // NaN stays NaN, as in ONNX
  });
}

Status hard_swish_kernel(KernelContext& ctx) {
  return run_float(ctx, "HardSwish", [](auto x) {
    using C = decltype(x);
    return x * std::max(C(0), std::min(C(1), x / C(6) + C(0.5)));
  });
}

Status tanh_kernel(KernelContext& ctx) {
  return run_float(ctx, "Tanh", [](auto x) { return std::tanh(x); });
}

Status elu_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 1.0f);
  return run_float(ctx, "Elu", [alpha](auto x) {
    using C = decltype(x);
    return x < C(0) ? C(alpha) * std::expm1(x) : x;
  });
}

Status selu_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 1.67326319217681884765625f);
  const float gamma = ctx.attrs().get_float("gamma", 1.05070102214813232421875f);
  return run_float(ctx, "Selu", [alpha, gamma](auto x) {
    using C = decltype(x);
    return x > C(0) ? C(gamma) * x : C(gamma) * C(alpha) * std::expm1(x);
  });
}

Status celu_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 1.0f);
  return run_float(ctx, "Celu", [alpha](auto x) {
    using C = decltype(x);
    return std::max(C(0), x) + std::min(C(0), C(alpha) * std::expm1(x / C(alpha)));
  });
}

// log(1 + e^x) without overflow for large x.
template <class C>
C softplus(C x) {
  return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

Status softplus_kernel(KernelContext& ctx) {
  return run_float(ctx, "Softplus", [](auto x) { return softplus(x); });
}

Status softsign_kernel(KernelContext& ctx) {
  return run_float(ctx, "Softsign", [](auto x) { return x / (decltype(x)(1) + std::fabs(x)); });
}

Status thresholded_relu_kernel(KernelContext& ctx) {
  const float alpha = ctx.attrs().get_float("alpha", 1.0f);
  return run_float(ctx, "ThresholdedRelu", [alpha](auto x) {
    using C = decltype(x);
    return x > C(alpha) ? x : C(0);
  });
}

Status mish_kernel(KernelContext& ctx) {
  return run_float(ctx, "Mish", [](auto x) { return x * std::tanh(softplus(x)); });
}

Status gelu_kernel(KernelContext& ctx) {
  if (ctx.attrs().get_string("approximate", "none") == "tanh") {
    return run_float(ctx, "Gelu", [](auto x) {
      using C = decltype(x);
      const C k = static_cast<C>(std::sqrt(2.0 / std::numbers::pi));
      return C(0.5) * x * (C(1) + std::tanh(k * (x + C(0.044715) * x * x * x)));
    });
  }
  return run_float(ctx, "Gelu", [](auto x) {
    using C = decltype(x);
    return C(0.5) * x * (C(1) + std::erf(x * static_cast<C>(std::numbers::sqrt2 / 2)));
  });
}

// Shrink on integers follows the spec's formula in double and converts back.
Status shrink_kernel(KernelContext& ctx) {
  const double bias = ctx.attrs().get_float("bias", 0.0f);
  const double lambd = ctx.attrs().get_float("lambd", 0.5f);
  return run_unary<Domain::Numeric>(ctx, "Shrink", [bias, lambd](auto x) {
    using C = decltype(x);
    if constexpr (std::is_same_v<C, float>) {
      const float b = static_cast<float>(bias), l = static_cast<float>(lambd);
      return x < -l ? x + b : (x > l ? x - b : 0.0f);
    } else {
      const double v = static_cast<double>(x);
      return v < -lambd ? v + bias : (v > lambd ? v - bias : 0.0);
    }
  });
}

// Clip: bounds from attributes (opset < 11) or optional scalar inputs; an absent bound is the
// type's lowest/max. min > max yields max everywhere, as the spec says.
Status clip_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsNumeric<T>) {
      using C = compute_t<T>;
      C lo, hi;
      if constexpr (std::is_same_v<T, Half>) {
        lo = -65504.0f;
        hi = 65504.0f;
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        lo = bf16_to_float(0xff7f);
        hi = bf16_to_float(0x7f7f);
      } else {
        lo = std::numeric_limits<T>::lowest();
        hi = std::numeric_limits<T>::max();
      }
      if (ctx.opset() < 11) {
        if (ctx.attrs().has("min")) lo = static_cast<C>(ctx.attrs().get_float("min"));
        if (ctx.attrs().has("max")) hi = static_cast<C>(ctx.attrs().get_float("max"));
      } else {
        if (ctx.has_input(1)) lo = to_compute(static_cast<const T*>(ctx.input(1).data())[0]);
        if (ctx.has_input(2)) hi = to_compute(static_cast<const T*>(ctx.input(2).data())[0]);
      }
      unary_map<T, T>(ctx.pool(), x, ctx.output(0), [lo, hi](C v) {
        const C a = v < lo ? lo : v;
        return a > hi ? hi : a;
      });
      return Status::ok();
    } else {
      return dtype_unsupported("Clip", x.dtype());
    }
  });
}

struct UnaryEntry {
  std::string_view op;
  int since;
  DTypeSet types;
  std::string_view id;
  KernelFn fn;
};

}  // namespace

void register_elementwise_unary(KernelRegistry& r) {
  const DTypeSet f = DTypeSet::floats();
  const DTypeSet n = DTypeSet::numeric();
  const DTypeSet sn = DTypeSet::floats() | DTypeSet::signed_ints();
  const UnaryEntry entries[] = {
      {"Abs", 1, n, "ref/abs", abs_kernel},
      {"Neg", 1, sn, "ref/neg", neg_kernel},
      {"Sign", 9, n, "ref/sign", sign_kernel},
      {"Reciprocal", 1, f, "ref/reciprocal", reciprocal_kernel},
      {"Floor", 1, f, "ref/floor", floor_kernel},
      {"Ceil", 1, f, "ref/ceil", ceil_kernel},
      {"Round", 11, f, "ref/round", round_kernel},
      {"Sqrt", 1, f, "ref/sqrt", sqrt_kernel},
      {"Exp", 1, f, "ref/exp", exp_kernel},
      {"Log", 1, f, "ref/log", log_kernel},
      {"Sin", 7, f, "ref/sin", sin_kernel},
      {"Cos", 7, f, "ref/cos", cos_kernel},
      {"Tan", 7, f, "ref/tan", tan_kernel},
      {"Asin", 7, f, "ref/asin", asin_kernel},
      {"Acos", 7, f, "ref/acos", acos_kernel},
      {"Atan", 7, f, "ref/atan", atan_kernel},
      {"Sinh", 9, f, "ref/sinh", sinh_kernel},
      {"Cosh", 9, f, "ref/cosh", cosh_kernel},
      {"Asinh", 9, f, "ref/asinh", asinh_kernel},
      {"Acosh", 9, f, "ref/acosh", acosh_kernel},
      {"Atanh", 9, f, "ref/atanh", atanh_kernel},
      {"Erf", 9, n, "ref/erf", erf_kernel},
      {"IsNaN", 9, f, "ref/isnan", isnan_kernel},
      {"IsInf", 10, f, "ref/isinf", isinf_kernel},
      {"Not", 1, DTypeSet{DType::Bool}, "ref/not", not_kernel},
      {"BitwiseNot", 18, DTypeSet::ints(), "ref/bitwisenot", bitwise_not_kernel},
      {"Relu", 1, sn, "ref/relu", relu_kernel},
      {"LeakyRelu", 1, f, "ref/leakyrelu", leaky_relu_kernel},
      {"Sigmoid", 1, f, "ref/sigmoid", sigmoid_kernel},
      {"HardSigmoid", 1, f, "ref/hardsigmoid", hard_sigmoid_kernel},
      {"HardSwish", 14, f, "ref/hardswish", hard_swish_kernel},
      {"Tanh", 1, f, "ref/tanh", tanh_kernel},
      {"Elu", 1, f, "ref/elu", elu_kernel},
      {"Selu", 1, f, "ref/selu", selu_kernel},
      {"Celu", 12, f, "ref/celu", celu_kernel},
      {"Softplus", 1, f, "ref/softplus", softplus_kernel},
      {"Softsign", 1, f, "ref/softsign", softsign_kernel},
      {"ThresholdedRelu", 10, f, "ref/thresholdedrelu", thresholded_relu_kernel},
      {"Shrink", 9, n, "ref/shrink", shrink_kernel},
      {"Mish", 18, f, "ref/mish", mish_kernel},
      {"Swish", 24, f, "ref/swish", swish_kernel},
      {"Gelu", 20, f, "ref/gelu", gelu_kernel},
      {"Clip", 1, n, "ref/clip", clip_kernel},
  };
  for (const auto& e : entries) {
    KernelDef def;
    def.op_type = e.op;
    def.since_opset = e.since;
    def.types = e.types;
    def.id = e.id;
    def.fn = e.fn;
    r.add(def);
  }
}

}  // namespace ignis::kernels::ref
