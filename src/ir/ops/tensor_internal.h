// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the tensor-family schema files (tensor.cc, tensor_index.cc): checked
// construction of output shapes from untrusted values, axis resolution, dtype checks.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ir/op_schema.h"

namespace ignis::ir::tensor_ops {

// Outputs larger than this (64 GiB) are rejected as absurd rather than attempted: the
// allocator aborts when memory runs out, so a bad shape value must fail here instead.
inline constexpr int64_t kMaxTensorBytes = int64_t{1} << 36;

// Dtypes the data-movement ops accept (everything ignis represents except strings).
inline constexpr DTypeSet kAnyType = DTypeSet::all();
inline constexpr DTypeSet kIndexTypes = {DType::I32, DType::I64};

// Validates dims computed from attributes or input values: rank <= Shape::kMaxRank, every dim
// >= 0, and the element count (times the dtype size) within kMaxTensorBytes. `what` names the
// output in messages.
Result<Shape> checked_shape(const InferContext& ctx, std::span<const int64_t> dims, DType dtype, std::string_view what);

// a * b for extents, failing on overflow.
Result<int64_t> checked_mul(const InferContext& ctx, int64_t a, int64_t b, std::string_view what);

// Resolves a possibly negative axis against `rank`; fails naming `what` when out of range.
Result<int> resolve_axis(const InferContext& ctx, int64_t axis, int rank, std::string_view what);

// Resolves a list of axes; fails on out-of-range or repeated axes.
Result<std::vector<int>> resolve_axes(const InferContext& ctx, std::span<const int64_t> axes, int rank,
                                      std::string_view what);

// Input i must be present and have a dtype ignis can move (strings are unsupported).
Status expect_data_input(const InferContext& ctx, int i);
// Input i must be int32 or int64 (index tensors).
Status expect_index_input(const InferContext& ctx, int i, std::string_view what);
// Input i must hold exactly one element (a scalar or a 1-element 1-D tensor).
Status expect_single_element(const InferContext& ctx, int i, std::string_view what);
// Inputs a and b must share a dtype.
Status expect_same_dtype(const InferContext& ctx, int a, int b);

// Schemas defined in tensor_index.cc.
void register_tensor_index_schemas(OpSchemaRegistry& r);

}  // namespace ignis::ir::tensor_ops
