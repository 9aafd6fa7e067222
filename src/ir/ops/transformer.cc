// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the transformer ops: Attention, RMSNormalization, RotaryEmbedding;
// the newer ones live beside it (transformer_recurrent.cc, transformer_flex.cc).
#include <cstdint>
#include <string>
#include <vector>

#include "core/broadcast.h"
#include "ir/ops/nn_internal.h"
#include "ir/ops/transformer_internal.h"

namespace ignis::ir {

namespace transformer_ops {

Result<int64_t> required_positive_int(const InferContext& ctx, std::string_view name, std::string_view what) {
  const Attribute* a = ctx.attrs().find(name);
  if (a == nullptr || a->kind != Attribute::Kind::Int)
    return ctx.fail("int attribute '", name, "' is required ", what);
  if (a->i < 1) return ctx.fail("attribute '", name, "' must be >= 1, got ", a->i);
  return a->i;
}

Status check_softmax_precision(const InferContext& ctx) {
  if (!ctx.attrs().has("softmax_precision")) return Status::ok();
  const int64_t p = ctx.attrs().get_int("softmax_precision", 1);
  // TensorProto codes: FLOAT, FLOAT16, DOUBLE, BFLOAT16.
  if (p != 1 && p != 10 && p != 11 && p != 16)
    return ctx.fail("attribute 'softmax_precision' must be 1 (float), 10 (float16), 11 (double) or ",
                    "16 (bfloat16), got ", p);
  return Status::ok();
}

}  // namespace transformer_ops

namespace {

using transformer_ops::required_positive_int;

using nn_ops::checked_shape;
using nn_ops::expect_input;
using nn_ops::expect_same_dtype;

constexpr DTypeSet kFloats = DTypeSet::floats();

// ---- Attention ------------------------------------------------------------------------------
// Inputs: Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen (24+).
// Outputs: Y, present_key, present_value, qk_matmul_output.

// The extents of one Attention call with Q/K/V viewed as [batch, heads, seq, head_size].
struct AttentionDims {
  bool three_d = false;
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past_len = 0, head = 0, v_head = 0;
  int64_t total() const { return past_len + kv_len; }
};

Status attention_check_attrs(const InferContext& ctx) {
  const int64_t mode = ctx.attrs().get_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) return ctx.fail("attribute 'qk_matmul_output_mode' must be 0, 1, 2 or 3, got ", mode);
  const int64_t is_causal = ctx.attrs().get_int("is_causal", 0);
  if (is_causal != 0 && is_causal != 1) return ctx.fail("attribute 'is_causal' must be 0 or 1, got ", is_causal);
  IGNIS_RETURN_IF_ERROR(transformer_ops::check_softmax_precision(ctx));
  if (ctx.attrs().get_float("softcap", 0.0f) < 0.0f)
    return ctx.fail("attribute 'softcap' must be >= 0, got ", ctx.attrs().get_float("softcap", 0.0f));
  if (ctx.opset() >= 25) {
    for (const char* name : {"left_window_size", "right_window_size"}) {
      const int64_t w = ctx.attrs().get_int(name, -1);
      if (w < -1) return ctx.fail("attribute '", name, "' must be -1 (unbounded) or >= 0, got ", w);
    }
  }
  return Status::ok();
}

// Reads batch, heads, sequence lengths and head sizes from Q, K, V (3-D or 4-D) and the past.
Result<AttentionDims> attention_dims(const InferContext& ctx) {
  const Shape &q = ctx.input_shape(0), &k = ctx.input_shape(1), &v = ctx.input_shape(2);
  if (q.rank() != 3 && q.rank() != 4)
    return ctx.fail("input 0 ('Q') must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_size], got ",
                    q.str());
  if (k.rank() != q.rank() || v.rank() != q.rank())
    return ctx.fail("Q, K and V must have the same rank, got ", q.str(), ", ", k.str(), ", ", v.str());
  AttentionDims d;
  d.three_d = q.rank() == 3;
  d.batch = q[0];
  if (k[0] != d.batch || v[0] != d.batch)
    return ctx.fail("Q, K and V must have the same batch size, got ", q.str(), ", ", k.str(), ", ", v.str());
  if (d.three_d) {
    IGNIS_ASSIGN_OR_RETURN(d.q_heads, required_positive_int(ctx, "q_num_heads", "for 3-D Q, K, V"));
    IGNIS_ASSIGN_OR_RETURN(d.kv_heads, required_positive_int(ctx, "kv_num_heads", "for 3-D Q, K, V"));
    static constexpr const char* kNames[] = {"Q", "K", "V"};
    for (int i = 0; i < 3; ++i) {
      const int64_t heads = i == 0 ? d.q_heads : d.kv_heads;
      if (ctx.input_shape(i)[2] % heads != 0)
        return ctx.fail("input ", i, " ('", kNames[i], "') ", ctx.input_shape(i).str(),
                        ": hidden size is not divisible by ", (i == 0 ? "q_num_heads " : "kv_num_heads "), heads);
    }
    d.q_len = q[1];
    d.kv_len = k[1];
    d.head = q[2] / d.q_heads;
    if (k[2] / d.kv_heads != d.head)
      return ctx.fail("Q ", q.str(), " with q_num_heads ", d.q_heads, " and K ", k.str(), " with kv_num_heads ",
                      d.kv_heads, " have different head sizes");
    if (v[1] != d.kv_len) return ctx.fail("K ", k.str(), " and V ", v.str(), " must have the same sequence length");
    d.v_head = v[2] / d.kv_heads;
  } else {
    if (ctx.opset() >= 25 && (ctx.attrs().has("q_num_heads") || ctx.attrs().has("kv_num_heads")))
      return ctx.error("attributes 'q_num_heads' and 'kv_num_heads' must not be set for 4-D Q, K, V");
    d.q_heads = q[1];
    d.kv_heads = k[1];
    d.q_len = q[2];
    d.kv_len = k[2];
    d.head = q[3];
    d.v_head = v[3];
    if (k[3] != d.head) return ctx.fail("Q ", q.str(), " and K ", k.str(), " must have the same head size");
    if (v[1] != d.kv_heads || v[2] != d.kv_len)
      return ctx.fail("K ", k.str(), " and V ", v.str(), " must have the same heads and sequence length");
  }
  if (d.kv_heads < 1 || d.q_heads % d.kv_heads != 0)
    return ctx.fail("the query head count ", d.q_heads, " must be a multiple of the key/value head count ", d.kv_heads);
  return d;
}

// past_key [batch, kv_heads, past, head] and past_value [batch, kv_heads, past, v_head], together.
Status attention_check_past(const InferContext& ctx, AttentionDims& d) {
  const bool has_pk = ctx.has_input(4), has_pv = ctx.has_input(5);
  if (has_pk != has_pv) return ctx.error("inputs 'past_key' and 'past_value' must be given together");
  if (!has_pk) return Status::ok();
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 4, "past_key", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 5, "past_value", 2));
  const Shape &pk = ctx.input_shape(4), &pv = ctx.input_shape(5);
  d.past_len = pk.rank() == 4 ? pk[2] : -1;
  const Shape want_k{d.batch, d.kv_heads, d.past_len, d.head}, want_v{d.batch, d.kv_heads, d.past_len, d.v_head};
  if (pk.rank() != 4 || !(pk == want_k))
    return ctx.fail("input 4 ('past_key') must have shape [batch, kv_heads, past_len, head_size] = [", d.batch, ", ",
                    d.kv_heads, ", past_len, ", d.head, "], got ", pk.str());
  if (!(pv == want_v))
    return ctx.fail("input 5 ('past_value') must have shape ", want_v.str(), " to match past_key ", pk.str(), ", got ",
                    pv.str());
  return Status::ok();
}

// attn_mask broadcasts to [batch, q_heads, q_len, total]; its last axis may be shorter (the
// rest counts as masked) but not longer.
Status attention_check_mask(const InferContext& ctx, const AttentionDims& d) {
  if (!ctx.has_input(3)) return Status::ok();
  const DType t = ctx.input_dtype(3);
  if (t != DType::Bool && t != ctx.input_dtype(0))
    return ctx.unsupported(str_cat("attn_mask of dtype ", dtype_name(t), " (only bool or the dtype of Q, ",
                                   dtype_name(ctx.input_dtype(0)), ", is implemented)"));
  const Shape& m = ctx.input_shape(3);
  const Shape scores{d.batch, d.q_heads, d.q_len, d.total()};
  bool ok = m.rank() >= 1 && m.rank() <= 4 && m.back() <= d.total();
  for (int i = 0; ok && i + 1 < m.rank(); ++i) {
    const int64_t md = m[m.rank() - 2 - i], sd = scores[2 - i];
    ok = md == 1 || md == sd;
  }
  if (!ok)
    return ctx.fail("input 3 ('attn_mask') of shape ", m.str(), " does not broadcast to the attention scores ",
                    scores.str(), " (its last axis may be shorter than ", d.total(), ", not longer)");
  return Status::ok();
}

Status infer_attention(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, ctx.opset() >= 24 ? 7 : 6));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "Q", kFloats));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "K", 0));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "V", kFloats));
  if (ctx.input_dtype(2) != ctx.input_dtype(0))
    return ctx.unsupported(str_cat("V of dtype ", dtype_name(ctx.input_dtype(2)), " with Q of dtype ",
                                   dtype_name(ctx.input_dtype(0)), " (mixed dtypes are not implemented)"));
  if (ctx.num_outputs() > 4) return ctx.fail("expected at most 4 outputs, got ", ctx.num_outputs());
  IGNIS_RETURN_IF_ERROR(attention_check_attrs(ctx));
  IGNIS_ASSIGN_OR_RETURN(AttentionDims d, attention_dims(ctx));
  IGNIS_RETURN_IF_ERROR(attention_check_past(ctx, d));
  IGNIS_RETURN_IF_ERROR(attention_check_mask(ctx, d));
  if (ctx.has_input(6)) {
    IGNIS_RETURN_IF_ERROR(expect_input(ctx, 6, "nonpad_kv_seqlen", {DType::I64}));
    if (!(ctx.input_shape(6) == Shape{d.batch}))
      return ctx.fail("input 6 ('nonpad_kv_seqlen') must have shape [", d.batch, "], got ", ctx.input_shape(6).str());
    if (ctx.has_input(4))
      return ctx.error("input 'nonpad_kv_seqlen' cannot be combined with 'past_key'/'past_value'");
  }
  const DType t = ctx.input_dtype(0);
  std::vector<int64_t> y = d.three_d ? std::vector<int64_t>{d.batch, d.q_len, d.q_heads * d.v_head}
                                     : std::vector<int64_t>{d.batch, d.q_heads, d.q_len, d.v_head};
  IGNIS_ASSIGN_OR_RETURN(Shape ys, checked_shape(ctx, y, t, "output 'Y'"));
  ctx.set_output(0, t, ys);
  const int64_t total = d.total();
  const std::vector<int64_t> outs[] = {{d.batch, d.kv_heads, total, d.head},
                                       {d.batch, d.kv_heads, total, d.v_head},
                                       {d.batch, d.q_heads, d.q_len, total}};
  static constexpr const char* kOutNames[] = {"present_key", "present_value", "qk_matmul_output"};
  for (int o = 1; o < ctx.num_outputs(); ++o) {
    IGNIS_ASSIGN_OR_RETURN(Shape s, checked_shape(ctx, outs[o - 1], t, kOutNames[o - 1]));
    ctx.set_output(o, t, s);
  }
  return Status::ok();
}

// ---- RMSNormalization -----------------------------------------------------------------------

Status infer_rms_norm(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 2));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kFloats));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "scale", kFloats));
  const Shape &x = ctx.input_shape(0), &s = ctx.input_shape(1);
  if (x.rank() < 1) return ctx.fail("input 0 ('X') must have rank >= 1, got ", x.str());
  const int64_t axis_attr = ctx.attrs().get_int("axis", -1);
  auto axis = normalize_axis(axis_attr, x.rank());
  if (!axis) return ctx.fail("attribute 'axis' ", axis_attr, " is out of range for X ", x.str());
  const int64_t stash = ctx.attrs().get_int("stash_type", 1);
  if (stash != 1) return ctx.unsupported(str_cat("stash_type ", stash, " (only 1, float32, is implemented)"));
  // Scale broadcasts (unidirectionally) to X.
  auto b = broadcast_shapes(x, s);
  if (s.rank() > x.rank() || !b || !(*b == x))
    return ctx.fail("input 1 ('scale') of shape ", s.str(), " does not broadcast to X ", x.str());
  ctx.set_output(0, ctx.input_dtype(1), x);
  return Status::ok();
}

// ---- RotaryEmbedding ------------------------------------------------------------------------

Status infer_rotary(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 4));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", {DType::F32, DType::F16, DType::BF16}));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 1, "cos_cache", 0));
  IGNIS_RETURN_IF_ERROR(expect_same_dtype(ctx, 2, "sin_cache", 0));
  const Shape& x = ctx.input_shape(0);
  int64_t batch = 0, seq = 0, head = 0;
  if (x.rank() == 4) {
    batch = x[0];
    seq = x[2];
    head = x[3];
  } else if (x.rank() == 3) {
    IGNIS_ASSIGN_OR_RETURN(int64_t heads, required_positive_int(ctx, "num_heads", "for a 3-D input"));
    if (x[2] % heads != 0)
      return ctx.fail("input 0 ('X') ", x.str(), ": hidden size is not divisible by num_heads ", heads);
    batch = x[0];
    seq = x[1];
    head = x[2] / heads;
  } else {
    return ctx.fail("input 0 ('X') must be 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_size], got ",
                    x.str());
  }
  int64_t rot = ctx.attrs().get_int("rotary_embedding_dim", 0);
  if (rot == 0) rot = head;
  if (rot < 0 || rot > head || rot % 2 != 0)
    return ctx.fail("the rotary dimension ", rot, " must be even and at most the head size ", head);
  const Shape& cs = ctx.input_shape(1);
  Shape want;
  if (ctx.has_input(3)) {
    IGNIS_RETURN_IF_ERROR(expect_input(ctx, 3, "position_ids", {DType::I64}));
    if (!(ctx.input_shape(3) == Shape{batch, seq}))
      return ctx.fail("input 3 ('position_ids') must have shape [", batch, ", ", seq, "], got ",
                      ctx.input_shape(3).str());
    if (cs.rank() != 2 || cs[1] != rot / 2)
      return ctx.fail("input 1 ('cos_cache') must have shape [max_position + 1, ", rot / 2, "], got ", cs.str());
    want = cs;
  } else {
    want = Shape{batch, seq, rot / 2};
    if (!(cs == want)) return ctx.fail("input 1 ('cos_cache') must have shape ", want.str(), ", got ", cs.str());
  }
  if (!(ctx.input_shape(2) == want))
    return ctx.fail("input 2 ('sin_cache') must have the shape of cos_cache ", want.str(), ", got ",
                    ctx.input_shape(2).str());
  ctx.set_output(0, ctx.input_dtype(0), x);
  return Status::ok();
}

}  // namespace

void register_transformer_schemas(OpSchemaRegistry& r) {
  r.add({"", "Attention", 23, 25, infer_attention});
  r.add({"", "RMSNormalization", 23, 23, infer_rms_norm});
  r.add({"", "RotaryEmbedding", 23, 23, infer_rotary});
  transformer_ops::register_transformer_recurrent_schemas(r);
  transformer_ops::register_transformer_flex_schemas(r);
}

}  // namespace ignis::ir
