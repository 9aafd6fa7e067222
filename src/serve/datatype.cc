// SPDX-License-Identifier: Apache-2.0
#include "serve/datatype.h"

#include <algorithm>

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

Tensor string_tensor(const std::vector<int64_t>& shape, std::vector<std::string> elements) {
  Tensor t = Tensor::empty(DType::String, Shape(shape));
  std::move(elements.begin(), elements.begin() + std::min<int64_t>(t.numel(), static_cast<int64_t>(elements.size())),
            t.data_as<std::string>());
  return t;
}

std::string serialize_strings(const Tensor& t) {
  const std::string* elements = t.data_as<std::string>();
  std::string out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto n = static_cast<uint32_t>(elements[i].size());
    const char len[4] = {static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                         static_cast<char>((n >> 16) & 0xff), static_cast<char>((n >> 24) & 0xff)};
    out.append(len, 4);
    out.append(elements[i]);
  }
  return out;
}

}  // namespace ignis::serve
