// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the reduction family: Reduce*, ArgMax/ArgMin, the softmax
// family (Softmax, LogSoftmax, Hardmax) and the losses built on it (SoftmaxCrossEntropyLoss,
// NegativeLogLikelihoodLoss).
#include <string>
#include <string_view>
#include <vector>

#include "core/broadcast.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

// Checks that attribute `name`, when present, has one of the expected kinds.
Status expect_attr_kind(const InferContext& ctx, std::string_view name, Attribute::Kind kind,
                        Attribute::Kind alt = Attribute::Kind::Other) {
  const Attribute* a = ctx.attrs().find(name);
  if (a == nullptr || a->kind == kind || (alt != Attribute::Kind::Other && a->kind == alt)) return Status::ok();
  return ctx.fail("attribute '", name, "' must be of kind ", attribute_kind_name(kind), ", got ",
                  attribute_kind_name(a->kind));
}

Status expect_bool_attr(const InferContext& ctx, std::string_view name) {
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(ctx, name, Attribute::Kind::Int));
  const int64_t v = ctx.attrs().get_int(name, 0);
  if (v != 0 && v != 1) return ctx.fail("attribute '", name, "' must be 0 or 1, got ", v);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Reduce*

// Opset from which the op takes `axes` as its second input instead of an attribute.
int reduce_axes_input_since(std::string_view op) { return op == "ReduceSum" ? 13 : 18; }

Status infer_reduce(InferContext& ctx) {
  const int since = reduce_axes_input_since(ctx.op_type());
  const bool axes_is_input = ctx.opset() >= since;
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, axes_is_input ? 2 : 1));
  const bool allows_bool = ctx.op_type() == "ReduceMax" || ctx.op_type() == "ReduceMin";
  IGNIS_RETURN_IF_ERROR(
      ctx.expect_dtype(0, allows_bool ? DTypeSet::numeric() | DTypeSet{DType::Bool} : DTypeSet::numeric()));
  IGNIS_RETURN_IF_ERROR(expect_bool_attr(ctx, "keepdims"));
  IGNIS_RETURN_IF_ERROR(expect_bool_attr(ctx, "noop_with_empty_axes"));

  std::vector<int64_t> axes;
  bool noop = false;
  if (axes_is_input) {
    if (ctx.attrs().has("axes"))
      return ctx.fail("'axes' is an input from opset ", since, ", not an attribute");
    if (ctx.has_input(1)) {
      if (ctx.input_dtype(1) != DType::I64 && ctx.input_dtype(1) != DType::I32)
        return ctx.fail("input 'axes' must be int64, got ", dtype_name(ctx.input_dtype(1)));
      if (ctx.input_shape(1).rank() > 1)
        return ctx.fail("input 'axes' must be 1-D, got ", ctx.input_shape(1).str());
      IGNIS_ASSIGN_OR_RETURN(axes, ctx.input_ints(1));
    }
    noop = ctx.attrs().get_int("noop_with_empty_axes", 0) != 0;
  } else {
    IGNIS_RETURN_IF_ERROR(expect_attr_kind(ctx, "axes", Attribute::Kind::Ints, Attribute::Kind::Int));
    axes = ctx.attrs().get_ints("axes");
  }

  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  if (axes.empty() && noop) {
    ctx.set_output(0, ctx.input_dtype(0), in);
    return Status::ok();
  }
  bool reduced[Shape::kMaxRank] = {};
  for (int64_t a : axes) {
    auto axis = normalize_axis(a, rank);
    if (!axis) return ctx.fail("axis ", a, " is out of range for input of rank ", rank);
    if (reduced[*axis]) return ctx.fail("axis ", a, " appears more than once in axes ", str_list(axes));
    reduced[*axis] = true;
  }
  if (axes.empty())
    for (int d = 0; d < rank; ++d) reduced[d] = true;

  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  Shape out;
  for (int d = 0; d < rank; ++d) {
    if (!reduced[d]) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  ctx.set_output(0, ctx.input_dtype(0), out);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// ArgMax, ArgMin

Status infer_arg_reduce(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet::numeric()));
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(ctx, "axis", Attribute::Kind::Int));
  IGNIS_RETURN_IF_ERROR(expect_bool_attr(ctx, "keepdims"));
  IGNIS_RETURN_IF_ERROR(expect_bool_attr(ctx, "select_last_index"));
  const Shape& in = ctx.input_shape(0);
  if (in.rank() == 0) return ctx.error("input must have rank >= 1, got a scalar");
  const int64_t a = ctx.attrs().get_int("axis", 0);
  auto axis = normalize_axis(a, in.rank());
  if (!axis) return ctx.fail("axis ", a, " is out of range for input of rank ", in.rank());
  const bool keepdims = ctx.attrs().get_int("keepdims", 1) != 0;
  Shape out;
  for (int d = 0; d < in.rank(); ++d) {
    if (d != *axis) out.push_back(in[d]);
    else if (keepdims) out.push_back(1);
  }
  if (in[*axis] == 0 && out.numel() != 0)
    return ctx.fail("cannot take ", ctx.op_type(), " along axis ", a, " of extent 0 (input ", in.str(), ")");
  ctx.set_output(0, DType::I64, out);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Softmax, LogSoftmax, Hardmax. Before opset 13 the input is coerced to 2-D at `axis`
// (default 1) and the op works on each row; from 13 it works along the single axis (default -1).

Status infer_softmax_like(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet::floats()));
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(ctx, "axis", Attribute::Kind::Int));
  const Shape& in = ctx.input_shape(0);
  const int rank = in.rank();
  if (rank == 0) return ctx.error("input must have rank >= 1, got a scalar");
  const bool coerce_2d = ctx.opset() < 13;
  const int64_t axis = ctx.attrs().get_int("axis", coerce_2d ? 1 : -1);
  // The 2-D coercion splits the dims before `axis` from the rest, so axis == rank is a split too.
  const int64_t hi = coerce_2d ? rank : rank - 1;
  if (axis < -rank || axis > hi)
    return ctx.fail("axis ", axis, " is out of range [", -rank, ", ", hi, "] for input ", in.str());
  ctx.set_output(0, ctx.input_dtype(0), in);
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// SoftmaxCrossEntropyLoss, NegativeLogLikelihoodLoss

// Validates scores/input (N, C, d1..dk), labels/target (N, d1..dk), optional weights (C) and
// the reduction; sets output 0 (the loss).
Status infer_loss_common(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet::floats()));
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(ctx, "reduction", Attribute::Kind::String));
  IGNIS_RETURN_IF_ERROR(expect_attr_kind(ctx, "ignore_index", Attribute::Kind::Int));
  const DType t = ctx.input_dtype(0);
  const DType tind = ctx.input_dtype(1);
  if (tind != DType::I32 && tind != DType::I64)
    return ctx.fail("input 1 (labels) must be int32 or int64, got ", dtype_name(tind));
  const Shape& scores = ctx.input_shape(0);
  const Shape& labels = ctx.input_shape(1);
  if (scores.rank() < 2) return ctx.fail("input 0 must have shape (N, C, d1..dk), got ", scores.str());
  Shape expected;
  for (int d = 0; d < scores.rank(); ++d)
    if (d != 1) expected.push_back(scores[d]);
  if (!(labels == expected))
    return ctx.fail("input 1 (labels) must have shape ", expected.str(), " to match input 0 ", scores.str(),
                    ", got ", labels.str());
  if (ctx.has_input(2)) {
    if (ctx.input_dtype(2) != t)
      return ctx.fail("input 2 (weights) must have dtype ", dtype_name(t), ", got ", dtype_name(ctx.input_dtype(2)));
    if (!(ctx.input_shape(2) == Shape{scores[1]}))
      return ctx.fail("input 2 (weights) must have shape [", scores[1], "], got ", ctx.input_shape(2).str());
  }
  const std::string reduction = ctx.attrs().get_string("reduction", "mean");
  if (reduction == "none") ctx.set_output(0, t, labels);
  else if (reduction == "sum" || reduction == "mean") ctx.set_output(0, t, Shape{});
  else return ctx.fail("attribute 'reduction' must be 'none', 'sum' or 'mean', got '", reduction, "'");
  return Status::ok();
}

Status infer_softmax_cross_entropy_loss(InferContext& ctx) {
  if (ctx.num_outputs() > 2) return ctx.fail("expected 1 or 2 outputs, got ", ctx.num_outputs());
  IGNIS_RETURN_IF_ERROR(infer_loss_common(ctx));
  ctx.set_output(1, ctx.input_dtype(0), ctx.input_shape(0));
  return Status::ok();
}

Status infer_negative_log_likelihood_loss(InferContext& ctx) {
  if (ctx.num_outputs() > 1) return ctx.fail("expected 1 output, got ", ctx.num_outputs());
  return infer_loss_common(ctx);
}

}  // namespace

void register_reduce_schemas(OpSchemaRegistry& r) {
  for (std::string_view op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
                              "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    r.add({"", op, 1, 28, infer_reduce});  // LogSum/LogSumExp-28 drop the integer types
  r.add({"", "ArgMax", 1, 21, infer_arg_reduce});
  r.add({"", "ArgMin", 1, 21, infer_arg_reduce});
  r.add({"", "Softmax", 1, 21, infer_softmax_like});
  r.add({"", "LogSoftmax", 1, 21, infer_softmax_like});
  r.add({"", "Hardmax", 1, 21, infer_softmax_like});
  r.add({"", "SoftmaxCrossEntropyLoss", 12, 21, infer_softmax_cross_entropy_loss});
  r.add({"", "NegativeLogLikelihoodLoss", 12, 22, infer_negative_log_likelihood_loss});
}

}  // namespace ignis::ir
