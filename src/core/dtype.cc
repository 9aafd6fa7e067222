// SPDX-License-Identifier: Apache-2.0
#include "ignis/dtype.h"

#include <cstring>

#include "core/dtype_dispatch.h"

namespace ignis {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::F64: case DType::I64: case DType::U64: return 8;
    case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
    case DType::I8: case DType::U8: case DType::Bool: return 1;
    default: return 0;
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
    case 12: case 13: case 16:
      return static_cast<DType>(v);
    default: return std::nullopt;  // complex, float8 and int4 variants are not represented
  }
}

bool dtype_is_float(DType t) {
  return t == DType::F32 || t == DType::F64 || t == DType::F16 || t == DType::BF16;
}
bool dtype_is_integer(DType t) { return DTypeSet::ints().contains(t); }
bool dtype_is_signed(DType t) { return DTypeSet::signed_ints().contains(t) || dtype_is_float(t); }

double load_as_double(DType t, const void* data, int64_t i) {
  return visit_dtype(t, [&](auto tag) -> double {
    using T = decltype(tag);
    return static_cast<double>(to_compute(static_cast<const T*>(data)[i]));
  });
}

int64_t load_as_int64(DType t, const void* data, int64_t i) {
  return visit_dtype(t, [&](auto tag) -> int64_t {
    using T = decltype(tag);
    return static_cast<int64_t>(to_compute(static_cast<const T*>(data)[i]));
  });
}

}  // namespace ignis
