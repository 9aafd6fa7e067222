// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the ai.onnx.ml schema files (ml.cc, ml_tree.cc, ml_label.cc), and their
// registrations, which register_ml_schemas in ml.cc calls.
#pragma once

#include <cstdint>
#include <string_view>

#include "ir/op_schema.h"

namespace ignis::ir::ml_ops {

inline constexpr std::string_view kMl = "ai.onnx.ml";
// Input types the ML ops take (tensor(float), tensor(double), tensor(int64), tensor(int32)).
inline constexpr DTypeSet kMlTypes = {DType::F32, DType::F64, DType::I64, DType::I32};

// X as [N, C] or [C] (one row): the batch size and the feature count.
Status batch_and_features(const InferContext& ctx, int64_t& n, int64_t& c);

// TreeEnsembleRegressor, TreeEnsembleClassifier (versions 1 and 3), TreeEnsemble (5).
void register_ml_tree_schemas(OpSchemaRegistry& r);
// LabelEncoder, ZipMap.
void register_ml_label_schemas(OpSchemaRegistry& r);

}  // namespace ignis::ir::ml_ops
