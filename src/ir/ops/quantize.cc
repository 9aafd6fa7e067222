// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the linear quantization ops: QuantizeLinear,
// DequantizeLinear (per-tensor and per-axis scales; the blocked form of opset 21 is refused) and
// DynamicQuantizeLinear.
#include <string_view>

#include "core/broadcast.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

constexpr DTypeSet kQuantTypes{DType::U8, DType::I8};
constexpr DTypeSet kScaleTypes{DType::F32, DType::F16, DType::BF16};

// The scale (input 1) and zero point (input 2, optional) of `data` (input 0): scalars, or 1-D
// with one entry per slice along `axis` (opset 13+). The zero point has the scale's shape.
Status check_scale_and_zero_point(const InferContext& ctx, std::string_view scale_name) {
  const Attribute* block = ctx.attrs().find("block_size");
  if (block != nullptr && block->kind == Attribute::Kind::Int && block->i != 0)
    return ctx.unsupported("blocked quantization (block_size != 0) is not supported");
  const Shape& data = ctx.input_shape(0);
  const Shape& scale = ctx.input_shape(1);
  if (scale.rank() > 1 || (scale.rank() == 1 && ctx.opset() < 13 && scale[0] != 1))
    return ctx.fail("input 1 (", scale_name, ") must be a scalar", ctx.opset() >= 13 ? " or 1-D" : "", ", got ",
                    scale.str());
  if (scale.rank() == 1 && scale[0] != 1) {
    const auto axis = normalize_axis(ctx.attrs().get_int("axis", 1), data.rank());
    if (!axis) return ctx.fail("attribute 'axis' ", ctx.attrs().get_int("axis", 1), " is out of range for rank ", data.rank());
    if (scale[0] != data[*axis])
      return ctx.fail("input 1 (", scale_name, ") has ", scale[0], " entries but input 0 has ", data[*axis],
                      " along axis ", *axis);
  }
  if (ctx.has_input(2) && !(ctx.input_shape(2) == scale))
    return ctx.fail("input 2 (zero point) must have the shape of input 1 ", scale.str(), ", got ",
                    ctx.input_shape(2).str());
  return Status::ok();
}

Status infer_quantize_linear(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet{DType::F32, DType::F16, DType::BF16, DType::I32}));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kScaleTypes));
  DType out = DType::U8;
  if (ctx.has_input(2)) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(2, kQuantTypes));
    out = ctx.input_dtype(2);
  }
  if (const Attribute* od = ctx.attrs().find("output_dtype"); od != nullptr && od->i != 0) {
    auto t = dtype_from_onnx(static_cast<int32_t>(od->i));
    if (!t || !kQuantTypes.contains(*t))
      return ctx.unsupported(str_cat("attribute 'output_dtype' ", od->i, " is not uint8 or int8"));
    if (ctx.has_input(2) && *t != out)
      return ctx.fail("attribute 'output_dtype' disagrees with input 2 (zero point) of dtype ", dtype_name(out));
    out = *t;
  }
  IGNIS_RETURN_IF_ERROR(check_scale_and_zero_point(ctx, "y_scale"));
  ctx.set_output(0, out, ctx.input_shape(0));
  return Status::ok();
}

Status infer_dequantize_linear(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet{DType::U8, DType::I8, DType::I32}));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kScaleTypes));
  if (ctx.has_input(2) && ctx.input_dtype(2) != ctx.input_dtype(0))
    return ctx.fail("input 2 (zero point) must have input 0's dtype ", dtype_name(ctx.input_dtype(0)), ", got ",
                    dtype_name(ctx.input_dtype(2)));
  IGNIS_RETURN_IF_ERROR(check_scale_and_zero_point(ctx, "x_scale"));
  ctx.set_output(0, ctx.input_dtype(1), ctx.input_shape(0));
  return Status::ok();
}

// y (uint8), y_scale (float scalar), y_zero_point (uint8 scalar).
Status infer_dynamic_quantize_linear(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet{DType::F32}));
  ctx.set_output(0, DType::U8, ctx.input_shape(0));
  ctx.set_output(1, DType::F32, Shape{});
  ctx.set_output(2, DType::U8, Shape{});
  return Status::ok();
}

}  // namespace

void register_quantize_schemas(OpSchemaRegistry& r) {
  r.add({"", "QuantizeLinear", 10, 21, infer_quantize_linear});
  r.add({"", "DequantizeLinear", 10, 21, infer_dequantize_linear});
  r.add({"", "DynamicQuantizeLinear", 11, 21, infer_dynamic_quantize_linear});
}

}  // namespace ignis::ir
