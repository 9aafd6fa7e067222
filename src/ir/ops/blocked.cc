// SPDX-License-Identifier: Apache-2.0
// Schemas of the ai.ignis channel layout ops (docs/ops_ai_ignis.md): the blocked channel layout
// (BlockChannels, UnblockChannels, BlockedConv, BlockedMaxPool and BlockedGlobalAveragePool,
// float32 only) and QLinearConvNhwc (QLinearConv on channels-last tensors). Each checks its
// layout's shapes here and leaves every FusedConv / MaxPool / QLinearConv rule to that op's own
// inference.
#include <span>
#include <string>
#include <vector>

#include "ir/ops/nn_internal.h"

namespace ignis::ir {

namespace {

using nn_ops::checked_shape;
using nn_ops::expect_input;

constexpr std::string_view kDomain = "ai.ignis";
constexpr DTypeSet kF32{DType::F32};

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

Status expect_f32_if_present(const InferContext& ctx, int i, std::string_view name) {
  if (!ctx.has_input(i)) return Status::ok();
  return expect_input(ctx, i, name, kF32);
}

// An int attribute that must be >= 1 when present; `def` when absent.
Result<int64_t> read_positive_int(const InferContext& ctx, const char* name, int64_t def) {
  const Attribute* a = ctx.attrs().find(name);
  if (a == nullptr) return def;
  if (a->kind != Attribute::Kind::Int)
    return ctx.fail("attribute '", name, "' must be an int, got ", attribute_kind_name(a->kind));
  if (a->i < 1) return ctx.fail("attribute '", name, "' must be >= 1, got ", a->i);
  return a->i;
}

// ---- BlockChannels: [N, C, d...] -> [N, ceil(C / block), d..., block] ------------------------

Status infer_block_channels(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  IGNIS_ASSIGN_OR_RETURN(const int64_t block, read_positive_int(ctx, "block", 16));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < 3) return ctx.fail("input 0 ('X') must have rank >= 3 [N, C, d1, ...], got ", x.str());
  std::vector<int64_t> out = {x[0], ceil_div(x[1], block)};
  for (int i = 2; i < x.rank(); ++i) out.push_back(x[i]);
  out.push_back(block);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- UnblockChannels: [N, CB, d..., block] -> [N, channels, d...] ----------------------------

// The `channels` and `block` attributes of an op reading blocked X [N, CB, ..., block], checked
// against X's block count and last axis; X has rank >= min_rank.
struct BlockedChannels {
  int64_t channels = 0, block = 0;
};

Result<BlockedChannels> read_blocked_channels(const InferContext& ctx, int min_rank) {
  if (ctx.attrs().find("channels") == nullptr) return ctx.fail("int attribute 'channels' is required");
  BlockedChannels b;
  IGNIS_ASSIGN_OR_RETURN(b.channels, read_positive_int(ctx, "channels", 1));
  IGNIS_ASSIGN_OR_RETURN(b.block, read_positive_int(ctx, "block", 16));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() < min_rank)
    return ctx.fail("input 0 ('X') must have rank >= ", min_rank, " [N, CB, d1, ..., block], got ", x.str());
  if (x.back() != b.block)
    return ctx.fail("input 0 ('X') ", x.str(), ": last dim ", x.back(), " must equal block ", b.block);
  if (x[1] != ceil_div(b.channels, b.block))
    return ctx.fail("input 0 ('X') ", x.str(), ": channel blocks ", x[1], " must equal ceil(channels ", b.channels,
                    " / block ", b.block, ") = ", ceil_div(b.channels, b.block));
  return b;
}

Status infer_unblock_channels(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  IGNIS_ASSIGN_OR_RETURN(const BlockedChannels b, read_blocked_channels(ctx, 4));
  const Shape& x = ctx.input_shape(0);
  std::vector<int64_t> out = {x[0], b.channels};
  for (int i = 2; i + 1 < x.rank(); ++i) out.push_back(x[i]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- BlockedConv: BlockChannels(FusedConv(UnblockChannels(X), W, B, UnblockChannels(Z))) -----

// `op`'s own inference (domain and opset as given) on `inputs`, input 0 being X in op's layout
// (`what` names it: "the unblocked X"): its attribute and shape checks. Its messages come back
// under this node's label, marked as being about that X ("as OP on the unblocked X [...]: ...").
Result<Shape> infer_as_unblocked(const InferContext& ctx, std::string_view domain, std::string_view op, int opset,
                                 std::span<const ValueType* const> inputs, std::string_view what = "the unblocked X") {
  const OpSchema* schema = OpSchemaRegistry::global().find(domain, op, opset);
  if (schema == nullptr) return internal_error(str_cat("the ", op, " schema is not registered"));
  std::vector<const Tensor*> values(inputs.size(), nullptr);
  InferContext inner("", op, opset, ctx.attrs(), inputs, values, 1);
  const Status s = schema->infer(inner);
  if (!s.is_ok()) {
    const std::string prefix = str_cat("node '' (", op, ", opset ", opset, "): ");
    std::string message = s.message();
    if (message.starts_with(prefix)) message.erase(0, prefix.size());
    return nn_ops::relabel(ctx, Status(s.code(), str_cat("as ", op, " on ", what, " ", inputs[0]->shape.str(),
                                                         ": ", message)));
  }
  return inner.outputs()[0].shape;
}

// FusedConv's inference on the unblocked X (and W, B; Z is checked against the blocked output
// here): its attribute, group, bias and window checks.
Result<Shape> infer_unblocked_fused_conv(const InferContext& ctx, const Shape& x_unblocked) {
  const ValueType x{DType::F32, x_unblocked};
  const ValueType* inputs[3] = {&x, &ctx.input(1), ctx.has_input(2) ? &ctx.input(2) : nullptr};
  return infer_as_unblocked(ctx, kDomain, "FusedConv", 1, inputs);
}

Status infer_blocked_conv(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 5));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "W", kF32));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 2, "B"));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 3, "Z"));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 4, "S"));
  IGNIS_ASSIGN_OR_RETURN(const int64_t block, read_positive_int(ctx, "block", 16));
  IGNIS_ASSIGN_OR_RETURN(const int64_t group, read_positive_int(ctx, "group", 1));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  const Attribute* plain_attr = ctx.attrs().find("plain_input");
  if (plain_attr != nullptr && (plain_attr->kind != Attribute::Kind::Int || (plain_attr->i != 0 && plain_attr->i != 1)))
    return ctx.fail("attribute 'plain_input' must be the int 0 or 1");
  const bool plain = plain_attr != nullptr && plain_attr->i == 1;
  if (w.rank() != 4) return ctx.fail("input 1 ('W') must be 4-D [M, C / group, kh, kw], got ", w.str());
  const int64_t c = w[1] * group;
  if (plain) {
    if (x.rank() != 4) return ctx.fail("input 0 ('X') must be 4-D [N, C, H, W] (plain_input = 1), got ", x.str());
    if (x[1] != c)
      return ctx.fail("input 0 ('X') ", x.str(), ": channels ", x[1], " must equal C = W's ", w[1],
                      " per group times group ", group);
    if (ctx.has_input(4)) return ctx.fail("input 4 ('S') needs a blocked X (plain_input = 0)");
  } else {
    if (x.rank() != 5) return ctx.fail("input 0 ('X') must be 5-D [N, CB, H, W, block], got ", x.str());
    if (x[4] != block) return ctx.fail("input 0 ('X') ", x.str(), ": last dim ", x[4], " must equal block ", block);
    if (x[1] != ceil_div(c, block))
      return ctx.fail("input 0 ('X') ", x.str(), ": channel blocks ", x[1], " must equal ceil(C / block) = ceil(",
                      c, " / ", block, ") = ", ceil_div(c, block), ", C = W's ", w[1], " per group times group ",
                      group);
  }
  if (ctx.has_input(4) && !(ctx.input_shape(4) == Shape{x[0], c, 1, 1}))
    return ctx.fail("input 4 ('S') must have shape [N, C, 1, 1] = [", x[0], ", ", c, ", 1, 1], got ",
                    ctx.input_shape(4).str());
  IGNIS_ASSIGN_OR_RETURN(const Shape conv, infer_unblocked_fused_conv(ctx, Shape{x[0], c, x[2], x[3]}));
  const int64_t out[] = {conv[0], ceil_div(conv[1], block), conv[2], conv[3], block};
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  if (ctx.has_input(3) && !(ctx.input_shape(3) == y))
    return ctx.fail("input 3 ('Z') must have the blocked output shape ", y.str(), ", got ",
                    ctx.input_shape(3).str());
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- BlockedMaxPool: BlockChannels(MaxPool-12(UnblockChannels(X))), 2-D, Y only -------------

// The opset of ai.onnx MaxPool whose attributes and output extents BlockedMaxPool takes.
constexpr int kBlockedMaxPoolOnnxOpset = 12;

Status infer_blocked_max_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  if (ctx.num_outputs() != 1) return ctx.fail("has one output (Y), got ", ctx.num_outputs());
  IGNIS_ASSIGN_OR_RETURN(const int64_t block, read_positive_int(ctx, "block", 16));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() != 5) return ctx.fail("input 0 ('X') must be 5-D [N, CB, H, W, block], got ", x.str());
  if (x[4] != block) return ctx.fail("input 0 ('X') ", x.str(), ": last dim ", x[4], " must equal block ", block);
  const ValueType xu{DType::F32, Shape{x[0], x[1] * block, x[2], x[3]}};
  const ValueType* inputs[1] = {&xu};
  IGNIS_ASSIGN_OR_RETURN(const Shape yu, infer_as_unblocked(ctx, "", "MaxPool", kBlockedMaxPoolOnnxOpset, inputs));
  const int64_t out[] = {x[0], x[1], yu[2], yu[3], block};
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- BlockedGlobalAveragePool: GlobalAveragePool(UnblockChannels(X)) ------------------------

Status infer_blocked_global_average_pool(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  const Shape& x = ctx.input_shape(0);
  if (x.rank() != 5) return ctx.fail("input 0 ('X') must be 5-D [N, CB, H, W, block], got ", x.str());
  IGNIS_ASSIGN_OR_RETURN(const BlockedChannels b, read_blocked_channels(ctx, 5));
  const int64_t out[] = {x[0], b.channels, 1, 1};
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- QLinearConvNhwc: Transpose(QLinearConv(Transpose(X, NCHW)), NHWC), 2-D --------------

// The opset of ai.onnx QLinearConv whose inputs and attributes QLinearConvNhwc takes.
constexpr int kQLinearConvOpset = 10;

Status infer_qlinear_conv_nhwc(InferContext& ctx) {
  if (ctx.num_inputs() < 1 || !ctx.has_input(0)) return ctx.fail("input 0 ('X') is required");
  const Shape& x = ctx.input_shape(0);
  if (x.rank() != 4) return ctx.fail("input 0 ('X') must be 4-D [N, H, W, C], got ", x.str());
  const ValueType xn{ctx.input(0).dtype, Shape{x[0], x[3], x[1], x[2]}};
  std::vector<const ValueType*> inputs(static_cast<size_t>(ctx.num_inputs()), nullptr);
  inputs[0] = &xn;
  for (int i = 1; i < ctx.num_inputs(); ++i)
    if (ctx.has_input(i)) inputs[static_cast<size_t>(i)] = &ctx.input(i);
  IGNIS_ASSIGN_OR_RETURN(const Shape yn, infer_as_unblocked(ctx, "", "QLinearConv", kQLinearConvOpset, inputs,
                                                            "X as NCHW"));
  const DType y_type = ctx.input(7).dtype;  // QLinearConv's own inference has checked it
  const int64_t out[] = {yn[0], yn[2], yn[3], yn[1]};
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, y_type, "output"));
  ctx.set_output(0, y_type, y);
  return Status::ok();
}

}  // namespace

void register_blocked_schemas(OpSchemaRegistry& r) {
  r.add({kDomain, "QLinearConvNhwc", 1, 1, infer_qlinear_conv_nhwc});
  r.add({kDomain, "BlockChannels", 1, 1, infer_block_channels});
  r.add({kDomain, "UnblockChannels", 1, 1, infer_unblock_channels});
  r.add({kDomain, "BlockedConv", 1, 1, infer_blocked_conv});
  r.add({kDomain, "BlockedMaxPool", 1, 1, infer_blocked_max_pool});
  r.add({kDomain, "BlockedGlobalAveragePool", 1, 1, infer_blocked_global_average_pool});
}

}  // namespace ignis::ir
