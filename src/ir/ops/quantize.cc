// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the linear quantization ops: QuantizeLinear,
// DequantizeLinear (per-tensor, per-axis and, from opset 21, blocked scales),
// DynamicQuantizeLinear, and the integer ops MatMulInteger, ConvInteger, QLinearMatMul and
// QLinearConv; com.microsoft MatMulNBits (4-bit block-quantized weights), QLinearAdd (the
// residual sum of two quantized tensors), QLinearMul and QLinearGlobalAveragePool, onnxruntime's
// contrib ops; and ai.ignis QLinearLookup (a function of a quantized value as a 256-entry table),
// DynamicQuantizeRows and MatMulIntegerToFloat (dynamic int8 MatMul with its float tail).
#include <initializer_list>
#include <string_view>
#include <vector>

#include "core/broadcast.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

constexpr DTypeSet kQuantTypes = DTypeSet{DType::U8, DType::I8, DType::U16, DType::I16, DType::F4E2M1} |
                                 DTypeSet::float8() | DTypeSet::int4() | DTypeSet::int2();
constexpr DTypeSet kScaleTypes{DType::F32, DType::F16, DType::BF16};

// Blocked quantization (opset 21+, block_size > 0): the scale has the data's rank and shape
// except along `axis`, where one entry covers `block_size` consecutive slices (the last block
// may be short), so scale[axis] = ceil(data[axis] / block_size).
Status check_blocked_scale(const InferContext& ctx, std::string_view scale_name, int64_t block) {
  if (ctx.opset() < 21) return ctx.fail("attribute 'block_size' needs opset 21 or later, the model has ", ctx.opset());
  if (block < 0) return ctx.fail("attribute 'block_size' must be >= 0, got ", block);
  const Shape& data = ctx.input_shape(0);
  const Shape& scale = ctx.input_shape(1);
  const auto axis = normalize_axis(ctx.attrs().get_int("axis", 1), data.rank());
  if (!axis) return ctx.fail("attribute 'axis' ", ctx.attrs().get_int("axis", 1), " is out of range for rank ", data.rank());
  std::vector<int64_t> want(data.begin(), data.end());
  want[static_cast<size_t>(*axis)] = (data[*axis] + block - 1) / block;
  if (!(scale == Shape(want)))
    return ctx.fail("input 1 (", scale_name, ") must have shape ", Shape(want).str(), " for blocks of ", block,
                    " along axis ", *axis, " of ", data.str(), ", got ", scale.str());
  if (ctx.has_input(2) && !(ctx.input_shape(2) == scale))
    return ctx.fail("input 2 (zero point) must have the shape of input 1 ", scale.str(), ", got ",
                    ctx.input_shape(2).str());
  return Status::ok();
}

// The scale (input 1) and zero point (input 2, optional) of `data` (input 0): scalars, 1-D
// with one entry per slice along `axis` (opset 13+), or blocked (above). The zero point has the
// scale's shape.
Status check_scale_and_zero_point(const InferContext& ctx, std::string_view scale_name) {
  const Attribute* block = ctx.attrs().find("block_size");
  if (block != nullptr && block->kind == Attribute::Kind::Int && block->i != 0)
    return check_blocked_scale(ctx, scale_name, block->i);
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
  // A one-entry zero point may be [1] beside a scalar scale, or the other way round.
  const auto one = [](const Shape& s) { return s.rank() <= 1 && s.numel() == 1; };
  if (ctx.has_input(2) && !(ctx.input_shape(2) == scale) && !(one(ctx.input_shape(2)) && one(scale)))
    return ctx.fail("input 2 (zero point) must have the shape of input 1 ", scale.str(), ", got ",
                    ctx.input_shape(2).str());
  return Status::ok();
}

// A type attribute (an ONNX TensorProto element type) that is absent, 0, or names `dtype`.
Status expect_type_attr_or(const InferContext& ctx, std::string_view name, DType dtype) {
  const Attribute* a = ctx.attrs().find(name);
  if (a == nullptr || a->i == 0) return Status::ok();
  auto t = dtype_from_onnx(static_cast<int32_t>(a->i));
  if (!t || *t != dtype)
    return ctx.unsupported(str_cat("attribute '", name, "' ", a->i, " differs from the scale's type ", dtype_name(dtype)));
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
      return ctx.unsupported(str_cat("attribute 'output_dtype' ", od->i, " is not a supported quantized type"));
    if (ctx.has_input(2) && *t != out)
      return ctx.fail("attribute 'output_dtype' disagrees with input 2 (zero point) of dtype ", dtype_name(out));
    out = *t;
  }
  IGNIS_RETURN_IF_ERROR(check_scale_and_zero_point(ctx, "y_scale"));
  // QuantizeLinear-23: the division runs at `precision`; the kernels divide at y_scale's type.
  IGNIS_RETURN_IF_ERROR(expect_type_attr_or(ctx, "precision", ctx.input_dtype(1)));
  ctx.set_output(0, out, ctx.input_shape(0));
  return Status::ok();
}

Status infer_dequantize_linear(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kQuantTypes | DTypeSet{DType::I32}));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kScaleTypes));
  if (ctx.has_input(2) && ctx.input_dtype(2) != ctx.input_dtype(0))
    return ctx.fail("input 2 (zero point) must have input 0's dtype ", dtype_name(ctx.input_dtype(0)), ", got ",
                    dtype_name(ctx.input_dtype(2)));
  IGNIS_RETURN_IF_ERROR(check_scale_and_zero_point(ctx, "x_scale"));
  // DequantizeLinear-23 may name the output type; the kernels write x_scale's type.
  IGNIS_RETURN_IF_ERROR(expect_type_attr_or(ctx, "output_dtype", ctx.input_dtype(1)));
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

// The integer ops' output shape is their float op's: run that op's inference on float32
// stand-ins of the data inputs (`data` lists them: {input index, role}), with the node's
// attributes, and give the result `out`'s dtype.
Status infer_like_float_op(InferContext& ctx, std::string_view float_op, std::initializer_list<int> data, DType out) {
  std::vector<ValueType> stand_ins;
  for (int i : data) stand_ins.push_back({DType::F32, ctx.input_shape(i)});
  std::vector<const ValueType*> inputs;
  for (const auto& v : stand_ins) inputs.push_back(&v);
  std::vector<const Tensor*> values(inputs.size(), nullptr);
  const OpSchema* schema = OpSchemaRegistry::global().find("", float_op, 13);
  if (schema == nullptr) return ctx.error(str_cat("no schema for ", float_op));
  InferContext inner("", float_op, 13, ctx.attrs(), inputs, values, 1);
  Status s = schema->infer(inner);
  if (!s.is_ok()) return Status(s.code(), str_cat(ctx.error("").message(), "as ", float_op, ": ", s.message()));
  ctx.set_output(0, out, inner.outputs()[0].shape);
  return Status::ok();
}

constexpr DTypeSet kIntegerTypes{DType::U8, DType::I8};

// A zero point or scale that is a scalar, or a vector of `n` entries when `n` > 0.
Status expect_scalar_or_vector(const InferContext& ctx, int i, std::string_view name, int64_t n) {
  if (!ctx.has_input(i)) return Status::ok();
  const Shape& s = ctx.input_shape(i);
  if (s.numel() == 1 && s.rank() <= 1) return Status::ok();
  if (n > 0 && s.rank() == 1 && s[0] == n) return Status::ok();
  return ctx.unsupported(str_cat("input ", i, " (", name, ") of shape ", s.str(), " (supported: a scalar",
                                 n > 0 ? str_cat(" or ", n, " entries") : std::string(), ")"));
}

// MatMulInteger(A, B, a_zero_point?, b_zero_point?) -> int32.
Status infer_matmul_integer(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 4));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kIntegerTypes));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 2, "a_zero_point", a.rank() >= 2 ? a[a.rank() - 2] : 0));
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 3, "b_zero_point", b.rank() >= 1 ? b[b.rank() - 1] : 0));
  return infer_like_float_op(ctx, "MatMul", {0, 1}, DType::I32);
}

// A's shape with its last extent 1: one entry per row (DynamicQuantizeRows' scale).
Shape rows_of(const Shape& a) {
  Shape rows = a;
  if (rows.rank() > 0) rows[rows.rank() - 1] = 1;
  return rows;
}

// ai.ignis DynamicQuantizeRows(x) -> (y int8, scale float32): each row (last axis) of x
// quantized symmetrically with its own scale, max(max |x|, floor) / limit, y = x / scale
// rounded half to even and clamped to [-limit, limit]; scale has x's shape with its last
// extent 1. Attributes: floor (float > 0), limit (int in [1, 127]).
Status infer_dynamic_quantize_rows(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet{DType::F32}));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 1) return ctx.fail("input 0 (x) must have at least one axis, got a scalar");
  const float floor = ctx.attrs().get_float("floor", 0.0f);
  if (!(floor > 0.0f)) return ctx.fail("attribute 'floor' must be > 0, got ", floor);
  const int64_t limit = ctx.attrs().get_int("limit", 127);
  if (limit < 1 || limit > 127) return ctx.fail("attribute 'limit' must be in [1, 127], got ", limit);
  ctx.set_output(0, DType::I8, x);
  ctx.set_output(1, DType::F32, rows_of(x));
  return Status::ok();
}

// ai.ignis MatMulIntegerToFloat(A, B, scale, a_zero_point?, b_zero_point?, bias?, row_scale?)
// -> float32: MatMulInteger's product times scale (one value or one per column), times
// row_scale (one per row of A: A's shape with its last extent 1), plus bias (one per column).
Status infer_matmul_integer_to_float(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 7));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(2, DTypeSet{DType::F32}));
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  const int64_t n = b.rank() >= 1 ? b[b.rank() - 1] : 0;
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 2, "scale", n));
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 3, "a_zero_point", a.rank() >= 2 ? a[a.rank() - 2] : 0));
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 4, "b_zero_point", n));
  if (ctx.has_input(5)) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(5, DTypeSet{DType::F32}));
    if (!(ctx.input_shape(5) == Shape{n}))
      return ctx.fail("input 5 (bias) must have ", n, " entries, got ", ctx.input_shape(5).str());
  }
  if (ctx.has_input(6)) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(6, DTypeSet{DType::F32}));
    if (b.rank() < 2) return ctx.fail("input 6 (row_scale) needs a B of rank 2 or more, got ", b.str());
    if (a.rank() < 1 || !(ctx.input_shape(6) == rows_of(a)))
      return ctx.fail("input 6 (row_scale) must have shape ", rows_of(a).str(), " (one entry per row of A ",
                      a.str(), "), got ", ctx.input_shape(6).str());
  }
  return infer_like_float_op(ctx, "MatMul", {0, 1}, DType::F32);
}

// ConvInteger(x, w, x_zero_point?, w_zero_point?) -> int32.
Status infer_conv_integer(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 4));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 2, "x_zero_point", 0));
  const Shape& w = ctx.input_shape(1);
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 3, "w_zero_point", w.rank() >= 1 ? w[0] : 0));
  return infer_like_float_op(ctx, "Conv", {0, 1}, DType::I32);
}

// The output dtype of QLinearMatMul/QLinearConv: y_zero_point's (input 7).
Result<DType> qlinear_output(const InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(3, kIntegerTypes));
  for (int i : {1, 4, 6}) IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(i, kScaleTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(7, kIntegerTypes));
  for (int i : {1, 2, 6, 7}) IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, i, "scale or zero point", 0));
  return ctx.input_dtype(7);
}

// QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): per-column b scales.
Status infer_qlinear_matmul(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(8, 8));
  IGNIS_ASSIGN_OR_RETURN(DType out, qlinear_output(ctx));
  const Shape& b = ctx.input_shape(3);
  const int64_t cols = b.rank() >= 1 ? b[b.rank() - 1] : 0;
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 4, "b_scale", cols));
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 5, "b_zero_point", cols));
  return infer_like_float_op(ctx, "MatMul", {0, 3}, out);
}

// QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?): per-output-channel w
// scales and zero points, int32 bias.
Status infer_qlinear_conv(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(8, 9));
  IGNIS_ASSIGN_OR_RETURN(DType out, qlinear_output(ctx));
  const Shape& w = ctx.input_shape(3);
  const int64_t channels = w.rank() >= 1 ? w[0] : 0;
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 4, "w_scale", channels));
  IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, 5, "w_zero_point", channels));
  if (ctx.has_input(8)) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(8, DTypeSet{DType::I32}));
    if (!(ctx.input_shape(8) == Shape{channels}))
      return ctx.fail("input 8 (B) must have ", channels, " entries, got ", ctx.input_shape(8).str());
  }
  return infer_like_float_op(ctx, "Conv", {0, 3}, out);
}

// com.microsoft QLinearAdd / QLinearMul(A, A_scale, A_zp?, B, B_scale, B_zp?, C_scale, C_zp?),
// onnxruntime's contrib ops: C = quantize(dequantize(A) + (or *) dequantize(B)), A and B
// broadcast as Add does. A, B, C and the zero points share one type (uint8 or int8); scales and
// zero points are per tensor.
Status infer_qlinear_binary(InferContext& ctx) {
  // The zero points (2, 5, 7) are optional, so fewer than 7 inputs may be present.
  if (ctx.num_inputs() < 7 || ctx.num_inputs() > 8) return ctx.fail("expected 7 to 8 inputs, got ", ctx.num_inputs());
  for (int i : {0, 1, 3, 4, 6})
    if (!ctx.has_input(i)) return ctx.fail("input ", i, " is required");
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  const DType t = ctx.input_dtype(0);
  if (ctx.input_dtype(3) != t)
    return ctx.fail("input 3 (B) must have input 0's dtype ", dtype_name(t), ", got ", dtype_name(ctx.input_dtype(3)));
  for (int i : {1, 4, 6}) IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(i, DTypeSet{DType::F32}));
  for (int i : {2, 5, 7})
    if (ctx.has_input(i) && ctx.input_dtype(i) != t)
      return ctx.fail("input ", i, " (zero point) must have input 0's dtype ", dtype_name(t), ", got ",
                      dtype_name(ctx.input_dtype(i)));
  for (int i : {1, 2, 4, 5, 6, 7}) IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, i, "scale or zero point", 0));
  const auto out = broadcast_shapes(ctx.input_shape(0), ctx.input_shape(3));
  if (!out)
    return ctx.fail("inputs 0 ", ctx.input_shape(0).str(), " and 3 ", ctx.input_shape(3).str(), " do not broadcast");
  ctx.set_output(0, t, *out);
  return Status::ok();
}

// com.microsoft QLinearGlobalAveragePool(X, x_scale, x_zero_point?, y_scale, y_zero_point?),
// onnxruntime's contrib op: Y = quantize(GlobalAveragePool(dequantize(X))), per-tensor scales and
// zero points of X's type (uint8 or int8). channels_last = 1 reads X as [N, spatial..., C] and
// writes [N, 1..., C]; else [N, C, spatial...] -> [N, C, 1...].
Status infer_qlinear_global_average_pool(InferContext& ctx) {
  // The zero points (2, 4) are optional, so fewer than 4 inputs may be present.
  if (ctx.num_inputs() < 4 || ctx.num_inputs() > 5) return ctx.fail("expected 4 to 5 inputs, got ", ctx.num_inputs());
  for (int i : {0, 1, 3})
    if (!ctx.has_input(i)) return ctx.fail("input ", i, " is required");
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  const DType t = ctx.input_dtype(0);
  for (int i : {1, 3}) IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(i, DTypeSet{DType::F32}));
  for (int i : {2, 4})
    if (ctx.has_input(i) && ctx.input_dtype(i) != t)
      return ctx.fail("input ", i, " (zero point) must have input 0's dtype ", dtype_name(t), ", got ",
                      dtype_name(ctx.input_dtype(i)));
  for (int i : {1, 2, 3, 4}) IGNIS_RETURN_IF_ERROR(expect_scalar_or_vector(ctx, i, "scale or zero point", 0));
  const int64_t channels_last = ctx.attrs().get_int("channels_last", 0);
  if (channels_last != 0 && channels_last != 1)
    return ctx.fail("attribute 'channels_last' must be 0 or 1, got ", channels_last);
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 3) return ctx.fail("input 0 (X) must have rank >= 3, got ", x.str());
  std::vector<int64_t> y(static_cast<size_t>(x.rank()), 1);
  y[0] = x[0];
  if (channels_last) y.back() = x[x.rank() - 1];
  else y[1] = x[1];
  ctx.set_output(0, t, Shape(y));
  return Status::ok();
}

// ai.ignis QLinearLookup(X, table): Y[i] = table[X[i] - min(X's type)], a function of the
// quantized value given as its 256 results (fuse_qdq_into_lookup_table). X is uint8 or int8;
// the table is 1-D of 256 uint8 or int8 values, whose type Y takes.
Status infer_qlinear_lookup(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, kIntegerTypes));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, kIntegerTypes));
  if (!(ctx.input_shape(1) == Shape{256}))
    return ctx.fail("input 1 (table) must have shape [256], got ", ctx.input_shape(1).str());
  ctx.set_output(0, ctx.input_dtype(1), ctx.input_shape(0));
  return Status::ok();
}

// com.microsoft MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?) -> float32, onnxruntime's
// contrib op: Y = A @ dequant(B)^T + bias, with B [N, n_blocks, block_size / 2] holding 4-bit
// codes along K (low nibble first), scales [N * n_blocks], zero points packed two per byte
// (low nibble first, each column's row padded to whole bytes; absent: 8), and
// dequant(B)[n][k] = (code - zero_point) * scale of block k / block_size.
Status infer_matmul_nbits(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 6));
  const AttrMap& at = ctx.attrs();
  for (const char* name : {"K", "N", "block_size"})
    if (at.find(name) == nullptr) return ctx.fail("attribute '", name, "' is required");
  const int64_t k = at.get_int("K", 0), n = at.get_int("N", 0), bits = at.get_int("bits", 4);
  const int64_t block = at.get_int("block_size", 0);
  if (k < 1 || n < 1) return ctx.fail("attributes 'K' and 'N' must be >= 1, got K=", k, " N=", n);
  if (bits != 4) return ctx.unsupported(str_cat("attribute 'bits' ", bits, " (supported: 4)"));
  if (block < 16 || (block & (block - 1)) != 0)
    return ctx.fail("attribute 'block_size' must be a power of 2 >= 16, got ", block);
  const int64_t level = at.get_int("accuracy_level", 0);
  if (level < 0 || level > 4) return ctx.fail("attribute 'accuracy_level' must be in [0, 4], got ", level);
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet{DType::F32}));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(1, DTypeSet{DType::U8}));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(2, DTypeSet{DType::F32}));
  const Shape& a = ctx.input_shape(0);
  if (a.rank() < 1 || a[a.rank() - 1] != k)
    return ctx.fail("input 0 (A) must end in K=", k, ", got ", a.str());
  const int64_t blocks = (k + block - 1) / block;
  if (!(ctx.input_shape(1) == Shape{n, blocks, block / 2}))
    return ctx.fail("input 1 (B) must have shape ", Shape{n, blocks, block / 2}.str(), " for N=", n, " K=", k,
                    " block_size=", block, ", got ", ctx.input_shape(1).str());
  if (ctx.input_shape(2).numel() != n * blocks)
    return ctx.fail("input 2 (scales) must have N * n_blocks = ", n * blocks, " entries, got ",
                    ctx.input_shape(2).str());
  if (ctx.has_input(3)) {
    if (ctx.input_dtype(3) != DType::U8)
      return ctx.unsupported(str_cat("input 3 (zero_points) of dtype ", dtype_name(ctx.input_dtype(3)),
                                     " (supported: uint8, two 4-bit zero points per byte)"));
    const int64_t want = n * ((blocks + 1) / 2);
    if (ctx.input_shape(3).numel() != want)
      return ctx.fail("input 3 (zero_points) must have N * ceil(n_blocks / 2) = ", want, " bytes, got ",
                      ctx.input_shape(3).str());
  }
  if (ctx.has_input(4))
    return ctx.unsupported("input 4 (g_idx, act-order column permutation) is not supported");
  if (ctx.has_input(5)) {
    IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(5, DTypeSet{DType::F32}));
    if (ctx.input_shape(5).numel() != n || ctx.input_shape(5).rank() != 1)
      return ctx.fail("input 5 (bias) must have shape [", n, "], got ", ctx.input_shape(5).str());
  }
  std::vector<int64_t> dims(a.begin(), a.end());
  dims.back() = n;
  ctx.set_output(0, DType::F32, Shape(dims));
  return Status::ok();
}

}  // namespace

void register_quantize_schemas(OpSchemaRegistry& r) {
  r.add({"com.microsoft", "MatMulNBits", 1, 1, infer_matmul_nbits});
  r.add({"com.microsoft", "QLinearAdd", 1, 1, infer_qlinear_binary});
  r.add({"com.microsoft", "QLinearMul", 1, 1, infer_qlinear_binary});
  r.add({"ai.ignis", "QLinearLookup", 1, 1, infer_qlinear_lookup});
  r.add({"com.microsoft", "QLinearGlobalAveragePool", 1, 1, infer_qlinear_global_average_pool});
  r.add({"", "MatMulInteger", 10, 10, infer_matmul_integer});
  r.add({"", "ConvInteger", 10, 10, infer_conv_integer});
  r.add({"ai.ignis", "MatMulIntegerToFloat", 1, 1, infer_matmul_integer_to_float});
  r.add({"ai.ignis", "DynamicQuantizeRows", 1, 1, infer_dynamic_quantize_rows});
  // QLinearMatMul-21 adds float8 types and float16/bfloat16 scales.
  r.add({"", "QLinearMatMul", 10, 21, infer_qlinear_matmul});
  r.add({"", "QLinearConv", 10, 10, infer_qlinear_conv});
  // Versions 24-28 add element types ignis does not load (float8e8m0, int2, float6).
  r.add({"", "QuantizeLinear", 10, 28, infer_quantize_linear});
  r.add({"", "DequantizeLinear", 10, 28, infer_dequantize_linear});
  r.add({"", "DynamicQuantizeLinear", 11, 21, infer_dynamic_quantize_linear});
}

}  // namespace ignis::ir
