// SPDX-License-Identifier: Apache-2.0
// Schemas for the stateful sequence ops of recurrent-style transformers (opset 27):
// LinearAttention (linear / gated / delta / gated-delta recurrences over a [d_k, d_v] state per
// key/value head) and CausalConvWithState (depthwise causal 1-D convolution with a carry).
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "ir/ops/nn_internal.h"
#include "ir/ops/transformer_internal.h"

namespace ignis::ir::transformer_ops {

namespace {

using nn_ops::checked_shape;
using nn_ops::expect_input;
using nn_ops::expect_same_dtype;

constexpr DTypeSet kTypes = {DType::F32, DType::F16, DType::BF16};

// A string attribute that, when present, must be one of `choices`; `def` when absent.
Result<std::string> string_choice(const InferContext& ctx, std::string_view name, std::string_view def,
                                  std::initializer_list<std::string_view> choices) {
  const Attribute* a = ctx.attrs().find(name);
  if (a == nullptr) return std::string(def);
  if (a->kind != Attribute::Kind::String) return ctx.fail("attribute '", name, "' must be a string");
  for (std::string_view c : choices)
    if (a->s == c) return a->s;
  std::string list;
  for (std::string_view c : choices) list += str_cat(list.empty() ? "'" : ", '", c, "'");
  return ctx.fail("attribute '", name, "' must be one of ", list, ", got '", a->s, "'");
}

// Input i must be 3-D [batch, seq, width] with the batch and sequence length of input 0.
Result<int64_t> packed_width(const InferContext& ctx, int i, std::string_view name) {
  const Shape& s = ctx.input_shape(i);
  const Shape& q = ctx.input_shape(0);
  if (s.rank() != 3) return ctx.fail("input ", i, " ('", name, "') must be 3-D [batch, seq, width], got ", s.str());
  if (i != 0 && (s[0] != q[0] || s[1] != q[1]))
    return ctx.fail("input ", i, " ('", name, "') ", s.str(), " must have the batch and sequence length of query ",
                    q.str());
  return s[2];
}

// ---- LinearAttention --------------------------------------------------------------------------
// Inputs: query [B, T, Hq*dk], key [B, T, Hkv*dk], value [B, T, Hkv*dv], past_state
// [B, Hkv, dk, dv], decay [B, T, Hkv*dk] or [B, T, Hkv], beta [B, T, Hkv] or [B, T, 1].
// Outputs: output [B, T, Hq*dv] in query's dtype, present_state in past_state's (query's when
// there is no past_state).

Status infer_linear_attention(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 6));
  if (ctx.num_outputs() < 1 || ctx.num_outputs() > 2)
    return ctx.fail("expected 1 or 2 outputs (output, present_state), got ", ctx.num_outputs());
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "query", kTypes));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "key", kTypes));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "value", kTypes));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "key", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "value", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 4, "decay", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 5, "beta", 0));
  if (ctx.has_input(3)) IGNIS_RETURN_IF_ERROR(expect_input(ctx, 3, "past_state", kTypes));

  IGNIS_ASSIGN_OR_RETURN(const int64_t q_heads, required_positive_int(ctx, "q_num_heads", "by LinearAttention"));
  IGNIS_ASSIGN_OR_RETURN(const int64_t kv_heads, required_positive_int(ctx, "kv_num_heads", "by LinearAttention"));
  if (q_heads % kv_heads != 0)
    return ctx.fail("attribute 'q_num_heads' (", q_heads, ") must be a multiple of 'kv_num_heads' (", kv_heads, ")");
  IGNIS_ASSIGN_OR_RETURN(const std::string rule,
                         string_choice(ctx, "update_rule", "gated_delta", {"linear", "gated", "delta", "gated_delta"}));
  // chunk_size only tunes chunked implementations; the result does not depend on it.
  const Attribute* chunk = ctx.attrs().find("chunk_size");
  if (chunk != nullptr && (chunk->kind != Attribute::Kind::Int || chunk->i < 1))
    return ctx.fail("attribute 'chunk_size' must be an int >= 1");

  IGNIS_ASSIGN_OR_RETURN(const int64_t q_width, packed_width(ctx, 0, "query"));
  IGNIS_ASSIGN_OR_RETURN(const int64_t k_width, packed_width(ctx, 1, "key"));
  IGNIS_ASSIGN_OR_RETURN(const int64_t v_width, packed_width(ctx, 2, "value"));
  const Shape& q = ctx.input_shape(0);
  if (q_width % q_heads != 0)
    return ctx.fail("input 0 ('query') ", q.str(), ": width is not divisible by q_num_heads ", q_heads);
  const int64_t dk = q_width / q_heads;
  if (k_width != kv_heads * dk)
    return ctx.fail("input 1 ('key') ", ctx.input_shape(1).str(), " must have width kv_num_heads * d_k = ", kv_heads,
                    " * ", dk, " (d_k from query ", q.str(), " and q_num_heads ", q_heads, ")");
  if (v_width % kv_heads != 0)
    return ctx.fail("input 2 ('value') ", ctx.input_shape(2).str(), ": width is not divisible by kv_num_heads ",
                    kv_heads);
  const int64_t dv = v_width / kv_heads;
  const int64_t batch = q[0], seq = q[1];

  const bool gated = rule == "gated" || rule == "gated_delta";
  const bool delta = rule == "delta" || rule == "gated_delta";
  if (gated != ctx.has_input(4))
    return ctx.fail("update_rule '", rule, "' ", gated ? "requires" : "does not take", " input 4 ('decay')");
  if (delta != ctx.has_input(5))
    return ctx.fail("update_rule '", rule, "' ", delta ? "requires" : "does not take", " input 5 ('beta')");
  if (gated) {
    IGNIS_ASSIGN_OR_RETURN(const int64_t w, packed_width(ctx, 4, "decay"));
    if (w != kv_heads && w != kv_heads * dk)
      return ctx.fail("input 4 ('decay') ", ctx.input_shape(4).str(), " must have width kv_num_heads (", kv_heads,
                      ") or kv_num_heads * d_k (", kv_heads * dk, ")");
  }
  if (delta) {
    IGNIS_ASSIGN_OR_RETURN(const int64_t w, packed_width(ctx, 5, "beta"));
    if (w != kv_heads && w != 1)
      return ctx.fail("input 5 ('beta') ", ctx.input_shape(5).str(), " must have width kv_num_heads (", kv_heads,
                      ") or 1");
  }
  const std::vector<int64_t> state{batch, kv_heads, dk, dv};
  if (ctx.has_input(3) && !(ctx.input_shape(3) == Shape(state)))
    return ctx.fail("input 3 ('past_state') must have shape [batch, kv_num_heads, d_k, d_v] = ", Shape(state).str(),
                    ", got ", ctx.input_shape(3).str());

  const DType t = ctx.input_dtype(0);
  IGNIS_ASSIGN_OR_RETURN(Shape out, checked_shape(ctx, std::vector<int64_t>{batch, seq, q_heads * dv}, t, "output"));
  ctx.set_output(0, t, out);
  if (ctx.num_outputs() > 1) {
    const DType st = ctx.has_input(3) ? ctx.input_dtype(3) : t;
    IGNIS_ASSIGN_OR_RETURN(Shape ps, checked_shape(ctx, state, st, "present_state"));
    ctx.set_output(1, st, ps);
  }
  return Status::ok();
}

// ---- CausalConvWithState ----------------------------------------------------------------------
// Inputs: input [B, C, L], weight [C, 1, k], bias [C], past_state [B, C, k - 1].
// Outputs: output [B, C, L], present_state [B, C, k - 1].

Status infer_causal_conv_with_state(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 4));
  if (ctx.num_outputs() < 1 || ctx.num_outputs() > 2)
    return ctx.fail("expected 1 or 2 outputs (output, present_state), got ", ctx.num_outputs());
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "input", kTypes));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "weight", kTypes));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "weight", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "bias", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 3, "past_state", 0));
  IGNIS_RETURN_IF_ERROR(string_choice(ctx, "activation", "none", {"none", "silu", "swish"}).status());
  const Shape &x = ctx.input_shape(0), &w = ctx.input_shape(1);
  if (x.rank() != 3) return ctx.fail("input 0 ('input') must be 3-D [batch, channels, length], got ", x.str());
  const int64_t batch = x[0], channels = x[1];
  if (w.rank() != 3 || w[0] != channels || w[1] != 1 || w[2] < 1)
    return ctx.fail("input 1 ('weight') must have shape [channels, 1, k] with channels = ", channels,
                    " and k >= 1, got ", w.str());
  const int64_t k = w[2];
  if (ctx.has_input(2) && !(ctx.input_shape(2) == Shape{channels}))
    return ctx.fail("input 2 ('bias') must have shape [", channels, "], got ", ctx.input_shape(2).str());
  const std::vector<int64_t> state{batch, channels, k - 1};
  if (ctx.has_input(3) && !(ctx.input_shape(3) == Shape(state)))
    return ctx.fail("input 3 ('past_state') must have shape [batch, channels, k - 1] = ", Shape(state).str(),
                    ", got ", ctx.input_shape(3).str());
  const DType t = ctx.input_dtype(0);
  ctx.set_output(0, t, x);
  if (ctx.num_outputs() > 1) {
    IGNIS_ASSIGN_OR_RETURN(Shape ps, checked_shape(ctx, state, t, "present_state"));
    ctx.set_output(1, t, ps);
  }
  return Status::ok();
}

}  // namespace

void register_transformer_recurrent_schemas(OpSchemaRegistry& r) {
  r.add({"", "LinearAttention", 27, 27, infer_linear_attention});
  r.add({"", "CausalConvWithState", 27, 27, infer_causal_conv_with_state});
}

}  // namespace ignis::ir::transformer_ops
