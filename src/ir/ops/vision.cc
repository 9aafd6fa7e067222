// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the vision ops: GridSample, AffineGrid, RoiAlign, MaxRoiPool,
// NonMaxSuppression, DeformConv, Col2Im, CenterCropPad.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/non_max_suppression.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir {

namespace {

using nn_ops::checked_shape;
using nn_ops::expect_input;
using nn_ops::expect_same_dtype;

constexpr DTypeSet kVisionFloats = {DType::F32, DType::F64, DType::F16};

// The float types an op version accepts: bfloat16 joined most of these ops at version 22.
DTypeSet float_types(const InferContext& ctx, int bf16_since = 22) {
  return ctx.opset() >= bf16_since ? kVisionFloats | DTypeSet{DType::BF16} : kVisionFloats;
}

Status expect_one_of(const InferContext& ctx, std::string_view attr, const std::string& value,
                     std::initializer_list<std::string_view> allowed) {
  for (std::string_view a : allowed)
    if (value == a) return Status::ok();
  return ctx.unsupported(str_cat("attribute '", attr, "' = '", value, "' (expected one of ", str_join(allowed), ")"));
}

// Integer attribute `name` with one value per spatial axis (default `def` each), all >= lo.
Result<std::vector<int64_t>> per_axis_attr(const InferContext& ctx, std::string_view name, size_t count, int64_t def,
                                           int64_t lo) {
  std::vector<int64_t> v = ctx.attrs().get_ints(name, std::vector<int64_t>(count, def));
  if (v.size() != count)
    return ctx.fail("attribute '", name, "' must have ", count, " values, got ", str_list(v));
  for (int64_t x : v)
    if (x < lo) return ctx.fail("attribute '", name, "' values must be >= ", lo, ", got ", str_list(v));
  return v;
}

Status infer_grid_sample(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", float_types(ctx)));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "grid", float_types(ctx)));
  const bool v16 = ctx.opset() < 20;
  // Version 20 renamed bilinear/bicubic to linear/cubic; like onnxruntime, both versions
  // accept either spelling.
  IGNIS_RETURN_IF_ERROR(expect_one_of(ctx, "mode", ctx.attrs().get_string("mode", "linear"),
                                      {"linear", "bilinear", "nearest", "cubic", "bicubic"}));
  IGNIS_RETURN_IF_ERROR(expect_one_of(ctx, "padding_mode", ctx.attrs().get_string("padding_mode", "zeros"),
                                      {"zeros", "border", "reflection"}));
  const Shape& x = ctx.input_shape(0);
  const Shape& grid = ctx.input_shape(1);
  if (v16 && x.rank() != 4) return ctx.fail("input 'X' must be 4-D before opset 20, got ", x.str());
  if (x.rank() < 3) return ctx.fail("input 'X' must have rank >= 3, got ", x.str());
  const int r = x.rank() - 2;
  if (grid.rank() != r + 2 || grid[0] != x[0] || grid.back() != r)
    return ctx.fail("input 'grid' must have shape [", x[0], ", out spatial..., ", r, "] for X ", x.str(), ", got ",
                    grid.str());
  for (int i = 2; i < x.rank(); ++i)
    if (x[i] < 1) return ctx.fail("input 'X' must have non-empty spatial axes to sample from, got ", x.str());
  std::vector<int64_t> out = {x[0], x[1]};
  for (int i = 1; i <= r; ++i) out.push_back(grid[i]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_affine_grid(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "theta", float_types(ctx, 20)));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "size", {DType::I64}));
  IGNIS_ASSIGN_OR_RETURN(auto size, ctx.input_ints(1));
  if (size.size() != 4 && size.size() != 5)
    return ctx.fail("input 'size' must hold [N, C, H, W] or [N, C, D, H, W], got ", str_list(size));
  const int64_t r = static_cast<int64_t>(size.size()) - 2;
  const Shape& theta = ctx.input_shape(0);
  if (!(theta == Shape{size[0], r, r + 1}))
    return ctx.fail("input 'theta' must have shape [", size[0], ", ", r, ", ", r + 1, "], got ", theta.str());
  std::vector<int64_t> out(size.begin(), size.end());
  out.erase(out.begin() + 1);
  out.push_back(r);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_roi_align(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", float_types(ctx)));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "rois", 0));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "batch_indices", {DType::I64}));
  IGNIS_RETURN_IF_ERROR(expect_one_of(ctx, "mode", ctx.attrs().get_string("mode", "avg"), {"avg", "max"}));
  if (ctx.opset() >= 16)
    IGNIS_RETURN_IF_ERROR(expect_one_of(ctx, "coordinate_transformation_mode",
                                        ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel"),
                                        {"half_pixel", "output_half_pixel"}));
  const Shape& x = ctx.input_shape(0);
  const Shape& rois = ctx.input_shape(1);
  const Shape& bi = ctx.input_shape(2);
  if (x.rank() != 4 || x[2] < 1 || x[3] < 1)
    return ctx.fail("input 'X' must be 4-D with non-empty height and width, got ", x.str());
  if (rois.rank() != 2 || rois[1] != 4) return ctx.fail("input 'rois' must have shape [num_rois, 4], got ", rois.str());
  if (bi.rank() != 1 || bi[0] != rois[0])
    return ctx.fail("input 'batch_indices' must have shape [", rois[0], "], got ", bi.str());
  const int64_t oh = ctx.attrs().get_int("output_height", 1), ow = ctx.attrs().get_int("output_width", 1);
  if (oh < 1 || ow < 1) return ctx.fail("attributes 'output_height'/'output_width' must be >= 1, got ", oh, ", ", ow);
  if (ctx.attrs().get_int("sampling_ratio", 0) < 0)
    return ctx.fail("attribute 'sampling_ratio' must be >= 0, got ", ctx.attrs().get_int("sampling_ratio", 0));
  const std::vector<int64_t> out = {rois[0], x[1], oh, ow};
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_max_roi_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", float_types(ctx)));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "rois", 0));
  const Shape& x = ctx.input_shape(0);
  const Shape& rois = ctx.input_shape(1);
  if (x.rank() != 4) return ctx.fail("input 'X' must be 4-D, got ", x.str());
  if (rois.rank() != 2 || rois[1] != 5) return ctx.fail("input 'rois' must have shape [num_rois, 5], got ", rois.str());
  if (!ctx.attrs().has("pooled_shape")) return ctx.error("attribute 'pooled_shape' is required");
  IGNIS_ASSIGN_OR_RETURN(auto pooled, per_axis_attr(ctx, "pooled_shape", 2, 1, 1));
  const std::vector<int64_t> out = {rois[0], x[1], pooled[0], pooled[1]};
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

// --- NonMaxSuppression -------------------------------------------------------------------
// The number of selected boxes depends on the input values, so inference runs the selection
// (core/non_max_suppression.h; the kernel runs it again to write the indices) and needs every
// input's value.

Result<float> nms_scalar(const InferContext& ctx, int i, float def) {
  if (!ctx.has_input(i)) return def;
  IGNIS_ASSIGN_OR_RETURN(auto v, ctx.input_doubles(i));
  return v.empty() ? def : static_cast<float>(v[0]);
}

Status infer_non_max_suppression(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 5));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "boxes", {DType::F32}));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "scores", {DType::F32}));
  if (ctx.has_input(2)) IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "max_output_boxes_per_class", {DType::I64}));
  if (ctx.has_input(3)) IGNIS_RETURN_IF_ERROR(expect_input(ctx, 3, "iou_threshold", {DType::F32}));
  if (ctx.has_input(4)) IGNIS_RETURN_IF_ERROR(expect_input(ctx, 4, "score_threshold", {DType::F32}));
  const int64_t center = ctx.attrs().get_int("center_point_box", 0);
  if (center != 0 && center != 1) return ctx.fail("attribute 'center_point_box' must be 0 or 1, got ", center);
  const Shape& boxes = ctx.input_shape(0);
  const Shape& scores = ctx.input_shape(1);
  if (boxes.rank() != 3 || boxes[2] != 4)
    return ctx.fail("input 'boxes' must have shape [batches, boxes, 4], got ", boxes.str());
  if (scores.rank() != 3 || scores[0] != boxes[0] || scores[2] != boxes[1])
    return ctx.fail("input 'scores' must have shape [", boxes[0], ", classes, ", boxes[1], "], got ", scores.str());
  for (int i = 2; i < 5; ++i)
    if (ctx.has_input(i) && ctx.input_shape(i).numel() > 1)
      return ctx.fail("input ", i, " must hold a single value, got shape ", ctx.input_shape(i).str());
  for (int i = 0; i < 5; ++i)
    if (ctx.has_input(i) && ctx.input_value(i) == nullptr)
      return Status(StatusCode::ValueRequired, "NonMaxSuppression: the output shape depends on the input values");

  int64_t max_out = 0;
  if (ctx.has_input(2)) {
    IGNIS_ASSIGN_OR_RETURN(auto v, ctx.input_ints(2));
    if (!v.empty()) max_out = std::max<int64_t>(v[0], 0);
  }
  IGNIS_ASSIGN_OR_RETURN(float iou, nms_scalar(ctx, 3, 0.0f));
  IGNIS_ASSIGN_OR_RETURN(float score_threshold, nms_scalar(ctx, 4, 0.0f));
  const bool filter = ctx.has_input(4) && ctx.input_shape(4).numel() > 0;

  NmsOptions options;
  options.center_point_box = center == 1;
  options.max_per_class = max_out;
  options.iou_threshold = iou;
  options.filter_scores = filter;
  options.score_threshold = score_threshold;
  const int64_t selected_total =
      static_cast<int64_t>(non_max_suppression(ctx.input_value(0)->data_as<const float>(),
                                               ctx.input_value(1)->data_as<const float>(), boxes[0], scores[1],
                                               boxes[1], options).size()) / 3;
  ctx.set_output(0, DType::I64, Shape{selected_total, 3});
  return Status::ok();
}

// --- DeformConv, Col2Im, CenterCropPad ---------------------------------------------------

Status infer_deform_conv(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 5));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", float_types(ctx)));
  static constexpr const char* kNames[] = {"X", "W", "offset", "B", "mask"};
  for (int i = 1; i < 5; ++i) IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, i, kNames[i], 0));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const Shape& off = ctx.input_shape(2);
  if (x.rank() < 3) return ctx.fail("input 'X' must have rank >= 3, got ", x.str());
  const int r = x.rank() - 2;
  if (w.rank() != x.rank()) return ctx.fail("input 'W' must have rank ", x.rank(), ", got ", w.str());
  const int64_t group = ctx.attrs().get_int("group", 1), offset_group = ctx.attrs().get_int("offset_group", 1);
  if (group < 1 || x[1] % group != 0 || w[0] % group != 0 || w[1] * group != x[1])
    return ctx.fail("attribute 'group' = ", group, " does not fit X ", x.str(), " and W ", w.str());
  if (offset_group < 1 || x[1] % offset_group != 0)
    return ctx.fail("attribute 'offset_group' = ", offset_group, " must divide the ", x[1], " input channels");
  const size_t ur = static_cast<size_t>(r);
  IGNIS_ASSIGN_OR_RETURN(auto kernel, per_axis_attr(ctx, "kernel_shape", ur, 1, 1));
  if (!ctx.attrs().has("kernel_shape")) kernel.assign(w.begin() + 2, w.end());
  for (int i = 0; i < r; ++i)
    if (kernel[i] != w[i + 2])
      return ctx.fail("attribute 'kernel_shape' ", str_list(kernel), " does not match W ", w.str());
  IGNIS_ASSIGN_OR_RETURN(auto strides, per_axis_attr(ctx, "strides", ur, 1, 1));
  IGNIS_ASSIGN_OR_RETURN(auto dilations, per_axis_attr(ctx, "dilations", ur, 1, 1));
  IGNIS_ASSIGN_OR_RETURN(auto pads, per_axis_attr(ctx, "pads", 2 * ur, 0, 0));
  std::vector<int64_t> out = {x[0], w[0]};
  for (int i = 0; i < r; ++i) {
    const int64_t span = (kernel[i] - 1) * dilations[i] + 1;
    const int64_t o = (x[i + 2] + pads[i] + pads[i + r] - span) / strides[i] + 1;
    if (o < 1) return ctx.fail("the kernel ", str_list(kernel), " does not fit the padded input ", x.str());
    out.push_back(o);
  }
  const int64_t ksize = std::accumulate(kernel.begin(), kernel.end(), int64_t{1}, std::multiplies<>());
  std::vector<int64_t> want_off = {x[0], offset_group * ksize * r};
  want_off.insert(want_off.end(), out.begin() + 2, out.end());
  if (!(off == Shape(want_off)))
    return ctx.fail("input 'offset' must have shape ", str_list(want_off), ", got ", off.str());
  if (ctx.has_input(3) && !(ctx.input_shape(3) == Shape{w[0]}))
    return ctx.fail("input 'B' must have shape [", w[0], "], got ", ctx.input_shape(3).str());
  if (ctx.has_input(4)) {
    std::vector<int64_t> want_mask = want_off;
    want_mask[1] = offset_group * ksize;
    if (!(ctx.input_shape(4) == Shape(want_mask)))
      return ctx.fail("input 'mask' must have shape ", str_list(want_mask), ", got ", ctx.input_shape(4).str());
  }
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_col2im(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "input", DTypeSet::numeric()));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "image_shape", {DType::I64}));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "block_shape", {DType::I64}));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() != 3) return ctx.fail("input 'input' must be 3-D [N, C * prod(block_shape), L], got ", in.str());
  IGNIS_ASSIGN_OR_RETURN(auto image, ctx.input_ints(1));
  IGNIS_ASSIGN_OR_RETURN(auto block, ctx.input_ints(2));
  const size_t r = image.size();
  if (r == 0 || block.size() != r)
    return ctx.fail("inputs 'image_shape' ", str_list(image), " and 'block_shape' ", str_list(block),
                    " must be non-empty and of equal length");
  IGNIS_ASSIGN_OR_RETURN(auto strides, per_axis_attr(ctx, "strides", r, 1, 1));
  IGNIS_ASSIGN_OR_RETURN(auto dilations, per_axis_attr(ctx, "dilations", r, 1, 1));
  IGNIS_ASSIGN_OR_RETURN(auto pads, per_axis_attr(ctx, "pads", 2 * r, 0, 0));
  int64_t ksize = 1, blocks = 1;
  for (size_t i = 0; i < r; ++i) {
    if (image[i] < 1 || block[i] < 1)
      return ctx.fail("'image_shape' ", str_list(image), " and 'block_shape' ", str_list(block), " must be positive");
    const int64_t n = (image[i] + pads[i] + pads[i + r] - (dilations[i] * (block[i] - 1) + 1)) / strides[i] + 1;
    if (n < 1) return ctx.fail("block ", str_list(block), " does not fit the padded image ", str_list(image));
    ksize *= block[i];
    blocks *= n;
  }
  if (in[1] % ksize != 0 || in[2] != blocks)
    return ctx.fail("input 'input' must have shape [N, C * ", ksize, ", ", blocks, "], got ", in.str());
  std::vector<int64_t> out = {in[0], in[1] / ksize};
  out.insert(out.end(), image.begin(), image.end());
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

Status infer_center_crop_pad(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "input_data", DTypeSet::all()));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "shape", {DType::I32, DType::I64}));
  const Shape& in = ctx.input_shape(0);
  IGNIS_ASSIGN_OR_RETURN(auto shape, ctx.input_ints(1));
  std::vector<int64_t> axes(static_cast<size_t>(in.rank()));
  std::iota(axes.begin(), axes.end(), int64_t{0});
  if (ctx.attrs().has("axes")) axes = ctx.attrs().get_ints("axes");
  if (shape.size() != axes.size())
    return ctx.fail("input 'shape' ", str_list(shape), " must have one value per axis in ", str_list(axes));
  std::vector<int64_t> out = in.to_vector();
  std::vector<bool> seen(out.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + in.rank() : axes[i];
    if (a < 0 || a >= in.rank() || seen[a])
      return ctx.fail("attribute 'axes' ", str_list(axes), " is out of range or repeats an axis for rank ", in.rank());
    if (shape[i] < 0) return ctx.fail("input 'shape' values must be >= 0, got ", str_list(shape));
    seen[a] = true;
    out[a] = shape[i];
  }
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, ctx.input_dtype(0), "output"));
  ctx.set_output(0, ctx.input_dtype(0), y);
  return Status::ok();
}

}  // namespace

void register_vision_schemas(OpSchemaRegistry& r) {
  r.add({"", "GridSample", 16, 22, infer_grid_sample});
  r.add({"", "AffineGrid", 20, 20, infer_affine_grid});
  r.add({"", "RoiAlign", 10, 22, infer_roi_align});
  r.add({"", "MaxRoiPool", 1, 22, infer_max_roi_pool});
  r.add({"", "NonMaxSuppression", 10, 11, infer_non_max_suppression});
  r.add({"", "DeformConv", 19, 22, infer_deform_conv});
  r.add({"", "Col2Im", 18, 18, infer_col2im});
  r.add({"", "CenterCropPad", 18, 18, infer_center_crop_pad});
}

}  // namespace ignis::ir
