// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the ONNX ML domain (ai.onnx.ml) ops of classic
// scikit-learn pipelines: LinearRegressor, LinearClassifier, Normalizer, Scaler, Binarizer,
// ArrayFeatureExtractor; the tree ensembles are in ml_tree.cc, LabelEncoder and ZipMap in
// ml_label.cc.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/ops/ml_internal.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir {

Status ml_ops::batch_and_features(const InferContext& ctx, int64_t& n, int64_t& c) {
  const Shape& x = ctx.input_shape(0);
  if (x.rank() == 1) {
    n = 1;
    c = x[0];
  } else if (x.rank() == 2) {
    n = x[0];
    c = x[1];
  } else {
    return ctx.fail("input 0 ('X') must be 1-D or 2-D, got ", x.str());
  }
  return Status::ok();
}

namespace {

using ml_ops::batch_and_features;
using ml_ops::kMl;
using ml_ops::kMlTypes;
using nn_ops::expect_input;

Status infer_linear_regressor(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kMlTypes));
  int64_t n = 0, c = 0;
  IGNIS_RETURN_IF_ERROR(batch_and_features(ctx, n, c));
  const std::string post = ctx.attrs().get_string("post_transform", "NONE");
  if (post != "NONE") return ctx.unsupported(str_cat("post_transform '", post, "'"));
  const int64_t targets = ctx.attrs().get_int("targets", 1);
  if (targets < 1) return ctx.fail("attribute 'targets' must be positive, got ", targets);
  const std::vector<float> coef = ctx.attrs().get_floats("coefficients");
  if (static_cast<int64_t>(coef.size()) != targets * c)
    return ctx.fail("attribute 'coefficients' must have targets * features = ", targets * c, " values, got ",
                    coef.size());
  const std::vector<float> icp = ctx.attrs().get_floats("intercepts");
  if (!icp.empty() && static_cast<int64_t>(icp.size()) != targets)
    return ctx.fail("attribute 'intercepts' must have ", targets, " values, got ", icp.size());
  ctx.set_output(0, DType::F32, Shape({n, targets}));
  return Status::ok();
}

Status infer_linear_classifier(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kMlTypes));
  int64_t n = 0, c = 0;
  IGNIS_RETURN_IF_ERROR(batch_and_features(ctx, n, c));
  // Labels are integers (classlabels_ints) or strings (classlabels_strings).
  const bool string_labels = ctx.attrs().has("classlabels_strings");
  if (string_labels == ctx.attrs().has("classlabels_ints"))
    return ctx.error("exactly one of the attributes 'classlabels_ints' and 'classlabels_strings' must be given");
  const std::string labels_name = string_labels ? "classlabels_strings" : "classlabels_ints";
  const size_t labels =
      string_labels ? ctx.attrs().get_strings(labels_name).size() : ctx.attrs().get_ints(labels_name).size();
  if (labels == 0) return ctx.fail("attribute '", labels_name, "' must not be empty");
  const std::vector<float> coef = ctx.attrs().get_floats("coefficients");
  if (c <= 0 || coef.empty() || static_cast<int64_t>(coef.size()) % c != 0)
    return ctx.fail("attribute 'coefficients' must have a multiple of ", c, " values, got ", coef.size());
  const int64_t e = static_cast<int64_t>(coef.size()) / c;
  const std::vector<float> icp = ctx.attrs().get_floats("intercepts");
  if (!icp.empty() && static_cast<int64_t>(icp.size()) != e)
    return ctx.fail("attribute 'intercepts' must have ", e, " values, got ", icp.size());
  const std::string post = ctx.attrs().get_string("post_transform", "NONE");
  if (post != "NONE" && post != "SOFTMAX" && post != "LOGISTIC" && post != "SOFTMAX_ZERO" && post != "PROBIT")
    return ctx.fail("attribute 'post_transform' must be NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT, got '",
                    post, "'");
  int64_t classes = e;
  if (e == 1) {
    // One score column for two classes: onnxruntime's binary scoring, which ignis follows for
    // NONE and LOGISTIC only (its other transforms leave the scores half transformed).
    if (labels != 2) return ctx.unsupported(str_cat("one coefficient row with ", labels, " class labels"));
    if (post != "NONE" && post != "LOGISTIC")
      return ctx.unsupported(str_cat("post_transform '", post, "' for binary classification"));
    classes = 2;
  } else if (static_cast<int64_t>(labels) != e) {
    return ctx.fail("attribute '", labels_name, "' must have ", e, " labels (one per coefficient row), got ", labels);
  }
  if (ctx.num_outputs() > 2) return ctx.fail("has ", ctx.num_outputs(), " outputs, at most 2 are defined");
  ctx.set_output(0, string_labels ? DType::String : DType::I64, Shape({n}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::F32, Shape({n, classes}));
  return Status::ok();
}

Status infer_normalizer(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kMlTypes));
  int64_t n = 0, c = 0;
  IGNIS_RETURN_IF_ERROR(batch_and_features(ctx, n, c));
  const std::string norm = ctx.attrs().get_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2")
    return ctx.fail("attribute 'norm' must be MAX, L1 or L2, got '", norm, "'");
  ctx.set_output(0, DType::F32, ctx.input_shape(0));
  return Status::ok();
}

// offset/scale hold one value for every feature or one for all.
Status check_per_feature(const InferContext& ctx, std::string_view name, int64_t c) {
  const size_t k = ctx.attrs().get_floats(name).size();
  if (k > 1 && static_cast<int64_t>(k) != c)
    return ctx.fail("attribute '", name, "' must have 1 or ", c, " values, got ", k);
  return Status::ok();
}

Status infer_scaler(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kMlTypes));
  const Shape& x = ctx.input_shape(0);
  const int64_t c = x.rank() == 0 ? 1 : x[x.rank() - 1];
  IGNIS_RETURN_IF_ERROR(check_per_feature(ctx, "offset", c));
  IGNIS_RETURN_IF_ERROR(check_per_feature(ctx, "scale", c));
  ctx.set_output(0, DType::F32, x);
  return Status::ok();
}

Status infer_binarizer(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kMlTypes));
  return infer_same_as_input(ctx);
}

Status infer_array_feature_extractor(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kMlTypes));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "Y", {DType::I64}));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() == 0) return ctx.fail("input 0 ('X') must have rank >= 1, got a scalar");
  const int64_t k = ctx.input_shape(1).numel();
  // A 1-D X gives one row, as onnxruntime does: [1, k].
  std::vector<int64_t> dims = x.rank() == 1 ? std::vector<int64_t>{1} : std::vector<int64_t>(x.dims().begin(), x.dims().end() - 1);
  dims.push_back(k);
  ctx.set_output(0, ctx.input_dtype(0), Shape(dims));
  return Status::ok();
}

}  // namespace

void register_ml_schemas(OpSchemaRegistry& r) {
  r.add({kMl, "LinearRegressor", 1, 1, infer_linear_regressor});
  r.add({kMl, "LinearClassifier", 1, 1, infer_linear_classifier});
  r.add({kMl, "Normalizer", 1, 1, infer_normalizer});
  r.add({kMl, "Scaler", 1, 1, infer_scaler});
  r.add({kMl, "Binarizer", 1, 1, infer_binarizer});
  r.add({kMl, "ArrayFeatureExtractor", 1, 1, infer_array_feature_extractor});
  ml_ops::register_ml_tree_schemas(r);
  ml_ops::register_ml_label_schemas(r);
}

}  // namespace ignis::ir
