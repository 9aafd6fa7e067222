// SPDX-License-Identifier: Apache-2.0
// Schemas for the sequence and optional ops: SequenceEmpty/Construct/Insert/At/Erase/Length,
// SplitToSequence, ConcatFromSequence, SequenceMap, Optional, OptionalHasElement and
// OptionalGetElement. A sequence or optional is one rank-0 value of dtype Sequence/Optional
// (ignis/tensor.h). What it holds is known only from its value, so ops that take a tensor out
// of one infer from the value (always present when they run, as plans holding containers are
// dynamic) and answer ValueRequired before that.
#include <string>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "ir/graph.h"
#include "ir/op_schema.h"

namespace ignis::ir {
namespace {

// What a sequence may hold: any tensor, strings included.
constexpr DTypeSet kElements = DTypeSet::storable() | DTypeSet{DType::String};

Status expect_sequence(const InferContext& ctx, int i) {
  if (ctx.input_dtype(i) != DType::Sequence)
    return ctx.fail("input ", i, " must be a sequence, got ", dtype_name(ctx.input_dtype(i)));
  return Status::ok();
}

Status expect_element(const InferContext& ctx, int i) {
  if (!kElements.contains(ctx.input_dtype(i)))
    return ctx.fail("input ", i, " must be a tensor, got ", dtype_name(ctx.input_dtype(i)));
  return Status::ok();
}

// An optional position input: one integer.
Status expect_position(const InferContext& ctx, int i) {
  if (!ctx.has_input(i)) return Status::ok();
  if (!DTypeSet{DType::I32, DType::I64}.contains(ctx.input_dtype(i)) || ctx.input_shape(i).numel() != 1)
    return ctx.fail("position must be one int32 or int64, got ", dtype_name(ctx.input_dtype(i)), " ",
                    ctx.input_shape(i).str());
  return Status::ok();
}

Status container_output(InferContext& ctx, DType kind) {
  ctx.set_output(0, kind, Shape{});
  return Status::ok();
}

Status value_required(const InferContext& ctx, const char* what) {
  return Status(StatusCode::ValueRequired, str_cat("node (", ctx.op_type(), "): ", what, " are known only at run time"));
}

// Resolves a position in [-n, n) (or [-n, n] when `end_ok`, as SequenceInsert allows).
Result<int64_t> sequence_position(const InferContext& ctx, const Tensor& pos, int64_t n, bool end_ok) {
  const int64_t p = load_as_int64(pos.dtype(), pos.data(), 0);
  const int64_t r = p < 0 ? p + n : p;
  if (r < 0 || r > n || (r == n && !end_ok))
    return ctx.fail("position ", p, " is out of range for a sequence of ", n, " tensors");
  return r;
}

Status infer_sequence_empty(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(0, 0));
  const auto dt = dtype_from_onnx(static_cast<int32_t>(ctx.attrs().get_int("dtype", 1)));
  if (!dt || !kElements.contains(*dt)) return ctx.fail("attribute 'dtype' ", ctx.attrs().get_int("dtype", 1), " is not a tensor type");
  return container_output(ctx, DType::Sequence);
}

Status infer_sequence_construct(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1 << 20));
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) return ctx.fail("input ", i, " is required");
    IGNIS_RETURN_IF_ERROR(expect_element(ctx, i));
    if (ctx.input_dtype(i) != ctx.input_dtype(0))
      return ctx.fail("all inputs must have one dtype; input ", i, " is ", dtype_name(ctx.input_dtype(i)),
                      ", input 0 ", dtype_name(ctx.input_dtype(0)));
  }
  return container_output(ctx, DType::Sequence);
}

Status infer_sequence_insert(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(expect_sequence(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_element(ctx, 1));
  IGNIS_RETURN_IF_ERROR(expect_position(ctx, 2));
  if (const Tensor* seq = ctx.input_value(0)) {
    const auto& s = seq->as_sequence();
    if (s.element != DType::Undefined && s.element != ctx.input_dtype(1))
      return ctx.fail("cannot insert a ", dtype_name(ctx.input_dtype(1)), " tensor into a sequence of ",
                      dtype_name(s.element));
    if (const Tensor* pos = ctx.input_value(2))
      IGNIS_RETURN_IF_ERROR(sequence_position(ctx, *pos, static_cast<int64_t>(s.items.size()), true).status());
  }
  return container_output(ctx, DType::Sequence);
}

Status infer_sequence_erase(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 2));
  IGNIS_RETURN_IF_ERROR(expect_sequence(ctx, 0));
  IGNIS_RETURN_IF_ERROR(expect_position(ctx, 1));
  if (const Tensor* seq = ctx.input_value(0)) {
    const int64_t n = static_cast<int64_t>(seq->as_sequence().items.size());
    if (n == 0) return ctx.error("cannot erase from an empty sequence");
    if (const Tensor* pos = ctx.input_value(1)) IGNIS_RETURN_IF_ERROR(sequence_position(ctx, *pos, n, false).status());
  }
  return container_output(ctx, DType::Sequence);
}

Status infer_sequence_length(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_sequence(ctx, 0));
  ctx.set_output(0, DType::I64, Shape{});
  return Status::ok();
}

Status infer_sequence_at(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_sequence(ctx, 0));
  if (!ctx.has_input(1)) return ctx.error("input 1 (position) is required");
  IGNIS_RETURN_IF_ERROR(expect_position(ctx, 1));
  const Tensor* seq = ctx.input_value(0);
  const Tensor* pos = ctx.input_value(1);
  if (!seq || !pos) return value_required(ctx, "the sequence's tensors");
  const auto& items = seq->as_sequence().items;
  IGNIS_ASSIGN_OR_RETURN(int64_t i, sequence_position(ctx, *pos, static_cast<int64_t>(items.size()), false));
  const Tensor& t = items[static_cast<size_t>(i)];
  ctx.set_output(0, t.dtype(), t.shape());
  return Status::ok();
}

// SplitToSequence(input, split?) along `axis`: equal parts of `split` (scalar) or the lengths
// in `split` (1-D); without it, parts of 1, squeezed unless keepdims.
Status infer_split_to_sequence(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 2));
  IGNIS_RETURN_IF_ERROR(ctx.expect_dtype(0, DTypeSet::storable()));
  const Shape& x = ctx.input_shape(0);
  const int64_t axis = ctx.attrs().get_int("axis", 0);
  if (axis < -x.rank() || axis >= x.rank()) return ctx.fail("attribute 'axis' ", axis, " is out of range for ", x.str());
  if (ctx.has_input(1)) {
    if (!DTypeSet{DType::I32, DType::I64}.contains(ctx.input_dtype(1)) || ctx.input_shape(1).rank() > 1)
      return ctx.fail("split must be an int32 or int64 scalar or 1-D tensor, got ", dtype_name(ctx.input_dtype(1)),
                      " ", ctx.input_shape(1).str());
    if (const Tensor* split = ctx.input_value(1)) {
      const int64_t len = x[static_cast<int>(axis < 0 ? axis + x.rank() : axis)];
      int64_t sum = 0;
      for (int64_t i = 0; i < split->numel(); ++i) {
        const int64_t s = load_as_int64(split->dtype(), split->data(), i);
        if (s < 0 || (split->rank() == 0 && s == 0 && len > 0)) return ctx.fail("split entry ", s, " is not a valid length");
        sum += s;
      }
      if (split->rank() == 1 && sum != len) return ctx.fail("split lengths sum to ", sum, ", the axis has ", len);
    }
  }
  return container_output(ctx, DType::Sequence);
}

// ConcatFromSequence: the items joined along `axis`, or stacked on a new axis.
Status infer_concat_from_sequence(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_sequence(ctx, 0));
  if (!ctx.attrs().has("axis")) return ctx.error("attribute 'axis' is required");
  const Tensor* seq = ctx.input_value(0);
  if (!seq) return value_required(ctx, "the sequence's tensors");
  const auto& items = seq->as_sequence().items;
  if (items.empty()) return ctx.error("cannot concatenate an empty sequence");
  if (!dtype_is_plain(items[0].dtype()))
    return ctx.unsupported(str_cat("concatenating ", dtype_name(items[0].dtype()), " tensors is not supported"));
  const bool new_axis = ctx.attrs().get_int("new_axis", 0) != 0;
  const Shape& first = items[0].shape();
  const int out_rank = first.rank() + (new_axis ? 1 : 0);
  int64_t axis = ctx.attrs().get_int("axis");
  if (axis < -out_rank || axis >= out_rank || (!new_axis && first.rank() == 0))
    return ctx.fail("attribute 'axis' ", axis, " is out of range for items ", first.str(), new_axis ? " stacked" : "");
  if (axis < 0) axis += out_rank;
  int64_t total = 0;
  for (size_t k = 0; k < items.size(); ++k) {
    const Shape& s = items[k].shape();
    bool same = s.rank() == first.rank() && items[k].dtype() == items[0].dtype();
    for (int d = 0; same && d < s.rank(); ++d) same = s[d] == first[d] || (!new_axis && d == axis);
    if (!same)
      return ctx.fail("item ", k, " (", items[k].type_string(), ") does not match item 0 (", items[0].type_string(), ")");
    total += new_axis ? 1 : s[static_cast<int>(axis)];
  }
  Shape out;
  for (int d = 0, src = 0; d < out_rank; ++d) {
    if (d == axis) {
      out.push_back(total);
      if (!new_axis) ++src;
    } else {
      out.push_back(first[src++]);
    }
  }
  ctx.set_output(0, items[0].dtype(), out);
  return Status::ok();
}

// SequenceMap(input_sequence, additional_inputs...) runs its body once per item; the body's
// outputs gather into sequences. The kernel (src/runtime/control_flow.cc) makes them.
Status infer_sequence_map(InferContext& ctx) {
  const Graph* body = ctx.attrs().get_graph("body");
  if (body == nullptr) return ctx.error("graph attribute 'body' is required");
  const int declared = ctx.num_inputs() - static_cast<int>(outer_scope_names(ctx.attrs()).size());
  if (declared < 1 || !ctx.has_input(0)) return ctx.error("input 0 (input_sequence) is required");
  IGNIS_RETURN_IF_ERROR(expect_sequence(ctx, 0));
  if (static_cast<int>(body->inputs.size()) != declared)
    return ctx.fail("body has ", body->inputs.size(), " inputs; the node gives ", declared);
  if (static_cast<int>(body->outputs.size()) != ctx.num_outputs())
    return ctx.fail("body has ", body->outputs.size(), " outputs; the node has ", ctx.num_outputs());
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.set_output(o, DType::Sequence, Shape{});
  return Status::ok();
}

Status infer_optional(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(0, 1));
  if (!ctx.has_input(0) && !ctx.attrs().has("type"))
    return ctx.error("an Optional without input needs attribute 'type'");
  if (ctx.has_input(0) && ctx.input_dtype(0) != DType::Sequence) IGNIS_RETURN_IF_ERROR(expect_element(ctx, 0));
  return container_output(ctx, DType::Optional);
}

Status infer_optional_has_element(InferContext& ctx) {
  // Before opset 18 the input is an optional; a tensor or sequence arrives there too when a
  // Loop carries an optional whose body returns the plain value, and counts as present.
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(ctx.opset() < 18 ? 1 : 0, 1));
  ctx.set_output(0, DType::Bool, Shape{});
  return Status::ok();
}

Status infer_optional_get_element(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  const DType kind = ctx.input_dtype(0);
  if (kind != DType::Optional) {  // see OptionalHasElement for a plain value before opset 18
    ctx.set_output(0, kind, ctx.input_shape(0));  // a tensor or sequence passes through
    return Status::ok();
  }
  const Tensor* opt = ctx.input_value(0);
  if (!opt) return value_required(ctx, "the optional's contents");
  if (!opt->as_optional().has_value()) return ctx.error("the optional is empty");
  const Tensor& v = opt->as_optional().value;
  ctx.set_output(0, v.dtype(), v.shape());
  return Status::ok();
}

}  // namespace

void register_sequence_schemas(OpSchemaRegistry& r) {
  r.add({"", "SequenceEmpty", 11, 11, infer_sequence_empty});
  r.add({"", "SequenceConstruct", 11, 11, infer_sequence_construct});
  r.add({"", "SequenceInsert", 11, 11, infer_sequence_insert});
  r.add({"", "SequenceAt", 11, 11, infer_sequence_at});
  r.add({"", "SequenceErase", 11, 11, infer_sequence_erase});
  r.add({"", "SequenceLength", 11, 11, infer_sequence_length});
  // SplitToSequence-24 and the Optional ops at 28 only add element types.
  r.add({"", "SplitToSequence", 11, 24, infer_split_to_sequence});
  r.add({"", "ConcatFromSequence", 11, 11, infer_concat_from_sequence});
  r.add({"", "SequenceMap", 17, 17, infer_sequence_map, true});
  r.add({"", "Optional", 15, 28, infer_optional});
  r.add({"", "OptionalHasElement", 15, 28, infer_optional_has_element});
  r.add({"", "OptionalGetElement", 15, 28, infer_optional_get_element});
}

}  // namespace ignis::ir
