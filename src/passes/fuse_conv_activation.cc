// SPDX-License-Identifier: Apache-2.0
// Folds what follows a float32 Conv into one ai.ignis.FusedConv:
//   Conv -> act                      => FusedConv(X, W, B, activation)
//   Conv -> Add(Z) [-> act]          => FusedConv(X, W, B, Z, activation)
// with act one of match_activation's forms (Relu, Clip with constant bounds, Sigmoid, SiLU as
// c * Sigmoid(c), HardSigmoid, HardSwish, LeakyRelu, Gelu). The kernel computes the same
// float operations in the same order (conv + bias, + Z, then act), so results match the
// unfused graph up to the activation's own rounding.
// Legality: the Conv's output (and the Add's, when an activation follows) feeds only the
// fused nodes and is not a graph output; the Conv's input is provably float32; Z is provably
// the same shape as the Conv's output, so the Add does not broadcast and the residual is read
// element for element.
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> fuse_conv_activation(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int ci) -> Result<bool> {
    const ir::Node& conv = g.nodes[ci];
    if (!is_onnx(conv, "Conv") || conv.outputs.size() != 1 || conv.inputs.size() < 2 || conv.inputs.size() > 3)
      return false;
    const std::string& c = conv.outputs[0];
    if (facts.dtype(conv.inputs[0]) != DType::F32 || ir::is_graph_output(g, c) || index.consumers(c).empty())
      return false;

    ir::Node fused;
    fused.name = conv.name;
    fused.op_type = "FusedConv";
    fused.domain = "ai.ignis";
    fused.inputs = conv.inputs;
    fused.inputs.resize(3);
    fused.attrs = conv.attrs;
    std::vector<int> pattern = {ci};
    std::string out = c;

    const ir::Node& next = g.nodes[index.consumers(c)[0]];
    if (index.single_use(c) && is_onnx(next, "Add") && next.outputs.size() == 1) {
      const std::string z = other_input(next, c);
      if (!z.empty() && z != c && facts.same_shape(z, c) && facts.same_shape(next.outputs[0], c)) {
        fused.inputs.push_back(z);
        pattern.push_back(index.consumers(c)[0]);
        out = next.outputs[0];
      }
    }
    if (auto act = match_activation(index, out)) {
      set_activation(fused, *act);
      pattern.insert(pattern.end(), act->nodes.begin(), act->nodes.end());
      out = act->output;
    }
    if (pattern.size() == 1) return false;
    while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
    fused.outputs = {out};
    replace_nodes(g, pattern, std::move(fused));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
