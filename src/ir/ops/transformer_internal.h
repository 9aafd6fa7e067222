// SPDX-License-Identifier: Apache-2.0
// Shared pieces of the transformer schema files (src/ir/ops/transformer*.cc) and the
// registration functions that register_transformer_schemas in transformer.cc calls.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/op_schema.h"

namespace ignis::ir::transformer_ops {

// An int attribute that must be present and >= 1; `what` says when it is required.
Result<int64_t> required_positive_int(const InferContext& ctx, std::string_view name, std::string_view what);

// The optional 'softmax_precision' attribute, a TensorProto data type code, must name float,
// float16, double or bfloat16.
Status check_softmax_precision(const InferContext& ctx);

void register_transformer_recurrent_schemas(OpSchemaRegistry& r);  // LinearAttention, CausalConvWithState
void register_transformer_flex_schemas(OpSchemaRegistry& r);       // ai.onnx.preview FlexAttention

}  // namespace ignis::ir::transformer_ops
