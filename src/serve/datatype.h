// SPDX-License-Identifier: Apache-2.0
// The names the serving protocols give element types: KServe v2 datatypes ("FP32", "BYTES")
// and Triton model-config types ("TYPE_FP32", "TYPE_STRING"). BYTES maps to DType::String.
#pragma once

#include <optional>
#include <string_view>

#include "ignis/dtype.h"

namespace ignis::serve {

std::optional<DType> dtype_from_kserve(std::string_view name);
// "FP32"; "" for types the protocol has no name for.
std::string_view kserve_name(DType t);

std::optional<DType> dtype_from_triton(std::string_view name);
std::string_view triton_type_name(DType t);

}  // namespace ignis::serve
