// SPDX-License-Identifier: Apache-2.0
// Score transforms shared by the ai.onnx.ml reference kernels (ml.cc: LinearClassifier;
// ml_tree.cc: the tree ensembles), and the registrations of ml_tree.cc and ml_label.cc, which
// register_ml calls.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "kernels/registry.h"

namespace ignis::kernels::ref {

inline constexpr std::string_view kMl = "ai.onnx.ml";
// Input types the ML ops take (tensor(float), tensor(double), tensor(int64), tensor(int32)).
inline constexpr DTypeSet kMlTypes = {DType::F32, DType::F64, DType::I64, DType::I32};

enum class PostTransform { None, Softmax, Logistic, SoftmaxZero, Probit };

// NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT (shape inference rejects anything else).
PostTransform parse_post_transform(const std::string& s);

// 1 / (1 + exp(-v)), written so that exp never overflows.
double logistic(double v);

// Applies the transform to one row of k scores in place.
void post_transform_row(PostTransform pt, double* s, int64_t k);

// TreeEnsembleRegressor, TreeEnsembleClassifier (versions 1 and 3), TreeEnsemble (5).
void register_ml_tree(KernelRegistry& r);
// LabelEncoder, ZipMap.
void register_ml_label(KernelRegistry& r);

}  // namespace ignis::kernels::ref
