// SPDX-License-Identifier: Apache-2.0
// The names the serving protocols give element types: KServe v2 datatypes ("FP32", "BYTES")
// and Triton model-config types ("TYPE_FP32", "TYPE_STRING"). BYTES maps to DType::String.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ignis/dtype.h"
#include "ignis/tensor.h"

namespace ignis::serve {

std::optional<DType> dtype_from_kserve(std::string_view name);
// "FP32"; "" for types the protocol has no name for.
std::string_view kserve_name(DType t);

std::optional<DType> dtype_from_triton(std::string_view name);
std::string_view triton_type_name(DType t);

// A String tensor of `shape` holding `elements` (as many as the shape has), moved in.
Tensor string_tensor(const std::vector<int64_t>& shape, std::vector<std::string> elements);

// The binary form of a BYTES tensor in KServe v2 binary data and gRPC raw contents: each
// element as its length (4 bytes, little-endian) and its bytes.
std::string serialize_strings(const Tensor& t);

}  // namespace ignis::serve
