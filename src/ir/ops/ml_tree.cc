// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the tree ensembles of the ONNX ML domain (ai.onnx.ml):
// TreeEnsembleRegressor and TreeEnsembleClassifier (versions 1 and 3) and TreeEnsemble
// (version 5). The attributes are read and checked by core/tree_ensemble, so a malformed
// ensemble is reported here, before a kernel is made.
#include <cstdint>

#include "core/tree_ensemble.h"
#include "ir/ops/ml_internal.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir {

namespace {

using ml_ops::batch_and_features;
using ml_ops::kMl;
using ml_ops::kMlTypes;
using nn_ops::expect_input;
using nn_ops::relabel;

// What the three ops check alike: one input X of `types`, at most `outputs` outputs, the
// ensemble (read by `read`) well formed and reading only features X has. Sets the batch size.
Result<TreeEnsembleModel> read_ensemble(const InferContext& ctx, DTypeSet types, int outputs,
                                        Result<TreeEnsembleModel> (*read)(const AttrMap&), int64_t& n) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", types));
  if (ctx.num_outputs() > outputs)
    return ctx.fail("has ", ctx.num_outputs(), " outputs, at most ", outputs, " are defined");
  int64_t c = 0;
  IGNIS_RETURN_IF_ERROR(batch_and_features(ctx, n, c));
  Result<TreeEnsembleModel> m = read(ctx.attrs());
  if (!m) return relabel(ctx, m.error());
  if (m->max_feature >= c)
    return ctx.fail("the trees read feature ", m->max_feature, " (attribute 'nodes_featureids') but input 0 ('X') has ",
                    c, " features");
  return m;
}

Status infer_tree_ensemble_regressor(InferContext& ctx) {
  int64_t n = 0;
  IGNIS_ASSIGN_OR_RETURN(const TreeEnsembleModel m, read_ensemble(ctx, kMlTypes, 1, read_tree_ensemble_regressor, n));
  ctx.set_output(0, DType::F32, Shape({n, m.targets}));
  return Status::ok();
}

Status infer_tree_ensemble_classifier(InferContext& ctx) {
  int64_t n = 0;
  IGNIS_ASSIGN_OR_RETURN(const TreeEnsembleModel m, read_ensemble(ctx, kMlTypes, 2, read_tree_ensemble_classifier, n));
  ctx.set_output(0, m.class_label_strings.empty() ? DType::I64 : DType::String, Shape({n}));
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::F32, Shape({n, m.targets}));
  return Status::ok();
}

Status infer_tree_ensemble(InferContext& ctx) {
  int64_t n = 0;
  IGNIS_ASSIGN_OR_RETURN(const TreeEnsembleModel m,
                         read_ensemble(ctx, {DType::F32, DType::F64, DType::F16}, 1, read_tree_ensemble, n));
  const DType t = ctx.input_dtype(0);
  if (m.value_dtype != t)
    return ctx.fail("attributes 'nodes_splits' and 'leaf_weights' must have the dtype of input 0 ('X'), ",
                    dtype_name(t), ", got ", dtype_name(m.value_dtype));
  ctx.set_output(0, t, Shape({n, m.targets}));
  return Status::ok();
}

// The ensemble alone, when the model is built: a classifier followed by ZipMap plans
// dynamically, so its first inference would come only with the first run.
template <Result<TreeEnsembleModel> (*Read)(const AttrMap&)>
Status check_ensemble(const AttrMap& attrs, int64_t) {
  return Read(attrs).status();
}

}  // namespace

void ml_ops::register_ml_tree_schemas(OpSchemaRegistry& r) {
  r.add({.domain = kMl, .op_type = "TreeEnsembleRegressor", .since_opset = 1, .until_opset = 3,
         .infer = infer_tree_ensemble_regressor, .check = check_ensemble<read_tree_ensemble_regressor>});
  r.add({.domain = kMl, .op_type = "TreeEnsembleClassifier", .since_opset = 1, .until_opset = 3,
         .infer = infer_tree_ensemble_classifier, .check = check_ensemble<read_tree_ensemble_classifier>});
  r.add({.domain = kMl, .op_type = "TreeEnsemble", .since_opset = 5, .until_opset = 5, .infer = infer_tree_ensemble,
         .check = check_ensemble<read_tree_ensemble>});
}

}  // namespace ignis::ir
