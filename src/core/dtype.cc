// SPDX-License-Identifier: Apache-2.0
#include "ignis/dtype.h"

#include <cstring>
#include <limits>

#include "core/dtype_dispatch.h"
#include "core/low_bit.h"

namespace ignis {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::F64: case DType::I64: case DType::U64: return 8;
    case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
    case DType::I8: case DType::U8: case DType::Bool: return 1;
    default: return DTypeSet::low_bit().contains(t) ? 1 : 0;  // stored one byte per element
  }
}

namespace {
struct NameEntry {
  DType t;
  std::string_view name;
};
constexpr NameEntry kNames[] = {
    {DType::F32, "float32"}, {DType::F64, "float64"}, {DType::F16, "float16"},
    {DType::BF16, "bfloat16"}, {DType::I8, "int8"},   {DType::I16, "int16"},
    {DType::I32, "int32"},   {DType::I64, "int64"},   {DType::U8, "uint8"},
    {DType::U16, "uint16"},  {DType::U32, "uint32"},  {DType::U64, "uint64"},
    {DType::Bool, "bool"},   {DType::String, "string"},
    {DType::F8E4M3FN, "float8e4m3fn"}, {DType::F8E4M3FNUZ, "float8e4m3fnuz"},
    {DType::F8E5M2, "float8e5m2"},     {DType::F8E5M2FNUZ, "float8e5m2fnuz"},
    {DType::F8E8M0, "float8e8m0"},     {DType::F4E2M1, "float4e2m1"},
    {DType::I4, "int4"}, {DType::U4, "uint4"}, {DType::I2, "int2"}, {DType::U2, "uint2"},
    {DType::Sequence, "sequence"}, {DType::Optional, "optional"}, {DType::Map, "map"},
};
}  // namespace

std::string_view dtype_name(DType t) {
  for (const auto& e : kNames)
    if (e.t == t) return e.name;
  return "undefined";
}

std::optional<DType> dtype_from_name(std::string_view name) {
  for (const auto& e : kNames)
    if (e.name == name) return e.t;
  if (name == "float") return DType::F32;
  if (name == "double") return DType::F64;
  return std::nullopt;
}

std::optional<DType> dtype_from_onnx(int32_t v) {
  switch (v) {
    case 1: case 2: case 3: case 4: case 5: case 6: case 7: case 8: case 9: case 10: case 11:
    case 12: case 13: case 16: case 17: case 18: case 19: case 20: case 21: case 22: case 23:
    case 24: case 25: case 26:
      return static_cast<DType>(v);
    default: return std::nullopt;  // complex and float6 are not represented
  }
}

bool dtype_is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
bool dtype_is_integer(DType t) { return DTypeSet::ints().contains(t); }
bool dtype_is_signed(DType t) { return DTypeSet::signed_ints().contains(t) || dtype_is_float(t); }
bool dtype_is_low_bit(DType t) { return DTypeSet::low_bit().contains(t); }
bool dtype_is_low_bit_float(DType t) {
  return DTypeSet::float8().contains(t) || t == DType::F4E2M1 || t == DType::F8E8M0;
}

bool dtype_is_container(DType t) { return DTypeSet::containers().contains(t); }

bool dtype_is_plain(DType t) { return t != DType::Undefined && t != DType::String && !dtype_is_container(t); }

int dtype_bits(DType t) {
  if (DTypeSet::int4().contains(t) || t == DType::F4E2M1) return 4;
  if (DTypeSet::int2().contains(t)) return 2;
  return 8 * static_cast<int>(dtype_size(t));
}

double load_as_double(DType t, const void* data, int64_t i) {
  if (dtype_is_low_bit(t)) return low_bit_to_double(t, static_cast<const uint8_t*>(data)[i]);
  return visit_dtype(t, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(to_compute(static_cast<const T*>(data)[i]));
  });
}

int64_t load_as_int64(DType t, const void* data, int64_t i) {
  if (dtype_is_low_bit(t)) {
    const uint8_t b = static_cast<const uint8_t*>(data)[i];
    if (!dtype_is_low_bit_float(t)) return low_bit_int_to_int64(t, b);
    const double v = low_bit_to_double(t, b);  // truncated; NaN and values past int64 give int64 min
    return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? static_cast<int64_t>(v)
                                                                     : std::numeric_limits<int64_t>::min();
  }
  return visit_dtype(t, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    return static_cast<int64_t>(to_compute(static_cast<const T*>(data)[i]));
  });
}

}  // namespace ignis
