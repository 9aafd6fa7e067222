// SPDX-License-Identifier: Apache-2.0
#include "serve/datatype.h"

#include <array>
#include <utility>

namespace ignis::serve {
namespace {

struct Names {
  DType dtype;
  std::string_view kserve;
  std::string_view triton;
};

constexpr std::array<Names, 14> kNames{{
    {DType::Bool, "BOOL", "TYPE_BOOL"},
    {DType::U8, "UINT8", "TYPE_UINT8"},
    {DType::U16, "UINT16", "TYPE_UINT16"},
    {DType::U32, "UINT32", "TYPE_UINT32"},
    {DType::U64, "UINT64", "TYPE_UINT64"},
    {DType::I8, "INT8", "TYPE_INT8"},
    {DType::I16, "INT16", "TYPE_INT16"},
    {DType::I32, "INT32", "TYPE_INT32"},
    {DType::I64, "INT64", "TYPE_INT64"},
    {DType::F16, "FP16", "TYPE_FP16"},
    {DType::F32, "FP32", "TYPE_FP32"},
    {DType::F64, "FP64", "TYPE_FP64"},
    {DType::BF16, "BF16", "TYPE_BF16"},
    {DType::String, "BYTES", "TYPE_STRING"},
}};

}  // namespace

std::optional<DType> dtype_from_kserve(std::string_view name) {
  for (const auto& n : kNames)
    if (n.kserve == name) return n.dtype;
  return std::nullopt;
}

std::string_view kserve_name(DType t) {
  for (const auto& n : kNames)
    if (n.dtype == t) return n.kserve;
  return "";
}

std::optional<DType> dtype_from_triton(std::string_view name) {
  for (const auto& n : kNames)
    if (n.triton == name) return n.dtype;
  return std::nullopt;
}

std::string_view triton_type_name(DType t) {
  for (const auto& n : kNames)
    if (n.dtype == t) return n.triton;
  return "TYPE_INVALID";
}

}  // namespace ignis::serve
