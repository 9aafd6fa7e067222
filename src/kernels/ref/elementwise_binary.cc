// SPDX-License-Identifier: Apache-2.0
// Reference kernels for broadcasting binary ops (arithmetic, Pow, Mod, bit and logic ops,
// comparisons, PRelu), variadic Sum/Mean/Max/Min, and Where.
//
// Operands are walked with for_each_broadcast_row: each row is a contiguous run of the output
// in which every operand either advances by one element or stays put, so the common cases
// (same shape, scalar operand, trailing-dim bias) become tight loops the compiler vectorizes.
// Integer arithmetic wraps (two's complement); integer division or modulo by zero yields 0,
// like numpy, so a masked division such as Where(y == 0, 0, x / y) does not fail.
#include <cmath>
#include <cstring>
#include <string>
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

// out = op(a, b) with a and b broadcast to out's shape. a_shape/b_shape may differ from the
// tensors' own shapes only by inserted extent-1 dims (legacy axis broadcasting).
template <class TA, class TB, class TO, class Op>
void binary_map(ThreadPool* pool, const void* a_data, const Shape& a_shape, const void* b_data,
                const Shape& b_shape, Tensor& out, const Op& op) {
  const TA* pa = static_cast<const TA*>(a_data);
  const TB* pb = static_cast<const TB*>(b_data);
  TO* po = out.data_as<TO>();
  for_each_broadcast_row<2>(
      pool, out.shape(), {a_shape, b_shape},
      [&](int64_t o, const std::array<int64_t, 2>& off, int64_t len, const std::array<int64_t, 2>& st) {
        const TA* x = pa + off[0];
        const TB* y = pb + off[1];
        TO* z = po + o;
        if (st[0] == 1 && st[1] == 1) {
          for (int64_t i = 0; i < len; ++i) z[i] = store_as<TO>(op(to_compute(x[i]), to_compute(y[i])));
        } else if (st[0] == 0 && st[1] == 1) {
          const auto xv = to_compute(x[0]);
          for (int64_t i = 0; i < len; ++i) z[i] = store_as<TO>(op(xv, to_compute(y[i])));
        } else if (st[0] == 1 && st[1] == 0) {
          const auto yv = to_compute(y[0]);
          for (int64_t i = 0; i < len; ++i) z[i] = store_as<TO>(op(to_compute(x[i]), yv));
        } else {
          const TO v = store_as<TO>(op(to_compute(x[0]), to_compute(y[0])));
          for (int64_t i = 0; i < len; ++i) z[i] = v;
        }
      });
}

// B's shape as the kernel walks it: before opset 7 with broadcast=1, B aligns inside A at
// `axis` (suffix matching by default). Shape inference validated the attributes.
Shape legacy_b_shape(const KernelContext& ctx, const Shape& a, const Shape& b) {
  if (ctx.opset() >= 7 || ctx.attrs().get_int("broadcast", 0) == 0) return b;
  int axis = a.rank() - b.rank();
  if (ctx.attrs().has("axis")) {
    const int64_t raw = ctx.attrs().get_int("axis");
    axis = static_cast<int>(raw < 0 ? raw + a.rank() : raw);
  }
  Shape s;
  s.resize(a.rank(), 1);
  for (int i = 0; i < b.rank(); ++i) s[axis + i] = b[i];
  return s;
}

// Runs a same-dtype binary op for the dtypes where Pred<T> holds; output T or bool.
template <template <class> class Pred, bool BoolOut, bool Legacy, class Op>
Status run_binary(KernelContext& ctx, std::string_view name, const Op& op) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Shape b_shape = Legacy ? legacy_b_shape(ctx, a.shape(), b.shape()) : b.shape();
  return visit_dtype(a.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (Pred<T>::value) {
      using TO = std::conditional_t<BoolOut, bool, T>;
      binary_map<T, T, TO>(ctx.pool(), a.data(), a.shape(), b.data(), b_shape, ctx.output(0), op);
      return Status::ok();
    } else {
      return dtype_unsupported(name, a.dtype());
    }
  });
}

template <class T>
struct NumericP : std::bool_constant<kIsNumeric<T>> {};
template <class T>
struct FloatP : std::bool_constant<kIsFloat<T>> {};
template <class T>
struct IntP : std::bool_constant<kIsInt<T>> {};
template <class T>
struct UIntP : std::bool_constant<kIsInt<T> && std::is_unsigned_v<T>> {};
template <class T>
struct BoolP : std::is_same<T, bool> {};
template <class T>
struct AnyP : std::true_type {};

// ---------------------------------------------------------------------------------------------
// Arithmetic

struct AddOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) return a + b;
    else return wrap_add(a, b);
  }
};
struct SubOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) return a - b;
    else return wrap_sub(a, b);
  }
};
struct MulOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) return a * b;
    else return wrap_mul(a, b);
  }
};
// SwiGLU-28: a * sigmoid(alpha * a) * b, the gate a through Swish times the value b.
struct SwiGluOp {
  float alpha;
  template <class C>
  C operator()(C a, C b) const {
    const C z = C(alpha) * a;
    const C sig = z >= C(0) ? C(1) / (C(1) + std::exp(-z)) : std::exp(z) / (C(1) + std::exp(z));
    return a * sig * b;
  }
};
// Integer division truncates toward zero (C semantics, as the ONNX reference does).
struct DivOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      return a / b;
    } else {
      if (b == 0) return C(0);
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return wrap_neg(a);  // MIN / -1 overflows
      }
      return static_cast<C>(a / b);
    }
  }
};

Status add_kernel(KernelContext& ctx) { return run_binary<NumericP, false, true>(ctx, "Add", AddOp{}); }
Status sub_kernel(KernelContext& ctx) { return run_binary<NumericP, false, true>(ctx, "Sub", SubOp{}); }
Status mul_kernel(KernelContext& ctx) { return run_binary<NumericP, false, true>(ctx, "Mul", MulOp{}); }
Status div_kernel(KernelContext& ctx) { return run_binary<NumericP, false, true>(ctx, "Div", DivOp{}); }

// Mod: fmod=1 is the C remainder (sign of the dividend); fmod=0 takes the sign of the divisor,
// like Python's % (integers only before Mod-28; Mod-28 defines it for floats too, with a zero
// result signed like the divisor and x % +-inf = x when the signs agree, else the divisor).
struct ModOp {
  bool fmod;
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      C r = std::fmod(a, b);
      if (fmod || std::isnan(r)) return r;
      if (r == 0) return std::copysign(C(0), b);
      if (std::signbit(r) != std::signbit(b)) r = std::isinf(b) ? b : r + b;
      return r;
    } else {
      if (b == 0) return C(0);
      if constexpr (std::is_signed_v<C>) {
        if (b == C(-1)) return C(0);
        const C r = static_cast<C>(a % b);
        if (!fmod && r != 0 && ((r < 0) != (b < 0))) return static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    }
  }
};

Status swiglu_kernel(KernelContext& ctx) {
  return run_binary<FloatP, false, false>(ctx, "SwiGLU", SwiGluOp{ctx.attrs().get_float("alpha", 1.0f)});
}

Status mod_kernel(KernelContext& ctx) {
  const bool fmod = ctx.attrs().get_int("fmod", 0) != 0;
  return run_binary<NumericP, false, false>(ctx, "Mod", ModOp{fmod});
}

// Integer power by squaring with wrapping; a negative exponent gives the truncated 1 / a^-e.
template <class C, class E>
C int_pow(C base, E e) {
  if constexpr (std::is_signed_v<E>) {
    if (e < 0) {
      if (base == 1) return C(1);
      if constexpr (std::is_signed_v<C>) {
        if (base == C(-1)) return (e % 2 == 0) ? C(1) : C(-1);
      }
      return C(0);
    }
  }
  uint64_t n = static_cast<uint64_t>(e);
  C result = 1;
  C b = base;
  while (n != 0) {
    if (n & 1) result = wrap_mul(result, b);
    n >>= 1;
    if (n != 0) b = wrap_mul(b, b);
  }
  return result;
}

// Pow: float bases compute in double; integer bases with an integer exponent are exact, with a
// float exponent they compute in double and truncate (numpy's power(...).astype(base)).
template <class TA, class TB>
struct PowOp {
  auto operator()(compute_t<TA> a, compute_t<TB> b) const {
    using CA = compute_t<TA>;
    using CB = compute_t<TB>;
    if constexpr (std::is_integral_v<CA> && std::is_integral_v<CB>) {
      return int_pow(a, b);
    } else {
      return std::pow(static_cast<double>(a), static_cast<double>(b));
    }
  }
};

Status pow_kernel(KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Shape b_shape = legacy_b_shape(ctx, a.shape(), b.shape());
  return visit_dtype(a.dtype(), [&](auto ta) -> Status {
    using TA = decltype(ta);
    if constexpr (kIsFloat<TA> || std::is_same_v<TA, int32_t> || std::is_same_v<TA, int64_t>) {
      return visit_dtype(b.dtype(), [&](auto tb) -> Status {
        using TB = decltype(tb);
        if constexpr (kIsNumeric<TB>) {
          binary_map<TA, TB, TA>(ctx.pool(), a.data(), a.shape(), b.data(), b_shape, ctx.output(0),
                                 PowOp<TA, TB>{});
          return Status::ok();
        } else {
          return dtype_unsupported("Pow", b.dtype());
        }
      });
    } else {
      return dtype_unsupported("Pow", a.dtype());
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Bits and logic

// BitShift: logical shifts for unsigned types; for signed ones (BitShift-28) the right shift
// is arithmetic and a left shift drops the bits pushed past the sign bit. A shift count that
// is negative or not below the bit width leaves only the sign fill: -1 for a right shift of a
// negative value, else 0.
struct BitShiftOp {
  bool left;
  template <class C>
  C operator()(C a, C b) const {
    constexpr int kBits = static_cast<int>(sizeof(C) * 8);
    using U = std::make_unsigned_t<C>;
    bool out_of_range = b >= static_cast<C>(kBits);
    if constexpr (std::is_signed_v<C>) out_of_range = out_of_range || b < 0;
    if (out_of_range) return !left && a < 0 ? C(-1) : C(0);
    if (left) return static_cast<C>(static_cast<U>(static_cast<U>(a) << b));
    if constexpr (std::is_signed_v<C>) {
      if (a < 0) return static_cast<C>(~static_cast<U>(static_cast<U>(~static_cast<U>(a)) >> b));
    }
    return static_cast<C>(static_cast<U>(a) >> b);
  }
};

Status bitshift_kernel(KernelContext& ctx) {
  const bool left = ctx.attrs().get_string("direction") == "LEFT";
  return run_binary<IntP, false, false>(ctx, "BitShift", BitShiftOp{left});
}

Status bitwise_and_kernel(KernelContext& ctx) {
  return run_binary<IntP, false, false>(ctx, "BitwiseAnd", [](auto a, auto b) { return decltype(a)(a & b); });
}
Status bitwise_or_kernel(KernelContext& ctx) {
  return run_binary<IntP, false, false>(ctx, "BitwiseOr", [](auto a, auto b) { return decltype(a)(a | b); });
}
Status bitwise_xor_kernel(KernelContext& ctx) {
  return run_binary<IntP, false, false>(ctx, "BitwiseXor", [](auto a, auto b) { return decltype(a)(a ^ b); });
}
Status and_kernel(KernelContext& ctx) {
  return run_binary<BoolP, true, true>(ctx, "And", [](bool a, bool b) { return a && b; });
}
Status or_kernel(KernelContext& ctx) {
  return run_binary<BoolP, true, true>(ctx, "Or", [](bool a, bool b) { return a || b; });
}
Status xor_kernel(KernelContext& ctx) {
  return run_binary<BoolP, true, true>(ctx, "Xor", [](bool a, bool b) { return a != b; });
}

// ---------------------------------------------------------------------------------------------
// Comparisons (fp16/bf16 compare exactly after widening to float).

Status equal_kernel(KernelContext& ctx) {
  return run_binary<AnyP, true, true>(ctx, "Equal", [](auto a, auto b) { return a == b; });
}
Status less_kernel(KernelContext& ctx) {
  return run_binary<NumericP, true, true>(ctx, "Less", [](auto a, auto b) { return a < b; });
}
Status less_equal_kernel(KernelContext& ctx) {
  return run_binary<NumericP, true, false>(ctx, "LessOrEqual", [](auto a, auto b) { return a <= b; });
}
Status greater_kernel(KernelContext& ctx) {
  return run_binary<NumericP, true, true>(ctx, "Greater", [](auto a, auto b) { return a > b; });
}
Status greater_equal_kernel(KernelContext& ctx) {
  return run_binary<NumericP, true, false>(ctx, "GreaterOrEqual", [](auto a, auto b) { return a >= b; });
}

// ---------------------------------------------------------------------------------------------
// PRelu: slope broadcasts to X (per channel for 1-D slopes before opset 7, see the schema).

Status prelu_kernel(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& slope = ctx.input(1);
  Shape s = slope.shape();
  if (ctx.opset() < 7 && s.rank() == 1 && x.rank() >= 2 && s[0] == x.dim(1) && s[0] != 1) s.resize(x.rank() - 1, 1);
  return visit_dtype(x.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (kIsNumeric<T>) {
      binary_map<T, T, T>(ctx.pool(), x.data(), x.shape(), slope.data(), s, ctx.output(0), [](auto v, auto k) {
        using C = decltype(v);
        if constexpr (std::is_floating_point_v<C>) return v < C(0) ? v * k : v;
        else if constexpr (std::is_signed_v<C>) return v < 0 ? wrap_mul(v, k) : v;
        else return v;
      });
      return Status::ok();
    } else {
      return dtype_unsupported("PRelu", x.dtype());
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Variadic: folds the inputs pairwise into the output buffer, in T (as numpy does for the
// reference); Mean divides once at the end. Max/Min propagate NaN.

struct MaxOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return a < b ? b : a;
  }
};
struct MinOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (std::isnan(a) || std::isnan(b)) return std::isnan(a) ? a : b;
    }
    return b < a ? b : a;
  }
};

template <template <class> class Pred, class Op>
Status run_variadic(KernelContext& ctx, std::string_view name, const Op& op, bool mean) {
  Tensor& out = ctx.output(0);
  const int n = ctx.num_inputs();
  return visit_dtype(out.dtype(), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (Pred<T>::value) {
      if (n == 1) {
        if (out.data() != ctx.input(0).data()) std::memmove(out.data(), ctx.input(0).data(), out.nbytes());
      } else {
        binary_map<T, T, T>(ctx.pool(), ctx.input(0).data(), ctx.input(0).shape(), ctx.input(1).data(),
                            ctx.input(1).shape(), out, op);
        for (int k = 2; k < n; ++k)
          binary_map<T, T, T>(ctx.pool(), out.data(), out.shape(), ctx.input(k).data(), ctx.input(k).shape(), out,
                              op);
      }
      if (mean && n > 1) {
        using C = compute_t<T>;
        T* y = out.data_as<T>();
        const C count = static_cast<C>(n);
        parallel_for(ctx.pool(), out.numel(), kGrain, [&](int64_t b, int64_t e) {
          for (int64_t i = b; i < e; ++i) y[i] = from_compute<T>(to_compute(y[i]) / count);
        });
      }
      return Status::ok();
    } else {
      return dtype_unsupported(name, out.dtype());
    }
  });
}


Status sum_kernel(KernelContext& ctx) { return run_variadic<FloatP>(ctx, "Sum", AddOp{}, false); }
Status mean_kernel(KernelContext& ctx) { return run_variadic<FloatP>(ctx, "Mean", AddOp{}, true); }
Status max_kernel(KernelContext& ctx) { return run_variadic<NumericP>(ctx, "Max", MaxOp{}, false); }
Status min_kernel(KernelContext& ctx) { return run_variadic<NumericP>(ctx, "Min", MinOp{}, false); }

// ---------------------------------------------------------------------------------------------
// Where

Status where_kernel(KernelContext& ctx) {
  const Tensor& c = ctx.input(0);
  const Tensor& x = ctx.input(1);
  const Tensor& y = ctx.input(2);
  Tensor& out = ctx.output(0);
  // Copies raw elements, so one instantiation per element size suffices.
  auto run = [&](auto tag) {
    using U = decltype(tag);
    const bool* pc = c.data_as<const bool>();
    const U* px = static_cast<const U*>(x.data());
    const U* py = static_cast<const U*>(y.data());
    U* po = out.data_as<U>();
    for_each_broadcast_row<3>(
        ctx.pool(), out.shape(), {c.shape(), x.shape(), y.shape()},
        [&](int64_t o, const std::array<int64_t, 3>& off, int64_t len, const std::array<int64_t, 3>& st) {
          const bool* cc = pc + off[0];
          const U* xx = px + off[1];
          const U* yy = py + off[2];
          U* z = po + o;
          for (int64_t i = 0; i < len; ++i) z[i] = cc[i * st[0]] ? xx[i * st[1]] : yy[i * st[2]];
        });
  };
  switch (dtype_size(x.dtype())) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    case 8: run(uint64_t{}); break;
    default: return dtype_unsupported("Where", x.dtype());
  }
  return Status::ok();
}

struct BinaryEntry {
  std::string_view op;
  int since;
  DTypeSet types;
  std::string_view id;
  KernelFn fn;
  int type_input = 0;
};

}  // namespace

void register_elementwise_binary(KernelRegistry& r) {
  const DTypeSet n = DTypeSet::numeric();
  const DTypeSet f = DTypeSet::floats();
  const DTypeSet b = DTypeSet{DType::Bool};
  const BinaryEntry entries[] = {
      {"Add", 1, n, "ref/add", add_kernel},
      {"Sub", 1, n, "ref/sub", sub_kernel},
      {"Mul", 1, n, "ref/mul", mul_kernel},
      {"Div", 1, n, "ref/div", div_kernel},
      {"Pow", 1, f | DTypeSet{DType::I32, DType::I64}, "ref/pow", pow_kernel},
      {"Mod", 10, n, "ref/mod", mod_kernel},
      {"SwiGLU", 28, f, "ref/swiglu", swiglu_kernel},
      {"BitShift", 11, DTypeSet::ints(), "ref/bitshift", bitshift_kernel},
      {"BitwiseAnd", 18, DTypeSet::ints(), "ref/bitwiseand", bitwise_and_kernel},
      {"BitwiseOr", 18, DTypeSet::ints(), "ref/bitwiseor", bitwise_or_kernel},
      {"BitwiseXor", 18, DTypeSet::ints(), "ref/bitwisexor", bitwise_xor_kernel},
      {"And", 1, b, "ref/and", and_kernel},
      {"Or", 1, b, "ref/or", or_kernel},
      {"Xor", 1, b, "ref/xor", xor_kernel},
      {"Equal", 1, DTypeSet::all(), "ref/equal", equal_kernel},
      {"Less", 1, n, "ref/less", less_kernel},
      {"LessOrEqual", 12, n, "ref/lessorequal", less_equal_kernel},
      {"Greater", 1, n, "ref/greater", greater_kernel},
      {"GreaterOrEqual", 12, n, "ref/greaterorequal", greater_equal_kernel},
      {"PRelu", 1, n, "ref/prelu", prelu_kernel},
      {"Sum", 1, f, "ref/sum", sum_kernel},
      {"Mean", 1, f, "ref/mean", mean_kernel},
      {"Max", 1, n, "ref/max", max_kernel},
      {"Min", 1, n, "ref/min", min_kernel},
      {"Where", 9, DTypeSet::all(), "ref/where", where_kernel, 1},
  };
  for (const auto& e : entries) {
    KernelDef def;
    def.op_type = e.op;
    def.since_opset = e.since;
    def.types = e.types;
    def.type_input = e.type_input;
    def.id = e.id;
    def.fn = e.fn;
    r.add(def);
  }
}

}  // namespace ignis::kernels::ref
