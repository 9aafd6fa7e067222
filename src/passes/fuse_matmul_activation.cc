// SPDX-License-Identifier: Apache-2.0
// Folds a bias and an activation into a float32 MatMul:
//   MatMul(A, B) [-> Add(bias)] [-> act]  =>  ai.ignis.FusedMatMul(A, B, bias, activation)
// with act one of match_activation's forms (Gelu after fuse_gelu, Relu, SiLU...). The kernel
// adds the bias to the product and applies act element by element, as the unfused graph does.
// Legality: each folded intermediate feeds only the fused nodes and is not a graph output;
// A is provably float32; the bias is a 1-D float32 constant with as many elements as B's
// (provably fixed) last dimension, which is the product's last dimension when B has rank >= 2,
// so the Add broadcasts the bias along rows and does not change the product's shape.
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> fuse_matmul_activation(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& mm = g.nodes[mi];
    if (!is_onnx(mm, "MatMul") || mm.outputs.size() != 1 || mm.inputs.size() != 2) return false;
    const std::string& m = mm.outputs[0];
    if (facts.dtype(mm.inputs[0]) != DType::F32 || ir::is_graph_output(g, m) || index.consumers(m).empty())
      return false;

    ir::Node fused;
    fused.name = mm.name;
    fused.op_type = "FusedMatMul";
    fused.domain = "ai.ignis";
    fused.inputs = mm.inputs;
    std::vector<int> pattern = {mi};
    std::string out = m;

    const int ai = index.consumers(m)[0];
    const ir::Node& add = g.nodes[ai];
    const ValueFact& b = facts[mm.inputs[1]];
    if (index.single_use(m) && is_onnx(add, "Add") && add.outputs.size() == 1 && b.rank >= 2 &&
        b.last_dim().is_fixed()) {
      const std::string bias = other_input(add, m);
      const Tensor* t = bias.empty() ? nullptr : ir::constant_value(g, bias);
      if (t && t->dtype() == DType::F32 && t->rank() == 1 && t->dim(0) == b.last_dim().value) {
        fused.inputs.push_back(bias);
        pattern.push_back(ai);
        out = add.outputs[0];
      }
    }
    if (auto act = match_activation(index, out)) {
      set_activation(fused, *act);
      pattern.insert(pattern.end(), act->nodes.begin(), act->nodes.end());
      out = act->output;
    }
    if (pattern.size() == 1) return false;
    fused.outputs = {out};
    replace_nodes(g, pattern, std::move(fused));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
