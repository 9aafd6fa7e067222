// SPDX-License-Identifier: Apache-2.0
// Reference kernels for type conversion and pass-through ops: Cast, CastLike (strings through
// string.cc), Identity and Dropout (inference: a copy plus an all-true mask).
#include <cstring>
#include <string>
#include <type_traits>

#include "core/low_bit.h"
#include "kernels/ref/elementwise_internal.h"
#include "kernels/ref/string_internal.h"

namespace ignis::kernels::ref {
namespace {

using namespace ew;

// One element of Cast, following the spec's rules: floats to integers truncate toward zero
// (out-of-range values are undefined in the spec; float_to_int gives a defined result),
// integers narrow modulo 2^n, anything to bool is "nonzero", and each float conversion rounds
// to nearest even exactly once.
template <class TO, class TI>
inline TO cast_value(TI v) {
  if constexpr (std::is_same_v<TI, TO>) {
    return v;
  } else if constexpr (std::is_same_v<TO, bool>) {
    return to_compute(v) != 0;
  } else if constexpr (std::is_same_v<TI, bool>) {
    return double_to<TO>(v ? 1.0 : 0.0);
  } else if constexpr (std::is_floating_point_v<TO>) {
    return static_cast<TO>(to_compute(v));
  } else if constexpr (is_half_like_v<TO>) {
    if constexpr (is_half_like_v<TI> || std::is_same_v<TI, float>) return from_compute<TO>(to_compute(v));
    else return double_to<TO>(static_cast<double>(v));
  } else if constexpr (std::is_integral_v<TI>) {
    return static_cast<TO>(v);
  } else {
    return float_to_int<TO>(static_cast<double>(to_compute(v)));
  }
}

// Cast with a low-bit type on either side. Elements go through int64 when both sides are
// integers or bool (so wrapping keeps every bit), else through double: every source value is
// exact in double (or, for 64-bit integers, rounded once), and each low-bit float target then
// rounds once. Float sources into the 4/2-bit integers truncate, then wrap like integers.
void cast_low_bit(KernelContext& ctx, const Tensor& in, Tensor& out) {
  const DType from = in.dtype();
  const DType to = out.dtype();
  const bool saturate = ctx.attrs().get_int("saturate", 1) != 0;
  const std::string mode = ctx.attrs().get_string("round_mode", "up");
  const E8M0Rounding rounding = mode == "down" ? E8M0Rounding::Down
                                : mode == "nearest" ? E8M0Rounding::Nearest
                                                    : E8M0Rounding::Up;
  const bool int_path = (dtype_is_integer(from) || from == DType::Bool || DTypeSet::int4().contains(from) ||
                         DTypeSet::int2().contains(from)) &&
                        !dtype_is_float(to) && !dtype_is_low_bit_float(to);
  const int64_t n = in.numel();
  // The source as double (or int64), element by element.
  auto read_double = [&](int64_t i) { return load_as_double(from, in.data(), i); };
  auto read_int = [&](int64_t i) {
    if (from == DType::Bool) return static_cast<int64_t>(static_cast<const bool*>(in.data())[i]);
    if (dtype_is_low_bit(from)) return low_bit_int_to_int64(from, static_cast<const uint8_t*>(in.data())[i]);
    if (from == DType::U64) return static_cast<int64_t>(static_cast<const uint64_t*>(in.data())[i]);
    return load_as_int64(from, in.data(), i);
  };
  if (dtype_is_low_bit(to)) {
    auto* y = static_cast<uint8_t*>(out.data());
    parallel_for(ctx.pool(), n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (dtype_is_low_bit_float(to)) y[i] = low_bit_float_from_double(to, read_double(i), saturate, rounding);
        else if (int_path) y[i] = low_bit_int_from_int64(to, read_int(i));
        else y[i] = low_bit_int_from_int64(to, float_to_int<int64_t>(read_double(i)));
      }
    });
    return;
  }
  visit_dtype(to, [&](auto tag) {
    using TO = decltype(tag);
    TO* y = out.data_as<TO>();
    parallel_for(ctx.pool(), n, kGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (int_path) y[i] = cast_value<TO>(read_int(i));
        else y[i] = cast_value<TO>(static_cast<float>(read_double(i)));  // low-bit float: exact in float
      }
    });
  });
}

// Converts input 0 to the dtype output 0 was allocated with (Cast and CastLike).
Status cast_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (in.dtype() == DType::String && out.dtype() == DType::String) {
    std::copy_n(in.data_as<const std::string>(), in.numel(), out.data_as<std::string>());
    return Status::ok();
  }
  if (in.dtype() == out.dtype()) {
    if (in.data() != out.data()) std::memmove(out.data(), in.data(), in.nbytes());
    return Status::ok();
  }
  if (out.dtype() == DType::String) {
    cast_to_string(in, out);
    return Status::ok();
  }
  if (in.dtype() == DType::String) return cast_from_string(in, out);
  if (out.dtype() == DType::Undefined) return dtype_unsupported("Cast", out.dtype());
  if (dtype_is_low_bit(in.dtype()) || dtype_is_low_bit(out.dtype())) {
    cast_low_bit(ctx, in, out);
    return Status::ok();
  }
  visit_dtype(in.dtype(), [&](auto ti) {
    using TI = decltype(ti);
    visit_dtype(out.dtype(), [&](auto to) {
      using TO = decltype(to);
      const TI* x = static_cast<const TI*>(in.data());
      TO* y = out.data_as<TO>();
      parallel_for(ctx.pool(), in.numel(), kGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) y[i] = cast_value<TO>(x[i]);
      });
    });
  });
  return Status::ok();
}

Status identity_kernel(KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  Tensor& out = ctx.output(0);
  if (in.data() != out.data() && in.nbytes() > 0) std::memmove(out.data(), in.data(), in.nbytes());
  return Status::ok();
}

// Inference Dropout (and training mode with ratio 0, which shape inference lets through).
// The mask is bool from opset 10, and of the data type before.
Status dropout_kernel(KernelContext& ctx) {
  IGNIS_RETURN_IF_ERROR(identity_kernel(ctx));
  if (!ctx.has_output(1)) return Status::ok();
  Tensor& mask = ctx.output(1);
  if (mask.dtype() == DType::Bool) {
    if (mask.nbytes() > 0) std::memset(mask.data(), 1, mask.nbytes());
    return Status::ok();
  }
  visit_dtype(mask.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* m = mask.data_as<T>();
    const T one = cast_value<T>(true);
    for (int64_t i = 0; i < mask.numel(); ++i) m[i] = one;
  });
  return Status::ok();
}

}  // namespace

void register_elementwise_misc(KernelRegistry& r) {
  KernelDef cast;
  cast.op_type = "Cast";
  cast.since_opset = 1;
  cast.types = DTypeSet::storable() | DTypeSet{DType::String};
  cast.id = "ref/cast";
  cast.fn = cast_kernel;
  r.add(cast);

  KernelDef castlike = cast;
  castlike.op_type = "CastLike";
  castlike.since_opset = 15;
  castlike.id = "ref/castlike";
  r.add(castlike);

  KernelDef identity;
  identity.op_type = "Identity";
  identity.types = DTypeSet::storable();
  identity.id = "ref/identity";
  identity.fn = identity_kernel;
  r.add(identity);

  // BitCast copies the bytes; the output already has the target dtype.
  KernelDef bitcast = identity;
  bitcast.op_type = "BitCast";
  bitcast.since_opset = 26;
  bitcast.id = "ref/bitcast";
  r.add(bitcast);

  KernelDef dropout;
  dropout.op_type = "Dropout";
  dropout.types = DTypeSet::floats();
  dropout.id = "ref/dropout";
  dropout.fn = dropout_kernel;
  r.add(dropout);
}

}  // namespace ignis::kernels::ref
