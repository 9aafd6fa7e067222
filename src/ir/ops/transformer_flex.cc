// SPDX-License-Identifier: Apache-2.0
// Schema for ai.onnx.preview FlexAttention: attention over 4-D Q, K, V whose scores and
// probabilities may pass through user subgraphs (score_mod, prob_mod). The output shape is
// known without running them; the kernel (src/runtime/flex_attention.cc) runs the subgraphs.
//
// As for If and Loop, the node's inputs are Q, K, V followed by the outer-scope values its
// subgraphs read (ir::outer_scope_names).
#include <cstdint>
#include <string_view>
#include <vector>

#include "ir/graph.h"
#include "ir/ops/nn_internal.h"
#include "ir/ops/transformer_internal.h"

namespace ignis::ir::transformer_ops {

namespace {

using nn_ops::checked_shape;
using nn_ops::expect_input;
using nn_ops::expect_same_dtype;

// The element type of the scores and probabilities, which the subgraphs see: softmax_precision
// when set, else float32 for 16-bit and 32-bit inputs and double for double inputs.
DType flex_score_dtype(const InferContext& ctx) {
  if (ctx.attrs().has("softmax_precision"))
    return dtype_from_onnx(static_cast<int32_t>(ctx.attrs().get_int("softmax_precision", 1))).value_or(DType::F32);
  return ctx.input_dtype(0) == DType::F64 ? DType::F64 : DType::F32;
}

// A modifier subgraph, when given, maps one tensor to one tensor of the score dtype.
Status check_modifier(const InferContext& ctx, std::string_view name, DType score) {
  const Attribute* a = ctx.attrs().find(name);
  if (a == nullptr) return Status::ok();
  if (a->kind != Attribute::Kind::Graph || !a->graph) return ctx.fail("attribute '", name, "' must be a graph");
  const Graph& g = *a->graph;
  if (g.inputs.size() != 1 || g.outputs.size() != 1)
    return ctx.fail("subgraph '", name, "' must have exactly 1 input and 1 output, got ", g.inputs.size(), " and ",
                    g.outputs.size());
  for (const ValueInfo* v : {&g.inputs[0], &g.outputs[0]}) {
    if (v->dtype != DType::Undefined && v->dtype != score)
      return ctx.fail("subgraph '", name, "' declares '", v->name, "' as ", dtype_name(v->dtype),
                      "; the scores are ", dtype_name(score), " (softmax_precision)");
    if (v->has_shape && v->dims.size() != 4)
      return ctx.fail("subgraph '", name, "' declares '", v->name, "' with rank ", v->dims.size(),
                      "; the scores are 4-D [batch, q_heads, q_len, kv_len]");
  }
  return Status::ok();
}

Status infer_flex_attention(InferContext& ctx) {
  const int declared = ctx.num_inputs() - static_cast<int>(outer_scope_names(ctx.attrs()).size());
  if (declared != 3) return ctx.fail("expected 3 inputs (Q, K, V), got ", declared);
  if (ctx.num_outputs() != 1) return ctx.fail("expected 1 output, got ", ctx.num_outputs());
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "Q", DTypeSet::floats()));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "K", DTypeSet::floats()));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "V", DTypeSet::floats()));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "K", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "V", 0));
  IGNIS_RETURN_IF_ERROR(check_softmax_precision(ctx));
  const DType score = flex_score_dtype(ctx);
  IGNIS_RETURN_IF_ERROR(check_modifier(ctx, "score_mod", score));
  IGNIS_RETURN_IF_ERROR(check_modifier(ctx, "prob_mod", score));
  if (const Attribute* s = ctx.attrs().find("scale"); s != nullptr && s->kind != Attribute::Kind::Float)
    return ctx.fail("attribute 'scale' must be a float");

  const Shape &q = ctx.input_shape(0), &k = ctx.input_shape(1), &v = ctx.input_shape(2);
  if (q.rank() != 4 || k.rank() != 4 || v.rank() != 4)
    return ctx.fail("Q, K and V must be 4-D [batch, heads, seq, head_size], got ", q.str(), ", ", k.str(), ", ",
                    v.str());
  if (k[0] != q[0] || v[0] != q[0])
    return ctx.fail("Q, K and V must have the same batch size, got ", q.str(), ", ", k.str(), ", ", v.str());
  if (k[3] != q[3]) return ctx.fail("Q ", q.str(), " and K ", k.str(), " must have the same head size");
  if (v[1] != k[1] || v[2] != k[2])
    return ctx.fail("K ", k.str(), " and V ", v.str(), " must have the same heads and sequence length");
  if (k[1] < 1 || q[1] % k[1] != 0)
    return ctx.fail("the query head count ", q[1], " must be a multiple of the key/value head count ", k[1]);
  const DType t = ctx.input_dtype(0);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, std::vector<int64_t>{q[0], q[1], q[2], v[3]}, t, "output 'Y'"));
  // The scores tensor the kernel holds is [batch, q_heads, q_len, kv_len].
  IGNIS_RETURN_IF_ERROR(checked_shape(ctx, std::vector<int64_t>{q[0], q[1], q[2], k[2]}, score, "scores").status());
  ctx.set_output(0, t, y);
  return Status::ok();
}

}  // namespace

void register_transformer_flex_schemas(OpSchemaRegistry& r) {
  r.add({"ai.onnx.preview", "FlexAttention", 1, 1, infer_flex_attention});
}

}  // namespace ignis::ir::transformer_ops
