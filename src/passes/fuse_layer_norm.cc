// SPDX-License-Identifier: Apache-2.0
// Recognizes layer normalization over the last axis written out in elementary ops, as
// exporters emit it below opset 17 (and many transformer files in the wild still look):
//   mean = ReduceMean(x, [-1]);  d = x - mean;  var = ReduceMean(d^2, [-1])
//   y = d / Sqrt(var + eps)  [* gamma]  [+ beta]
// and replaces it with one LayerNormalization(x, gamma, beta, axis = -1, epsilon = eps): the
// ONNX op when the model imports opset 17 or newer, ai.ignis.LayerNormalization (the same op)
// otherwise. d^2 may be Pow(d, 2) or Mul(d, d); the axis may be -1 or rank - 1, given as the
// attribute (opset < 18) or the constant second input.
// Legality: x is provably float32 of known rank; eps is a float32 scalar constant; gamma and
// beta are float32 constants of rank 1 whose extent is x's last (so they do not broadcast x
// wider); without gamma, x's last extent must be known to make the ones it is replaced by;
// every intermediate is read only inside the pattern and is not a graph output. The fused op
// computes the statistics in float32 like the unfused ones; results differ by rounding only.
#include <string>
#include <vector>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// A float32 rank-1 constant of `last` entries.
bool is_row_constant(const ir::Graph& g, const std::string& value, const DimFact& last) {
  auto it = g.initializers.find(value);
  if (it == g.initializers.end() || it->second.dtype() != DType::F32 || it->second.rank() != 1) return false;
  return last.is_fixed() ? it->second.dim(0) == last.value : it->second.dim(0) > 1;
}

}  // namespace

Result<int> fuse_layer_norm(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  const bool onnx_op = g.opset("") >= 17;
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& mean_node = g.nodes[mi];
    if (mean_node.inputs.empty()) return false;
    const std::string x = mean_node.inputs[0];
    const ValueFact& xf = facts[x];
    if (xf.dtype != DType::F32 || xf.rank < 1 || !reduces_last_axis(g, mean_node, "ReduceMean", xf.rank)) return false;
    // d = x - mean
    const int si = only_reader(index, mean_node.outputs[0]);
    if (si < 0) return false;
    const ir::Node& sub = g.nodes[si];
    if (!is_onnx(sub, "Sub") || sub.inputs.size() != 2 || sub.inputs[0] != x || sub.inputs[1] != mean_node.outputs[0])
      return false;
    const std::string d = sub.outputs[0];
    // d is read by the square and by the division only.
    int sq = -1, div = -1;
    for (int c : index.consumers(d)) {
      const ir::Node& n = g.nodes[c];
      if (is_onnx(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == d) div = c;
      else if (is_onnx(n, "Pow") || is_onnx(n, "Mul")) sq = c;
    }
    if (sq < 0 || div < 0 || ir::is_graph_output(g, d)) return false;
    const ir::Node& square = g.nodes[sq];
    const bool pow2 = is_onnx(square, "Pow") && square.inputs.size() == 2 && square.inputs[0] == d &&
                      scalar_constant(g, square.inputs[1], xf.rank).value_or(0.0) == 2.0;
    const bool mul2 = is_onnx(square, "Mul") && square.inputs.size() == 2 && square.inputs[0] == d && square.inputs[1] == d;
    if (!pow2 && !mul2) return false;
    const size_t d_reads = index.consumers(d).size();
    if (d_reads != (mul2 ? 3u : 2u)) return false;
    // var = ReduceMean(d^2); v = var + eps; s = Sqrt(v)
    const int vi = only_reader(index, square.outputs[0]);
    if (vi < 0 || !reduces_last_axis(g, g.nodes[vi], "ReduceMean", xf.rank)) return false;
    const int ai = only_reader(index, g.nodes[vi].outputs[0]);
    if (ai < 0 || !is_onnx(g.nodes[ai], "Add") || g.nodes[ai].inputs.size() != 2) return false;
    const ir::Node& add_eps = g.nodes[ai];
    const auto eps = scalar_constant(g, other_input(add_eps, g.nodes[vi].outputs[0]), xf.rank);
    if (!eps || *eps < 0) return false;
    const int qi = only_reader(index, add_eps.outputs[0]);
    if (qi < 0 || !is_onnx(g.nodes[qi], "Sqrt") || g.nodes[div].inputs[1] != g.nodes[qi].outputs[0] ||
        !index.single_use(g.nodes[qi].outputs[0]))
      return false;
    std::vector<int> pattern = {mi, si, sq, vi, ai, qi, div};
    std::string out = g.nodes[div].outputs[0];
    // Optional * gamma, then optional + beta.
    std::string gamma, beta;
    const DimFact last = xf.last_dim();
    if (const int gi = only_reader(index, out); gi >= 0 && is_onnx(g.nodes[gi], "Mul") && g.nodes[gi].inputs.size() == 2) {
      const std::string c = other_input(g.nodes[gi], out);
      if (is_row_constant(g, c, last)) {
        gamma = c;
        pattern.push_back(gi);
        out = g.nodes[gi].outputs[0];
      }
    }
    if (const int bi = only_reader(index, out); bi >= 0 && is_onnx(g.nodes[bi], "Add") && g.nodes[bi].inputs.size() == 2) {
      const std::string c = other_input(g.nodes[bi], out);
      if (is_row_constant(g, c, last)) {
        beta = c;
        pattern.push_back(bi);
        out = g.nodes[bi].outputs[0];
      }
    }
    if (gamma.empty()) {
      if (!last.is_fixed()) return false;
      gamma = mean_node.name + "/ones";
      if (g.initializers.count(gamma)) return false;
      Tensor ones = Tensor::empty(DType::F32, Shape{last.value});
      for (int64_t i = 0; i < last.value; ++i) ones.data_as<float>()[i] = 1.0f;
      g.initializers[gamma] = std::move(ones);
    }

    ir::Node ln;
    ln.name = mean_node.name;
    ln.op_type = "LayerNormalization";
    ln.domain = onnx_op ? "" : "ai.ignis";
    ln.inputs = {x, gamma};
    if (!beta.empty()) ln.inputs.push_back(beta);
    ln.outputs = {out};
    Attribute axis;
    axis.kind = Attribute::Kind::Int;
    axis.i = -1;
    ln.attrs.set("axis", axis);
    Attribute epsilon;
    epsilon.kind = Attribute::Kind::Float;
    epsilon.f = static_cast<float>(*eps);
    ln.attrs.set("epsilon", epsilon);
    replace_nodes(g, pattern, std::move(ln));
    if (!onnx_op) import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
