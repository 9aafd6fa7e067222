// SPDX-License-Identifier: Apache-2.0
// Fuses BERT-style multi-head self-attention into one ai.ignis.Attention(Q, K, V, Mask):
//   Q4 = Transpose(Reshape(Q, [B, S, H, D]), [0, 2, 1, 3])          [B, H, Sq, D]
//   K4 = Transpose(Reshape(K, [B, S, H, D]), [0, 2, 3, 1])          [B, H, D, Sk]
//   V4 = Transpose(Reshape(V, [B, S, H, Dv]), [0, 2, 1, 3])         [B, H, Sk, Dv]
//   P  = Softmax(MatMul(Q4, K4) / c [+ Mask], axis = -1)
//   Y  = Reshape(Transpose(MatMul(P, V4), [0, 2, 1, 3]), [B, S, H * Dv])
// which is, per batch and head, softmax(Q_h K_h^T / c + Mask) V_h with the heads laid out
// along the last axis: the definition of Attention with scale = 1 / c (or c for a Mul).
// Legality: every intermediate feeds only the next node of the pattern (the output Reshape's
// shape may be computed from the transposed product by Shape/Gather/Concat nodes, which go
// too); Q, K and V are provably float32 [B, S, E] with fixed E = H * D (or H * Dv) and the
// same B (and the same S for K and V); the head reshapes are proven to keep B and S (from
// constants, zero-copies, or Shape/Gather chains of the same values) and split E into the
// same H, with the same D for Q and K; the mask is float32 of rank <= 4 and not provably
// wider than [B, H, Sq, Sk] (see below); Softmax runs over the last axis; c is a float32
// scalar constant of rank <= 4. The scale is applied as a multiplication, which differs from
// Div by c in the last bit when c is not a power of two.
#include <unordered_set>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// One element of a shape vector the optimizer can read: a constant, or dimension `axis` of
// value `of`.
struct ShapeEntry {
  int64_t value = 0;
  std::string of;
  int axis = -1;
};

// Reads a 1-D int64 shape value built from constants and Shape/Gather/Unsqueeze/Concat/Cast
// of other values; nullopt for anything else.
std::optional<std::vector<ShapeEntry>> shape_entries(const GraphIndex& index, const GraphFacts& facts,
                                                     const std::string& v, int depth = 0) {
  const ir::Graph& g = index.graph();
  if (depth > 8) return std::nullopt;
  if (const Tensor* t = ir::constant_value(g, v)) {
    if (t->dtype() != DType::I64 || t->rank() > 1) return std::nullopt;
    std::vector<ShapeEntry> out;
    for (int64_t i = 0; i < t->numel(); ++i) out.push_back({t->data_as<int64_t>()[i], {}, -1});
    return out;
  }
  const ir::Node* n = index.producer_op(v);
  if (!n || !n->domain.empty() || n->inputs.empty()) return std::nullopt;
  if (n->op_type == "Concat" && (n->attrs.get_int("axis", 0) == 0 || n->attrs.get_int("axis", 0) == -1)) {
    std::vector<ShapeEntry> out;
    for (const auto& in : n->inputs) {
      auto part = shape_entries(index, facts, in, depth + 1);
      if (!part) return std::nullopt;
      out.insert(out.end(), part->begin(), part->end());
    }
    return out;
  }
  if (n->op_type == "Unsqueeze" || (n->op_type == "Cast" && n->attrs.get_int("to", 0) == 7)) {
    // Unsqueeze of a scalar to [1] (anything else is not a 1-D shape and fails the callers'
    // length checks or the model itself).
    if (n->op_type == "Unsqueeze" && facts.rank(n->inputs[0]) != 0) return std::nullopt;
    return shape_entries(index, facts, n->inputs[0], depth + 1);
  }
  if (n->op_type == "Shape") {
    if (n->attrs.has("start") || n->attrs.has("end")) return std::nullopt;
    const int rank = facts.rank(n->inputs[0]);
    if (rank < 0) return std::nullopt;
    std::vector<ShapeEntry> out;
    for (int i = 0; i < rank; ++i) out.push_back({0, n->inputs[0], i});
    return out;
  }
  if (n->op_type == "Gather" && n->inputs.size() == 2 && n->attrs.get_int("axis", 0) == 0) {
    auto whole = shape_entries(index, facts, n->inputs[0], depth + 1);
    const Tensor* idx = ir::constant_value(g, n->inputs[1]);
    if (!whole || !idx || idx->numel() != 1 || idx->rank() > 1 ||
        (idx->dtype() != DType::I64 && idx->dtype() != DType::I32))
      return std::nullopt;
    int64_t i = idx->dtype() == DType::I64 ? idx->data_as<int64_t>()[0] : idx->data_as<int32_t>()[0];
    if (i < 0) i += static_cast<int64_t>(whole->size());
    if (i < 0 || i >= static_cast<int64_t>(whole->size())) return std::nullopt;
    return std::vector<ShapeEntry>{(*whole)[i]};
  }
  return std::nullopt;
}

// True when reshape target entry `e` at position `pos` yields the extent `want` of the
// reshaped value, whose own extent at `pos` is `want` as well (so a 0 entry copies it).
// `aliases` lists (value, axis) pairs known to have that extent by construction.
bool entry_is(const GraphFacts& facts, const ShapeEntry& e, bool allowzero, const DimFact& want,
              const std::vector<std::pair<std::string, int>>& aliases) {
  if (e.of.empty()) {
    if (e.value == 0) return !allowzero;
    return want.is_fixed() && want.value == e.value;
  }
  for (const auto& [v, a] : aliases)
    if (e.of == v && e.axis == a) return true;
  const ValueFact& f = facts[e.of];
  return e.axis < f.rank && same_dim(f.dims[e.axis], want);
}

// The [B, S, heads, head_size] head split of x: x is [B, S, E] with fixed E = heads * head_size.
struct HeadSplit {
  std::string x;          // the projection being split
  int reshape = -1;       // node indices
  int transpose = -1;
  int64_t heads = 0, head_size = 0;
};

std::optional<HeadSplit> match_head_split(const GraphIndex& index, const GraphFacts& facts, const std::string& value,
                                          const std::vector<int64_t>& perm) {
  const ir::Graph& g = index.graph();
  HeadSplit h;
  h.transpose = index.producer(value);
  if (h.transpose < 0 || !index.single_use(value)) return std::nullopt;
  const ir::Node& t = g.nodes[h.transpose];
  if (!is_onnx(t, "Transpose") || t.attrs.get_ints("perm") != perm) return std::nullopt;
  h.reshape = index.producer(t.inputs[0]);
  if (h.reshape < 0 || !index.single_use(t.inputs[0])) return std::nullopt;
  const ir::Node& r = g.nodes[h.reshape];
  if (!is_onnx(r, "Reshape") || r.inputs.size() != 2) return std::nullopt;
  h.x = r.inputs[0];
  const ValueFact& xf = facts[h.x];
  if (xf.dtype != DType::F32 || xf.rank != 3 || !xf.dims[2].is_fixed()) return std::nullopt;
  auto target = shape_entries(index, facts, r.inputs[1]);
  if (!target || target->size() != 4) return std::nullopt;
  const bool allowzero = r.attrs.get_int("allowzero", 0) != 0;
  for (int i = 0; i < 2; ++i)
    if (!entry_is(facts, (*target)[i], allowzero, xf.dims[i], {{h.x, i}})) return std::nullopt;
  const ShapeEntry &he = (*target)[2], &de = (*target)[3];
  if (!he.of.empty() || !de.of.empty() || he.value <= 0 || de.value <= 0) return std::nullopt;
  if (he.value * de.value != xf.dims[2].value) return std::nullopt;
  h.heads = he.value;
  h.head_size = de.value;
  return h;
}

// The attention scores: [Div|Mul(c)](MatMul(Q4, K4)) ending in `s`, with the head splits of
// Q and K and the nodes that compute it.
struct Scores {
  std::optional<HeadSplit> q, k;
  double scale = 1.0;
  std::vector<int> nodes;
};

std::optional<Scores> match_scores(const GraphIndex& index, const GraphFacts& facts, const std::string& s) {
  const ir::Graph& g = index.graph();
  Scores out;
  const int ci = index.producer(s);
  if (ci < 0 || !index.single_use(s)) return std::nullopt;
  std::string qk = s;
  if (is_onnx(g.nodes[ci], "Div") || is_onnx(g.nodes[ci], "Mul")) {
    const ir::Node& sn = g.nodes[ci];
    if (sn.inputs.size() != 2) return std::nullopt;
    const bool div = sn.op_type == "Div";
    int side = -1;
    for (int k = 0; k < (div ? 1 : 2); ++k)
      if (scalar_constant(g, sn.inputs[1 - k], 4)) side = k;
    if (side < 0) return std::nullopt;
    const double c = *scalar_constant(g, sn.inputs[1 - side], 4);
    if (div && c == 0.0) return std::nullopt;
    out.scale = div ? 1.0 / c : c;
    qk = sn.inputs[side];
    out.nodes.push_back(ci);
  }
  const int qki = index.producer(qk);
  if (qki < 0 || !index.single_use(qk)) return std::nullopt;
  const ir::Node& qkn = g.nodes[qki];
  if (!is_onnx(qkn, "MatMul") || qkn.inputs.size() != 2) return std::nullopt;
  out.q = match_head_split(index, facts, qkn.inputs[0], {0, 2, 1, 3});
  out.k = match_head_split(index, facts, qkn.inputs[1], {0, 2, 3, 1});
  if (!out.q || !out.k) return std::nullopt;
  out.nodes.insert(out.nodes.end(), {qki, out.q->reshape, out.q->transpose, out.k->reshape, out.k->transpose});
  return out;
}

// Nodes that compute only the output Reshape's shape from `t` (Shape of t and what follows),
// so they can go with the pattern; nullopt when some result is read elsewhere.
std::optional<std::vector<int>> shape_nodes_of(const GraphIndex& index, const std::string& t, int reshape) {
  const ir::Graph& g = index.graph();
  std::vector<int> nodes, stack;
  for (int c : index.consumers(t)) {
    if (c == reshape && g.nodes[c].inputs[0] == t) continue;
    if (!is_onnx(g.nodes[c], "Shape")) return std::nullopt;
    stack.push_back(c);
  }
  std::unordered_set<int> seen;
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (seen.size() > 16) return std::nullopt;
    nodes.push_back(n);
    for (const auto& o : g.nodes[n].outputs) {
      if (o.empty()) continue;
      if (ir::is_graph_output(g, o)) return std::nullopt;
      for (int c : index.consumers(o)) {
        if (c == reshape) {
          if (g.nodes[c].inputs[0] == o) return std::nullopt;
          continue;
        }
        const ir::Node& cn = g.nodes[c];
        if (!cn.domain.empty() || (cn.op_type != "Gather" && cn.op_type != "Unsqueeze" && cn.op_type != "Concat" &&
                                   cn.op_type != "Cast" && cn.op_type != "Squeeze" && cn.op_type != "Slice"))
          return std::nullopt;
        stack.push_back(c);
      }
    }
  }
  return nodes;
}

}  // namespace

Result<int> fuse_attention(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  const int64_t opset = g.opset("");
  return rewrite_all(g, [&](const GraphIndex& index, int si) -> Result<bool> {
    // Anchor: the Softmax.
    const ir::Node& softmax = g.nodes[si];
    if (!is_onnx(softmax, "Softmax") || softmax.inputs.size() != 1 || softmax.outputs.size() != 1) return false;
    const int64_t axis = softmax.attrs.get_int("axis", opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != 3) return false;
    std::vector<int> pattern = {si};

    // Forward: P -> MatMul(P, V4) -> Transpose -> Reshape.
    const std::string& p = softmax.outputs[0];
    if (!index.single_use(p)) return false;
    const int oi = index.consumers(p)[0];
    const ir::Node& pv = g.nodes[oi];
    if (!is_onnx(pv, "MatMul") || pv.inputs.size() != 2 || pv.inputs[0] != p) return false;
    auto v = match_head_split(index, facts, pv.inputs[1], {0, 2, 1, 3});
    if (!v || !index.single_use(pv.outputs[0])) return false;
    const int ti = index.consumers(pv.outputs[0])[0];
    const ir::Node& tr = g.nodes[ti];
    if (!is_onnx(tr, "Transpose") || tr.attrs.get_ints("perm") != std::vector<int64_t>{0, 2, 1, 3}) return false;
    const std::string& t = tr.outputs[0];
    int yi = -1;
    for (int c : index.consumers(t))
      if (is_onnx(g.nodes[c], "Reshape") && g.nodes[c].inputs.size() == 2 && g.nodes[c].inputs[0] == t) yi = c;
    if (yi < 0 || ir::is_graph_output(g, t)) return false;
    const ir::Node& out_reshape = g.nodes[yi];
    auto shape_nodes = shape_nodes_of(index, t, yi);
    if (!shape_nodes) return false;
    pattern.insert(pattern.end(), {oi, v->reshape, v->transpose, ti, yi});
    pattern.insert(pattern.end(), shape_nodes->begin(), shape_nodes->end());

    // Backward: [Add(mask)] <- [Div|Mul(c)] <- MatMul(Q4, K4). With a mask Add, the scores
    // are on whichever side leads back to the MatMul.
    std::optional<Scores> sc = match_scores(index, facts, softmax.inputs[0]);
    std::string mask;
    const int mi = index.producer(softmax.inputs[0]);
    if (!sc && mi >= 0 && is_onnx(g.nodes[mi], "Add") && g.nodes[mi].inputs.size() == 2 &&
        index.single_use(softmax.inputs[0])) {
      const ir::Node& add = g.nodes[mi];
      for (int side = 0; side < 2 && !sc; ++side) {
        sc = match_scores(index, facts, add.inputs[side]);
        if (sc) mask = add.inputs[1 - side];
      }
      pattern.push_back(mi);
    }
    if (!sc) return false;
    const std::optional<HeadSplit>& q = sc->q;
    const std::optional<HeadSplit>& k = sc->k;
    const double scale = sc->scale;
    pattern.insert(pattern.end(), sc->nodes.begin(), sc->nodes.end());

    // Q, K and V agree on heads, sizes, batch and (K, V) sequence.
    if (k->heads != q->heads || v->heads != q->heads || k->head_size != q->head_size) return false;
    const ValueFact &qf = facts[q->x], &kf = facts[k->x], &vf = facts[v->x];
    if (!same_dim(qf.dims[0], kf.dims[0]) || !same_dim(qf.dims[0], vf.dims[0]) || !same_dim(kf.dims[1], vf.dims[1]))
      return false;
    // The three projections must be distinct reshapes (a value split twice would appear twice).
    if (std::unordered_set<int>(pattern.begin(), pattern.end()).size() != pattern.size()) return false;

    // The output reshape merges the heads back: [B, Sq, H * Dv].
    auto target = shape_entries(index, facts, out_reshape.inputs[1]);
    if (!target || target->size() != 3) return false;
    const bool allowzero = out_reshape.attrs.get_int("allowzero", 0) != 0;
    for (int i = 0; i < 2; ++i)
      if (!entry_is(facts, (*target)[i], allowzero, qf.dims[i], {{t, i}, {q->x, i}})) return false;
    if (!(*target)[2].of.empty() || (*target)[2].value != v->heads * v->head_size) return false;

    // The mask must broadcast to [B, H, Sq, Sk] without widening it. Extents that are not
    // provably 1 or equal (a padding mask's [batch, 1, 1, seq] against scores whose batch and
    // seq come through an Expand) are checked by Attention's shape inference at run time,
    // which rejects a mask that would widen the scores: the fused graph then reports an
    // error where the unfused one would have broadcast, and never computes something else.
    if (!mask.empty()) {
      const ValueFact& mf = facts[mask];
      if (mf.dtype != DType::F32 || !mf.has_rank() || mf.rank > 4) return false;
      const DimFact scores[4] = {qf.dims[0], DimFact::fixed(q->heads), qf.dims[1], kf.dims[1]};
      for (int i = 0; i < mf.rank; ++i) {
        const DimFact& d = mf.dims[i];
        const DimFact& want = scores[4 - mf.rank + i];
        if (d.is_fixed() && d.value != 1 && want.is_fixed() && want.value != d.value) return false;
      }
    }

    ir::Node fused;
    fused.name = softmax.name;
    fused.op_type = "Attention";
    fused.domain = "ai.ignis";
    fused.inputs = {q->x, k->x, v->x};
    if (!mask.empty()) fused.inputs.push_back(mask);
    Attribute heads;
    heads.kind = Attribute::Kind::Int;
    heads.i = q->heads;
    fused.attrs.set("num_heads", heads);
    Attribute scale_attr;
    scale_attr.kind = Attribute::Kind::Float;
    scale_attr.f = static_cast<float>(scale);
    fused.attrs.set("scale", scale_attr);
    fused.outputs = {out_reshape.outputs[0]};
    replace_nodes(g, pattern, std::move(fused));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
