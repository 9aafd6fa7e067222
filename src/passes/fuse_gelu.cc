// SPDX-License-Identifier: Apache-2.0
// Recognizes GELU written out in elementary ops and replaces it with one Gelu node: the ONNX
// Gelu when the model imports ai.onnx opset 20 or newer, ai.ignis.Gelu otherwise.
//   erf form:   0.5 * x * (1 + Erf(x / sqrt(2)))                       (x * (1/sqrt(2)) too)
//   tanh form:  0.5 * x * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)))   (x^3 as Pow or Mul)
// The final products may be grouped as (x * (1 + f)) * 0.5, (0.5 * x) * (1 + f) or
// x * ((1 + f) * 0.5); all are the same function, which the fused op evaluates in float as
// the unfused ops do, so results differ from the unfused graph by float rounding only.
// Legality: x is provably float32; every constant is a float32 scalar (rank no larger than
// x's, so it does not widen x's shape) with the expected value; every intermediate feeds
// only the next node of the pattern and is not a graph output.
#include <cmath>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

struct Context {
  const ir::Graph& g;
  const GraphIndex& index;
  int max_rank;  // the rank a scalar constant may have without widening x
};

// The node consuming `value` when it is its only use, else -1.
int sole_consumer(const Context& c, const std::string& value) {
  return c.index.single_use(value) ? c.index.consumers(value)[0] : -1;
}

// True when `n` is the ai.onnx binary op `op` of `value` and a scalar constant ~= `k`
// (operands in either order when `commutes`).
bool is_op_with_constant(const Context& c, const ir::Node& n, std::string_view op, const std::string& value,
                         double k, bool commutes) {
  if (!is_onnx(n, op) || n.inputs.size() != 2 || n.outputs.size() != 1) return false;
  std::string other;
  if (n.inputs[0] == value) other = n.inputs[1];
  else if (commutes && n.inputs[1] == value) other = n.inputs[0];
  if (other.empty()) return false;
  auto v = scalar_constant(c.g, other, c.max_rank);
  return v && nearly(*v, k, 1e-5);
}

// From `one_plus` = 1 + f(x): matches the 0.5 * x * (...) tail. Appends its nodes to
// `pattern` and returns the output value, or "" when the tail is not there.
std::string match_tail(const Context& c, const std::string& x, const std::string& one_plus, std::vector<int>& pattern) {
  const int m1 = sole_consumer(c, one_plus);
  if (m1 < 0) return {};
  const ir::Node& mul1 = c.g.nodes[m1];
  if (!is_onnx(mul1, "Mul") || mul1.outputs.size() != 1) return {};
  const std::string other = other_input(mul1, one_plus);
  if (other.empty()) return {};
  if (other == x) {  // (x * (1 + f)) * 0.5
    const int m2 = sole_consumer(c, mul1.outputs[0]);
    if (m2 < 0 || !is_op_with_constant(c, c.g.nodes[m2], "Mul", mul1.outputs[0], 0.5, true)) return {};
    pattern.insert(pattern.end(), {m1, m2});
    return c.g.nodes[m2].outputs[0];
  }
  const int hi = c.index.producer(other);
  if (hi >= 0 && c.index.single_use(other) && is_op_with_constant(c, c.g.nodes[hi], "Mul", x, 0.5, true)) {
    pattern.insert(pattern.end(), {hi, m1});  // (0.5 * x) * (1 + f)
    return mul1.outputs[0];
  }
  if (is_op_with_constant(c, mul1, "Mul", one_plus, 0.5, true)) {  // x * ((1 + f) * 0.5)
    const int m2 = sole_consumer(c, mul1.outputs[0]);
    if (m2 < 0) return {};
    const ir::Node& mul2 = c.g.nodes[m2];
    if (!is_onnx(mul2, "Mul") || mul2.outputs.size() != 1 || other_input(mul2, mul1.outputs[0]) != x) return {};
    pattern.insert(pattern.end(), {m1, m2});
    return mul2.outputs[0];
  }
  return {};
}

// 1 + f where f is the output of node `fi`; returns the Add's output or "".
std::string match_one_plus(const Context& c, int fi, std::vector<int>& pattern) {
  const std::string& f = c.g.nodes[fi].outputs[0];
  const int ai = sole_consumer(c, f);
  if (ai < 0 || !is_op_with_constant(c, c.g.nodes[ai], "Add", f, 1.0, true)) return {};
  pattern.push_back(ai);
  return c.g.nodes[ai].outputs[0];
}

// Erf(x / sqrt(2)) or Erf(x * (1 / sqrt(2))) at node ei; returns x or "".
std::string match_erf_argument(const Context& c, int ei, std::vector<int>& pattern) {
  const std::string& d = c.g.nodes[ei].inputs[0];
  const int di = c.index.producer(d);
  if (di < 0 || !c.index.single_use(d)) return {};
  const ir::Node& dn = c.g.nodes[di];
  if (dn.inputs.size() != 2) return {};
  const std::string& x = dn.inputs[0];
  if (is_op_with_constant(c, dn, "Div", x, std::sqrt(2.0), false) ||
      is_op_with_constant(c, dn, "Mul", x, 1.0 / std::sqrt(2.0), false)) {
    pattern.push_back(di);
    return x;
  }
  if (is_onnx(dn, "Mul") && is_op_with_constant(c, dn, "Mul", dn.inputs[1], 1.0 / std::sqrt(2.0), true)) {
    pattern.push_back(di);
    return dn.inputs[1];
  }
  return {};
}

// Tanh(sqrt(2/pi) * (x + 0.044715 * x^3)) at node ti; returns x or "".
std::string match_tanh_argument(const Context& c, int ti, std::vector<int>& pattern) {
  // u = v * sqrt(2/pi)
  const std::string& u = c.g.nodes[ti].inputs[0];
  const int ui = c.index.producer(u);
  if (ui < 0 || !c.index.single_use(u)) return {};
  const ir::Node& un = c.g.nodes[ui];
  if (!is_onnx(un, "Mul") || un.inputs.size() != 2) return {};
  const double k = std::sqrt(2.0 / M_PI);
  std::string v;
  if (is_op_with_constant(c, un, "Mul", un.inputs[0], k, false)) v = un.inputs[0];
  else if (is_op_with_constant(c, un, "Mul", un.inputs[1], k, true)) v = un.inputs[1];
  if (v.empty()) return {};
  // v = x + w, w = x^3 * 0.044715
  const int vi = c.index.producer(v);
  if (vi < 0 || !c.index.single_use(v) || !is_onnx(c.g.nodes[vi], "Add")) return {};
  const ir::Node& vn = c.g.nodes[vi];
  for (int side = 0; side < 2; ++side) {
    const std::string& x = vn.inputs[side];
    const std::string& w = vn.inputs[1 - side];
    const int wi = c.index.producer(w);
    if (wi < 0 || !c.index.single_use(w) || !is_onnx(c.g.nodes[wi], "Mul")) continue;
    const ir::Node& wn = c.g.nodes[wi];
    for (int ws = 0; ws < 2; ++ws) {
      const std::string& cube = wn.inputs[ws];
      if (!is_op_with_constant(c, wn, "Mul", cube, 0.044715, true)) continue;
      const int pi = c.index.producer(cube);
      if (pi < 0 || !c.index.single_use(cube)) continue;
      const ir::Node& pn = c.g.nodes[pi];
      std::vector<int> cube_nodes;
      if (is_onnx(pn, "Pow") && pn.inputs.size() == 2 && pn.inputs[0] == x) {
        auto e = scalar_constant(c.g, pn.inputs[1], c.max_rank);
        if (!e || *e != 3.0) continue;
        cube_nodes = {pi};
      } else if (is_onnx(pn, "Mul") && pn.inputs.size() == 2) {
        // x * (x * x) or (x * x) * x
        const std::string sq = other_input(pn, x);
        const int si = sq.empty() ? -1 : c.index.producer(sq);
        if (si < 0 || !c.index.single_use(sq)) continue;
        const ir::Node& sn = c.g.nodes[si];
        if (!is_onnx(sn, "Mul") || sn.inputs.size() != 2 || sn.inputs[0] != x || sn.inputs[1] != x) continue;
        cube_nodes = {si, pi};
      } else {
        continue;
      }
      pattern.insert(pattern.end(), cube_nodes.begin(), cube_nodes.end());
      pattern.insert(pattern.end(), {wi, vi, ui});
      return x;
    }
  }
  return {};
}

}  // namespace

Result<int> fuse_gelu(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  const bool onnx_gelu = g.opset("") >= 20;
  return rewrite_all(g, [&](const GraphIndex& index, int fi) -> Result<bool> {
    const ir::Node& f = g.nodes[fi];
    const bool erf = is_onnx(f, "Erf");
    if ((!erf && !is_onnx(f, "Tanh")) || f.inputs.size() != 1 || f.outputs.size() != 1) return false;
    const ValueFact& xf = facts[f.inputs[0]];
    if (xf.dtype != DType::F32) return false;
    const Context c{g, index, std::max(0, xf.rank)};
    std::vector<int> pattern;
    const std::string x = erf ? match_erf_argument(c, fi, pattern) : match_tanh_argument(c, fi, pattern);
    if (x.empty() || facts.dtype(x) != DType::F32 || facts.rank(x) != xf.rank) return false;
    pattern.push_back(fi);
    const std::string one_plus = match_one_plus(c, fi, pattern);
    if (one_plus.empty()) return false;
    const std::string out = match_tail(c, x, one_plus, pattern);
    if (out.empty()) return false;

    ir::Node gelu;
    gelu.name = f.name;
    gelu.op_type = "Gelu";
    gelu.domain = onnx_gelu ? "" : "ai.ignis";
    gelu.inputs = {x};
    gelu.outputs = {out};
    if (!erf) {
      Attribute a;
      a.kind = Attribute::Kind::String;
      a.s = "tanh";
      gelu.attrs.set("approximate", a);
    }
    replace_nodes(g, pattern, std::move(gelu));
    if (!onnx_gelu) import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
