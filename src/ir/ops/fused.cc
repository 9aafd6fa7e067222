// SPDX-License-Identifier: Apache-2.0
// Schemas of the ai.ignis fused ops produced by the graph optimizer (docs/ops_ai_ignis.md):
// FusedConv, FusedMatMul, Gelu, SkipLayerNorm, Attention. All are float32 only.
#include <cmath>
#include <string>
#include <vector>

#include "core/activation.h"
#include "core/broadcast.h"
#include "core/conv_geometry.h"
#include "core/strings.h"
#include "ir/ops/nn_internal.h"

namespace ignis::ir {

namespace {

using nn_ops::checked_shape;
using nn_ops::expect_input;
using nn_ops::relabel;

constexpr std::string_view kDomain = "ai.ignis";
constexpr DTypeSet kF32{DType::F32};

// Every optional float input, when present, must be float32 as well.
Status expect_f32_if_present(const InferContext& ctx, int i, std::string_view name) {
  if (!ctx.has_input(i)) return Status::ok();
  return expect_input(ctx, i, name, kF32);
}

// The `activation` attribute and its parameters (docs/ops_ai_ignis.md, "Activations").
Status check_activation(const InferContext& ctx) {
  const Attribute* a = ctx.attrs().find("activation");
  if (a == nullptr) return Status::ok();
  if (a->kind != Attribute::Kind::String)
    return ctx.fail("attribute 'activation' must be a string, got ", attribute_kind_name(a->kind));
  if (!activation_from_name(a->s)) {
    std::vector<std::string> names;
    for (std::string_view n : activation_names()) names.emplace_back(n.empty() ? "''" : n);
    return ctx.fail("attribute 'activation' must be one of ", str_join(names), "; got '", a->s, "'");
  }
  for (const char* p : {"activation_min", "activation_max", "activation_alpha", "activation_beta"}) {
    const Attribute* v = ctx.attrs().find(p);
    if (v != nullptr && v->kind != Attribute::Kind::Float)
      return ctx.fail("attribute '", p, "' must be a float, got ", attribute_kind_name(v->kind));
  }
  if (a->s == "Clip") {
    const float lo = ctx.attrs().get_float("activation_min", -INFINITY);
    const float hi = ctx.attrs().get_float("activation_max", INFINITY);
    if (lo > hi) return ctx.fail("Clip activation needs activation_min <= activation_max, got ", lo, " > ", hi);
  }
  return Status::ok();
}

// ---- FusedConv: act(Conv(X, W, B) + Z) ------------------------------------------------------

Status infer_fused_conv(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 4));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "W", kF32));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 2, "B"));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 3, "Z"));
  IGNIS_RETURN_IF_ERROR(check_activation(ctx));
  const Shape& x = ctx.input_shape(0);
  const Shape& w = ctx.input_shape(1);
  if (x.rank() < 3) return ctx.fail("input 0 ('X') must have rank >= 3, got ", x.str());
  if (w.rank() != x.rank()) return ctx.fail("input 1 ('W') must have the rank of X ", x.str(), ", got ", w.str());
  const int64_t group = ctx.attrs().get_int("group", 1);
  if (group < 1) return ctx.fail("attribute 'group' must be >= 1, got ", group);
  const int64_t c = x[1], m = w[0];
  if (c != w[1] * group)
    return ctx.fail("input channels ", c, " of X ", x.str(), " must equal W's ", w[1], " per group times group ",
                    group);
  if (m % group != 0) return ctx.fail("output channels ", m, " (W ", w.str(), ") are not divisible by group ", group);
  if (ctx.has_input(2) && !(ctx.input_shape(2) == Shape{m}))
    return ctx.fail("input 2 ('B') must have shape [", m, "], got ", ctx.input_shape(2).str());
  auto g = make_window_geometry(ctx.attrs(), x.dims().subspan(2), w.dims().subspan(2), false);
  if (!g) return relabel(ctx, g.error());
  std::vector<int64_t> out = {x[0], m};
  for (int i = 0; i < g->rank; ++i) out.push_back(g->out[i]);
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  if (ctx.has_input(3) && !(ctx.input_shape(3) == y))
    return ctx.fail("input 3 ('Z') must have the output shape ", y.str(), ", got ", ctx.input_shape(3).str());
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- FusedMatMul: act(MatMul(A', B') + bias) ------------------------------------------------
// A' is A with its last two axes swapped when transA = 1, else A; B' likewise with transB.

Status infer_fused_matmul(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(2, 3));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "A", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "B", kF32));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 2, "bias"));
  IGNIS_RETURN_IF_ERROR(check_activation(ctx));
  bool trans[2] = {false, false};
  for (int i = 0; i < 2; ++i) {
    const char* name = i == 0 ? "transA" : "transB";
    const Attribute* t = ctx.attrs().find(name);
    if (t == nullptr) continue;
    if (t->kind != Attribute::Kind::Int || (t->i != 0 && t->i != 1))
      return ctx.fail("attribute '", name, "' must be the int 0 or 1");
    trans[i] = t->i != 0;
    if (trans[i] && ctx.input_shape(i).rank() < 2)
      return ctx.fail("attribute '", name, "' = 1 needs input ", i, " of rank >= 2, got ", ctx.input_shape(i).str());
  }
  const Shape& a = ctx.input_shape(0);
  const Shape& b = ctx.input_shape(1);
  if (a.rank() < 1 || b.rank() < 1) return ctx.fail("inputs must have rank >= 1, got A ", a.str(), " and B ", b.str());
  // Rows of A', inner extents of A' and B', columns of B' (the last axis of the product).
  const int ra = a.rank(), rb = b.rank();
  const int64_t ka = trans[0] ? a[ra - 2] : a.back();
  const int64_t kb = rb == 1 ? b[0] : (trans[1] ? b.back() : b[rb - 2]);
  if (ka != kb)
    return ctx.fail("inner dimensions differ: A ", a.str(), (trans[0] ? " (transA)" : ""), " and B ", b.str(),
                    (trans[1] ? " (transB)" : ""));
  Shape a_batch, b_batch;
  for (int i = 0; i + 2 < ra; ++i) a_batch.push_back(a[i]);
  for (int i = 0; i + 2 < rb; ++i) b_batch.push_back(b[i]);
  auto batch = broadcast_shapes(a_batch, b_batch);
  if (!batch) return ctx.fail("batch dimensions of A ", a.str(), " and B ", b.str(), " do not broadcast");
  std::vector<int64_t> out = batch->to_vector();
  if (ra >= 2) out.push_back(trans[0] ? a.back() : a[ra - 2]);
  if (rb >= 2) out.push_back(trans[1] ? b[rb - 2] : b.back());
  if (ctx.has_input(2)) {
    if (rb < 2) return ctx.fail("input 2 ('bias') needs B of rank >= 2, got B ", b.str());
    const int64_t n = out.back();
    if (!(ctx.input_shape(2) == Shape{n}))
      return ctx.fail("input 2 ('bias') must have shape [", n, "], got ", ctx.input_shape(2).str());
  }
  IGNIS_ASSIGN_OR_RETURN(Shape y, checked_shape(ctx, out, DType::F32, "output"));
  ctx.set_output(0, DType::F32, y);
  return Status::ok();
}

// ---- Gelu -----------------------------------------------------------------------------------

Status infer_gelu(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(1, 1));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  const Attribute* a = ctx.attrs().find("approximate");
  if (a != nullptr && (a->kind != Attribute::Kind::String || (a->s != "none" && a->s != "tanh")))
    return ctx.fail("attribute 'approximate' must be 'none' or 'tanh'");
  ctx.set_output(0, DType::F32, ctx.input_shape(0));
  return Status::ok();
}

// ---- SkipLayerNorm: LayerNormalization(X + Skip + Bias) over the last axis --------------------

Status infer_skip_layer_norm(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 5));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "X", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "Skip", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "Gamma", kF32));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 3, "Beta"));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 4, "Bias"));
  const Attribute* eps = ctx.attrs().find("epsilon");
  if (eps != nullptr && eps->kind != Attribute::Kind::Float) return ctx.fail("attribute 'epsilon' must be a float");
  auto sum = broadcast_shapes(ctx.input_shape(0), ctx.input_shape(1));
  if (!sum)
    return ctx.fail("inputs X ", ctx.input_shape(0).str(), " and Skip ", ctx.input_shape(1).str(),
                    " do not broadcast");
  if (sum->rank() < 1) return ctx.fail("X + Skip must have rank >= 1, got a scalar");
  const int64_t n = sum->back();
  static constexpr const char* kNames[] = {"", "", "Gamma", "Beta", "Bias"};
  for (int i = 2; i < 5; ++i)
    if (ctx.has_input(i) && !(ctx.input_shape(i) == Shape{n}))
      return ctx.fail("input ", i, " ('", kNames[i], "') must have shape [", n, "] (the last axis of X + Skip ",
                      sum->str(), "), got ", ctx.input_shape(i).str());
  ctx.set_output(0, DType::F32, *sum);
  if (ctx.num_outputs() > 1) ctx.set_output(1, DType::F32, *sum);
  return Status::ok();
}

// ---- Attention ------------------------------------------------------------------------------

Status infer_attention(InferContext& ctx) {
  IGNIS_RETURN_IF_ERROR(ctx.expect_inputs(3, 4));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 0, "Q", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 1, "K", kF32));
  IGNIS_RETURN_IF_ERROR(expect_input(ctx, 2, "V", kF32));
  IGNIS_RETURN_IF_ERROR(expect_f32_if_present(ctx, 3, "Mask"));
  const Attribute* heads_attr = ctx.attrs().find("num_heads");
  if (heads_attr == nullptr || heads_attr->kind != Attribute::Kind::Int)
    return ctx.fail("int attribute 'num_heads' is required");
  const Attribute* scale = ctx.attrs().find("scale");
  if (scale != nullptr && scale->kind != Attribute::Kind::Float) return ctx.fail("attribute 'scale' must be a float");
  const int64_t heads = heads_attr->i;
  if (heads < 1) return ctx.fail("attribute 'num_heads' must be >= 1, got ", heads);
  static constexpr const char* kNames[] = {"Q", "K", "V"};
  for (int i = 0; i < 3; ++i) {
    const Shape& s = ctx.input_shape(i);
    if (s.rank() != 3) return ctx.fail("input ", i, " ('", kNames[i], "') must be 3-D [batch, seq, hidden], got ", s.str());
    if (s[2] % heads != 0)
      return ctx.fail("input ", i, " ('", kNames[i], "') ", s.str(), ": hidden size is not divisible by num_heads ",
                      heads);
  }
  const Shape &q = ctx.input_shape(0), &k = ctx.input_shape(1), &v = ctx.input_shape(2);
  if (k[0] != q[0] || v[0] != q[0])
    return ctx.fail("Q, K and V must have the same batch size, got ", q.str(), ", ", k.str(), ", ", v.str());
  if (k[2] != q[2]) return ctx.fail("Q ", q.str(), " and K ", k.str(), " must have the same hidden size");
  if (v[1] != k[1]) return ctx.fail("K ", k.str(), " and V ", v.str(), " must have the same sequence length");
  if (ctx.has_input(3)) {
    const Shape scores{q[0], heads, q[1], k[1]};
    const Shape& m = ctx.input_shape(3);
    auto b = broadcast_shapes(scores, m);
    if (m.rank() > 4 || !b || !(*b == scores))
      return ctx.fail("input 3 ('Mask') of shape ", m.str(), " does not broadcast to the scores ", scores.str());
  }
  ctx.set_output(0, DType::F32, Shape{q[0], q[1], v[2]});
  return Status::ok();
}

}  // namespace

void register_fused_schemas(OpSchemaRegistry& r) {
  r.add({kDomain, "FusedConv", 1, 1, infer_fused_conv});
  r.add({kDomain, "FusedMatMul", 1, 1, infer_fused_matmul});
  r.add({kDomain, "Gelu", 1, 1, infer_gelu});
  r.add({kDomain, "SkipLayerNorm", 1, 1, infer_skip_layer_norm});
  r.add({kDomain, "Attention", 1, 1, infer_attention});
}

}  // namespace ignis::ir
