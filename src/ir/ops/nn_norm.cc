// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the normalization ops: BatchNormalization (inference
// mode), InstanceNormalization, LayerNormalization, GroupNormalization, LRN and
// MeanVarianceNormalization.
#include <vector>

#include "core/broadcast.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir::nn_ops {

namespace {

Status expect_float_input(const InferContext& ctx, int i, std::string_view name) {
  return expect_input(ctx, i, name, kFloatTypes);
}

Status infer_batch_norm(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(5, 5));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "X"));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 2));
  static constexpr const char* kNames[] = {"X", "scale", "B", "mean", "var"};
  for (int i = 1; i < 5; ++i) {
    IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, i, kNames[i]));
    // Opset 14 lets mean/var (U) differ from X; opset 15 also scale/B (T1). Earlier: one T.
    int ref = 0;
    if (i >= 3 && ctx.opset() >= 14) ref = 3;
    if (i <= 2 && ctx.opset() >= 15) ref = 1;
    IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, i, kNames[i], ref));
  }
  const int64_t training = ctx.attrs().get_int("training_mode", 0);
  if (training != 0 && training != 1) return ctx.fail("attribute 'training_mode' must be 0 or 1, got ", training);
  if (ctx.opset() >= 14 && training == 0 && ctx.num_outputs() > 1)
    return ctx.error("running_mean and running_var are outputs only with training_mode=1");
  if (ctx.opset() < 14 && ctx.num_outputs() > 1)
    return ctx.unsupported("training-mode outputs (running/saved mean and variance) are not implemented");
  const Shape& x = ctx.input_shape(0);
  const bool spatial = ctx.opset() >= 9 || ctx.attrs().get_int("spatial", 1) != 0;
  Shape param{x[1]};
  if (!spatial) param = Shape(x.dims().subspan(1));
  for (int i = 1; i < 5; ++i)
    if (!(ctx.input_shape(i) == param))
      return ctx.fail("input ", i, " ('", kNames[i], "') must have shape ", param.str(), ", got ",
                      ctx.input_shape(i).str());
  ctx.set_output(0, ctx.input_dtype(0), x);
  set_remaining_outputs(ctx, 1, ctx.input_dtype(3), param);
  return Status::ok();
}

Status infer_instance_norm(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "input", kConvTypes));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "scale", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "B", 0));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "input", 3));
  const int64_t c = ctx.input_shape(0)[1];
  IGNIS_RETURN_IF_ERROR(expect_vector(ctx, 1, "scale", c));
  IGNIS_RETURN_IF_ERROR(expect_vector(ctx, 2, "B", c));
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Result<DType> stash_dtype(const InferContext& ctx) {
  const int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (stash != 1) return ctx.unsupported(str_cat("stash_type ", stash, " (only 1, float32, is implemented)"));
  return DType::F32;
}

Status infer_layer_norm(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "X"));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "Scale", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "B", 0));
  const Shape& x = ctx.input_shape(0);
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 1));
  const int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  auto axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.fail("attribute 'axis' ", axis_attr, " is out of range for rank ", x.rank());
  for (int i = 1; i < 3; ++i) {
    if (!ctx.has_input(i)) continue;
    const Shape& s = ctx.input_shape(i);
    auto b = broadcast_shapes(x, s);
    if (s.rank() > x.rank() || !b || !(*b == x))
      return ctx.fail("input ", i, (i == 1 ? " ('Scale')" : " ('B')"), " of shape ", s.str(),
                      " does not broadcast to X ", x.str());
  }
  IGNIS_ASSIGN_OR_RETURN(DType stash, stash_dtype(ctx));
  Shape stats = x;
  for (int i = *axis; i < x.rank(); ++i) stats[i] = 1;
  ctx.set_output(0, ctx.input_dtype(0), x);
  set_remaining_outputs(ctx, 1, stash, stats);
  return Status::ok();
}

Status infer_group_norm(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "X"));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "scale", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "bias", 0));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 2));
  const Shape& x = ctx.input_shape(0);
  const int64_t groups = ctx.attrs().get_int("num_groups", 0);
  if (!ctx.attrs().has("num_groups")) return ctx.error("attribute 'num_groups' is required");
  if (groups < 1 || x[1] % groups != 0)
    return ctx.fail("attribute 'num_groups' ", groups, " must be positive and divide the channel count ", x[1]);
  // Opset 18 defined scale/bias per group; opset 21 made them per channel.
  const int64_t params = ctx.opset() >= 21 ? x[1] : groups;
  IGNIS_RETURN_IF_ERROR(expect_vector(ctx, 1, "scale", params));
  IGNIS_RETURN_IF_ERROR(expect_vector(ctx, 2, "bias", params));
  if (ctx.opset() >= 21) IGNIS_RETURN_IF_ERROR(stash_dtype(ctx).status());
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

Status infer_lrn(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "X"));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 2));
  if (!ctx.attrs().has("size")) return ctx.error("attribute 'size' is required");
  const int64_t size = ctx.attrs().get_int("size", 0);
  if (size < 1) return ctx.fail("attribute 'size' must be >= 1, got ", size);
  ctx.set_output(0, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Status infer_mvn(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "X"));
  const Shape& x = ctx.input_shape(0);
  const std::vector<int64_t> axes = ctx.attrs().get_ints("axes", {0, 2, 3});
  std::vector<bool> seen(x.rank(), false);
  for (int64_t a : axes) {
    auto ax = normalize_axis(a, x.rank());
    if (!ax) return ctx.fail("attribute 'axes' ", str_list(axes), " is out of range for X ", x.str());
    if (seen[*ax]) return ctx.fail("attribute 'axes' ", str_list(axes), " repeats an axis");
    seen[*ax] = true;
  }
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

// LpNormalization: X / ||X||_p along `axis`, p 1 or 2.
Status infer_lp_normalization(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_float_input(ctx, 0, "input"));
  const Shape& x = ctx.input_shape(0);
  const int64_t axis = ctx.attrs().get_int("axis", -1);
  if (!normalize_axis(axis, x.rank())) return ctx.fail("attribute 'axis' ", axis, " is out of range for input ", x.str());
  const int64_t p = ctx.attrs().get_int("p", 2);
  if (p != 1 && p != 2) return ctx.fail("attribute 'p' must be 1 or 2, got ", p);
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

}  // namespace

void register_norm_schemas(OpSchemaRegistry& r) {
  r.add({"", "BatchNormalization", 1, 21, infer_batch_norm});
  r.add({"", "InstanceNormalization", 1, 22, infer_instance_norm});
  r.add({"", "LayerNormalization", 17, 21, infer_layer_norm});
  // The optimizer's LayerNormalization for models importing opsets below 17 (fuse_layer_norm).
  r.add({"ai.ignis", "LayerNormalization", 1, 1, infer_layer_norm});
  r.add({"", "GroupNormalization", 18, 21, infer_group_norm});
  r.add({"", "LRN", 1, 21, infer_lrn});
  r.add({"", "MeanVarianceNormalization", 9, 21, infer_mvn});
  r.add({"", "LpNormalization", 1, 22, infer_lp_normalization});
}

}  // namespace ignis::ir::nn_ops
