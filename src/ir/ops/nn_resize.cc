// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for Resize (opsets 10, 11, 13, 18, 19) and the deprecated
// Upsample (7, 9). The output extents depend on the scales/sizes input values.
#include <optional>
#include <vector>

#include "core/resize_geometry.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir::nn_ops {

namespace {

constexpr DTypeSet kResizeTypes = DTypeSet::all();

// Reads optional input i as doubles; an absent input stays nullopt.
Result<std::optional<std::vector<double>>> optional_doubles(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return std::optional<std::vector<double>>();
  IGNIS_ASSIGN_OR_RETURN(auto v, ctx.input_doubles(i));
  return std::optional<std::vector<double>>(std::move(v));
}

Status finish(InferContext& ctx, bool is_upsample, const ResizeValues& values) {
  const Shape& x = ctx.input_shape(0);
  auto p = make_resize_params(ctx.attrs(), ctx.opset(), is_upsample, x.dims(), values);
  if (!p) return relabel(ctx, p.error());
  if (p->mode != ResizeMode::Nearest && ctx.input_dtype(0) == DType::Bool)
    return ctx.unsupported("linear and cubic modes on bool tensors");
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, p->out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_resize(InferContext& ctx) {
  const int64_t opset = ctx.opset();
  // Opset 10: X, scales. Opsets 11-12: X, roi, scales (required, may be empty), sizes.
  // Opset 13+: roi and scales optional too.
  if (opset < 11) IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  else IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(opset < 13 ? 3 : 1, 4));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kResizeTypes));
  ResizeValues values;
  std::optional<std::vector<double>> scales, roi;
  std::optional<std::vector<int64_t>> sizes;
  if (opset < 11) {
    IGNIS_ASSIGN_OR_RETURN(scales, optional_doubles(ctx, 1));
  } else {
    IGNIS_ASSIGN_OR_RETURN(scales, optional_doubles(ctx, 2));
    if (ctx.has_input(3)) {
      IGNIS_ASSIGN_OR_RETURN(sizes, ctx.input_ints(3));
    }
    if (ctx.has_input(1) && ctx.attrs().get_string("coordinate_transformation_mode") == "tf_crop_and_resize") {
      IGNIS_ASSIGN_OR_RETURN(roi, optional_doubles(ctx, 1));
    }
  }
  if (scales) values.scales = &*scales;
  if (sizes) values.sizes = &*sizes;
  if (roi) values.roi = &*roi;
  return finish(ctx, false, values);
}

Status infer_upsample(InferContext& ctx) {
  std::optional<std::vector<double>> scales;
  if (ctx.opset() < 9) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
    const Attribute* a = ctx.attrs().find("scales");
    if (a == nullptr || a->kind != Attribute::Kind::Floats) return ctx.error("attribute 'scales' (floats) is required");
    scales.emplace(a->floats.begin(), a->floats.end());
  } else {
    IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
    IGNIS_ASSIGN_OR_RETURN(scales, optional_doubles(ctx, 1));
  }
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kResizeTypes));
  ResizeValues values;
  values.scales = &*scales;
  return finish(ctx, true, values);
}

}  // namespace

void register_resize_schemas(OpSchemaRegistry& r) {
  r.add({"", "Resize", 10, 21, infer_resize});
  r.add({"", "Upsample", 7, 9, infer_upsample});
}

}  // namespace ignis::ir::nn_ops
