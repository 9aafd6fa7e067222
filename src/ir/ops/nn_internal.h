// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the NN schema files (src/ir/ops/nn_*.cc) and their registration
// functions, which register_nn_schemas in nn.cc calls.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ir/op_schema.h"

namespace ignis::ir::nn_ops {

// Outputs larger than this are rejected as absurd rather than attempted.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 40;

inline constexpr DTypeSet kConvTypes = {DType::F32, DType::F64, DType::F16};
inline constexpr DTypeSet kFloatTypes = DTypeSet::floats();

// Re-labels a Status from a node-agnostic helper (core/conv_geometry...) with the node prefix,
// keeping its code.
Status relabel(const InferContext& ctx, const Status& s);

// Input i must be present with a dtype in `allowed` (else unsupported).
Status expect_input(const InferContext& ctx, int i, std::string_view name, DTypeSet allowed);
// Optional input i, when present, must have the dtype of input `ref`.
Status expect_same_dtype(const InferContext& ctx, int i, std::string_view name, int ref);
// Input i must have rank >= min_rank.
Status expect_min_rank(const InferContext& ctx, int i, std::string_view name, int min_rank);
// Input i must be 1-D with `n` elements.
Status expect_vector(const InferContext& ctx, int i, std::string_view name, int64_t n);

// Validates computed output dims: rank <= Shape::kMaxRank, dims >= 0, size within bounds.
Result<Shape> checked_shape(const InferContext& ctx, std::span<const int64_t> dims, DType dtype,
                            std::string_view what);

// Sets every output beyond those already set to `dtype` with an empty shape, so that
// omitted optional outputs are defined.
void set_remaining_outputs(InferContext& ctx, int from, DType dtype, const Shape& shape);

void register_matmul_schemas(OpSchemaRegistry& r);  // MatMul, Gemm, Einsum
void register_conv_schemas(OpSchemaRegistry& r);    // Conv, ConvTranspose
void register_pool_schemas(OpSchemaRegistry& r);    // pooling ops, MaxUnpool
void register_norm_schemas(OpSchemaRegistry& r);    // normalization ops
void register_resize_schemas(OpSchemaRegistry& r);  // Resize, Upsample

}  // namespace ignis::ir::nn_ops
