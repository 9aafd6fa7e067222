// SPDX-License-Identifier: Apache-2.0
// Maps a runtime DType to its C++ storage type, so kernels are written once as templates:
//   visit_dtype(t.dtype(), [&](auto tag) { using T = decltype(tag); ... });
// Half and BFloat16 are storage-only structs; convert with to_float/from_float.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <type_traits>

#include "core/half.h"
#include "core/strings.h"
#include "ignis/dtype.h"
#include "ignis/status.h"

namespace ignis {

template <class F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::F16: return f(Half{});
    case DType::BF16: return f(BFloat16{});
    case DType::I8: return f(int8_t{});
    case DType::I16: return f(int16_t{});
    case DType::I32: return f(int32_t{});
    case DType::I64: return f(int64_t{});
    case DType::U8: return f(uint8_t{});
    case DType::U16: return f(uint16_t{});
    case DType::U32: return f(uint32_t{});
    case DType::U64: return f(uint64_t{});
    case DType::Bool: return f(bool{});
    default: std::abort();  // callers validate dtypes (registry constraints) before visiting
  }
}

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::F32;
  else if constexpr (std::is_same_v<T, double>) return DType::F64;
  else if constexpr (std::is_same_v<T, Half>) return DType::F16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DType::BF16;
  else if constexpr (std::is_same_v<T, int8_t>) return DType::I8;
  else if constexpr (std::is_same_v<T, int16_t>) return DType::I16;
  else if constexpr (std::is_same_v<T, int32_t>) return DType::I32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::I64;
  else if constexpr (std::is_same_v<T, uint8_t>) return DType::U8;
  else if constexpr (std::is_same_v<T, uint16_t>) return DType::U16;
  else if constexpr (std::is_same_v<T, uint32_t>) return DType::U32;
  else if constexpr (std::is_same_v<T, uint64_t>) return DType::U64;
  else if constexpr (std::is_same_v<T, bool>) return DType::Bool;
  else static_assert(sizeof(T) == 0, "no DType for this type");
}

// True for the 16-bit float storage structs.
template <class T>
inline constexpr bool is_half_like_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// Arithmetic type used to compute on T: float for the 16-bit floats, T otherwise.
template <class T>
using compute_t = std::conditional_t<is_half_like_v<T>, float, T>;

template <class T>
inline compute_t<T> to_compute(T v) {
  if constexpr (std::is_same_v<T, Half>) return half_to_float(v.bits);
  else if constexpr (std::is_same_v<T, BFloat16>) return bf16_to_float(v.bits);
  else return v;
}

template <class T, class C>
inline T from_compute(C v) {
  if constexpr (std::is_same_v<T, Half>) return Half{float_to_half(static_cast<float>(v))};
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16{float_to_bf16(static_cast<float>(v))};
  else return static_cast<T>(v);
}

// Runs f(tag) with the storage type (float, double, Half, BFloat16) of a float dtype; any other
// dtype is Unsupported, named with `op`.
template <class F>
Status visit_float(DType t, std::string_view op, F&& f) {
  switch (t) {
    case DType::F32: f(float{}); return Status::ok();
    case DType::F64: f(double{}); return Status::ok();
    case DType::F16: f(Half{}); return Status::ok();
    case DType::BF16: f(BFloat16{}); return Status::ok();
    default: return unsupported(str_cat(op, ": dtype ", dtype_name(t)));
  }
}

// Reads element i of a buffer of dtype t as double (for shape values, Cast, comparisons).
double load_as_double(DType t, const void* data, int64_t i);
// Reads element i of an integer/bool buffer as int64 (shape and index tensors).
int64_t load_as_int64(DType t, const void* data, int64_t i);

}  // namespace ignis
