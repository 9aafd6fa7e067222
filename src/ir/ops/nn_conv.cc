// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for Conv and ConvTranspose. The window arithmetic lives in
// core/conv_geometry so that the kernels compute exactly the same extents and pads.
#include <vector>

#include "core/conv_geometry.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir::nn_ops {

namespace {

Result<int64_t> read_group(const InferContext& ctx) {
  const int64_t group = ctx.attrs().get_int("group", 1);
  if (group < 1) return ctx.fail("attribute 'group' must be >= 1, got ", group);
  return group;
}

// Shared input checks: X [N, C, spatial...], W with the same rank, B 1-D.
Status check_conv_inputs(const InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kConvTypes));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "W", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "B", 0));
  IGNIS_RETURN_IF_ERROR(expect_min_rank(ctx, 0, "X", 3));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  if (w.rank() != x.rank())
    return ctx.fail("input 1 ('W') must have the rank of X ", x.str(), ", got ", w.str());
  return Status::ok();
}

Status infer_conv(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(check_conv_inputs(ctx));
  IGNIS_ASSIGN_OR_RETURN(int64_t group, read_group(ctx));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const int64_t c = x[1], m = w[0];
  if (c != w[1] * group)
    return ctx.fail("input channels ", c, " of X ", x.str(), " must equal W's ", w[1], " per group times group ",
                    group);
  if (m % group != 0) return ctx.fail("output channels ", m, " (W ", w.str(), ") are not divisible by group ", group);
  if (ctx.has_input(2)) IGNIS_RETURN_IF_ERROR(expect_vector(ctx, 2, "B", m));
  auto g = make_window_geometry(ctx.attrs(), x.dims().subspan(2), w.dims().subspan(2), false);
  if (!g) return relabel(ctx, g.error());
  std::vector<int64_t> out = {x[0], m};
  for (int i = 0; i < g->rank; ++i) out.push_back(g->out[i]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_conv_transpose(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(check_conv_inputs(ctx));
  IGNIS_ASSIGN_OR_RETURN(int64_t group, read_group(ctx));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const int64_t c = x[1];
  if (w[0] != c) return ctx.fail("input 1 ('W') ", w.str(), " must have ", c, " (X's channels) as its first dimension");
  if (c % group != 0) return ctx.fail("input channels ", c, " are not divisible by group ", group);
  const int64_t m = w[1] * group;
  if (ctx.has_input(2)) IGNIS_RETURN_IF_ERROR(expect_vector(ctx, 2, "B", m));
  auto g = make_transposed_window_geometry(ctx.attrs(), x.dims().subspan(2), w.dims().subspan(2));
  if (!g) return relabel(ctx, g.error());
  std::vector<int64_t> out = {x[0], m};
  for (int i = 0; i < g->rank; ++i) out.push_back(g->out[i]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

}  // namespace

void register_conv_schemas(OpSchemaRegistry& r) {
  r.add({"", "Conv", 1, 22, infer_conv});
  r.add({"", "ConvTranspose", 1, 22, infer_conv_transpose});
}

}  // namespace ignis::ir::nn_ops
