// SPDX-License-Identifier: Apache-2.0
// Removes Identity, and Dropout in inference form (mask unused, not training): consumers
// read the input directly. A node whose output is a graph output stays, so the model's
// interface keeps its names.
#include "ir/rewrite.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {
bool is_inference_dropout(const ir::Graph& g, const ir::Node& n,
                          const std::unordered_map<std::string, std::vector<int>>& uses) {
  if (n.op_type != "Dropout") return false;
  if (n.outputs.size() > 1 && !n.outputs[1].empty() && (uses.count(n.outputs[1]) || ir::is_graph_output(g, n.outputs[1])))
    return false;  // the mask is read
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const Tensor* training = ir::constant_value(g, n.inputs[2]);
    if (!training || training->numel() != 1 || static_cast<const uint8_t*>(training->data())[0] != 0) return false;
  }
  return n.attrs.get_int("is_test", 1) != 0 || g.opset("") >= 7;
}
}  // namespace

Result<int> eliminate_identity(ir::Graph& g, const PassContext&) {
  const auto uses = ir::consumers(g);
  std::vector<bool> remove(g.nodes.size(), false);
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    ir::Node& n = g.nodes[i];
    if (!n.domain.empty() || n.inputs.empty() || n.inputs[0].empty() || n.outputs.empty()) continue;
    if (n.op_type != "Identity" && !is_inference_dropout(g, n, uses)) continue;
    if (ir::is_graph_output(g, n.outputs[0])) continue;
    const std::string from = n.outputs[0], to = n.inputs[0];
    ir::replace_uses(g, from, to);
    remove[i] = true;
    ++count;
  }
  if (count) ir::remove_nodes(g, remove);
  return count;
}

}  // namespace ignis::passes
