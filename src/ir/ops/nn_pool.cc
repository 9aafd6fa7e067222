// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the pooling ops: MaxPool, AveragePool, LpPool, their
// Global* forms, and MaxUnpool.
#include <vector>

#include "core/conv_geometry.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir::nn_ops {

namespace {

Result<bool> read_flag(const InferContext& ctx, std::string_view name) {
  const int64_t v = ctx.attrs().get_int(name, 0);
  if (v != 0 && v != 1) return ctx.fail("attribute '", name, "' must be 0 or 1, got ", v);
  return v == 1;
}

// Output shape [N, C, out...] of a windowed pool over X (input 0).
Result<Shape> pooled_shape(const InferContext& ctx, bool ceil_mode) {
  const Shape& x = ctx.input_shape(0);
  auto g = make_window_geometry(ctx.attrs(), x.dims().subspan(2), {}, ceil_mode);
  if (!g) return relabel(ctx, g.error());
  std::vector<int64_t> out = {x[0], x[1]};
  for (int i = 0; i < g->rank; ++i) out.push_back(g->out[i]);
  return checked_shape(ctx, out, ctx.input_dtype(0), "output");
}

Status infer_max_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  DTypeSet types = kConvTypes;
  if (ctx.opset() >= 12) types = types | DTypeSet{DType::I8, DType::U8};
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", types));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 3));
  IGNIS_ASSIGN_OR_RETURN(bool ceil_mode, read_flag(ctx, "ceil_mode"));
  IGNIS_ASSIGN_OR_RETURN(bool storage_order, read_flag(ctx, "storage_order"));
  (void)storage_order;
  if (ctx.num_outputs() > 1 && ctx.opset() < 8) return ctx.error("the Indices output needs opset 8 or newer");
  IGNIS_ASSIGN_OR_RETURN(Shape y, pooled_shape(ctx, ceil_mode && ctx.opset() >= 10));
  ctx.set_output(0, ctx.input_dtype(0), y);
  set_remaining_outputs(ctx, 1, DType::I64, y);
  return Status::ok();
}

Status infer_average_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kConvTypes));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 3));
  IGNIS_ASSIGN_OR_RETURN(bool ceil_mode, read_flag(ctx, "ceil_mode"));
  IGNIS_ASSIGN_OR_RETURN(bool count_include_pad, read_flag(ctx, "count_include_pad"));
  (void)count_include_pad;
  IGNIS_ASSIGN_OR_RETURN(Shape y, pooled_shape(ctx, ceil_mode && ctx.opset() >= 10));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status check_lp_p(const InferContext& ctx) {
  const float p = ctx.attrs().get_float("p", 2.0f);
  if (!(p > 0.0f)) return ctx.fail("attribute 'p' must be positive, got ", p);
  return Status::ok();
}

Status infer_lp_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kConvTypes));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 3));
  IGNIS_RETURN_IF_ERROR(check_lp_p(ctx));
  IGNIS_ASSIGN_OR_RETURN(bool ceil_mode, read_flag(ctx, "ceil_mode"));
  IGNIS_ASSIGN_OR_RETURN(Shape y, pooled_shape(ctx, ceil_mode && ctx.opset() >= 18));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_global_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kConvTypes));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 2));
  if (ctx.op_type() == "GlobalLpPool") IGNIS_RETURN_IF_ERROR(check_lp_p(ctx));
  Shape y = ctx.input_shape(0);
  for (int i = 2; i < y.rank(); ++i) y[i] = 1;
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_max_unpool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kConvTypes));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "I", {DType::I64}));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 3));
  const Shape& x = ctx.input_shape(0);
  if (!(ctx.input_shape(1) == x))
    return ctx.fail("input 1 ('I') must have the shape of X ", x.str(), ", got ", ctx.input_shape(1).str());
  if (ctx.attrs().has("auto_pad") || ctx.attrs().has("dilations") || ctx.attrs().has("output_padding"))
    return ctx.error("MaxUnpool takes only kernel_shape, strides and pads attributes");
  // The unpooled extent (in - 1) * stride + kernel - pads is ConvTranspose's formula.
  auto g = make_transposed_window_geometry(ctx.attrs(), x.dims().subspan(2), {});
  if (!g) return relabel(ctx, g.error());
  std::vector<int64_t> out = {x[0], x[1]};
  for (int i = 0; i < g->rank; ++i) out.push_back(g->out[i]);
  if (ctx.has_input(2)) {
    // Indices address the unpooled shape; output_shape can only enlarge it (zero-filled at
    // the end of each axis).
    IGNIS_ASSIGN_OR_RETURN(auto requested, ctx.input_ints(2));
    if (requested.size() != out.size())
      return ctx.fail("input 2 ('output_shape') must have ", x.rank(), " values, got ", str_list(requested));
    for (size_t i = 0; i < out.size(); ++i)
      if (requested[i] < out[i])
        return ctx.fail("input 2 ('output_shape') ", str_list(requested), " is smaller than the unpooled shape ",
                        str_list(out));
    out = requested;
  }
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

}  // namespace

void register_pool_schemas(OpSchemaRegistry& r) {
  r.add({"", "MaxPool", 1, 22, infer_max_pool});
  r.add({"", "AveragePool", 1, 22, infer_average_pool});
  r.add({"", "LpPool", 1, 22, infer_lp_pool});
  r.add({"", "GlobalAveragePool", 1, 22, infer_global_pool});
  r.add({"", "GlobalMaxPool", 1, 22, infer_global_pool});
  r.add({"", "GlobalLpPool", 1, 22, infer_global_pool});
  r.add({"", "MaxUnpool", 9, 22, infer_max_unpool});
}

}  // namespace ignis::ir::nn_ops
