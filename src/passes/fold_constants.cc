// SPDX-License-Identifier: Apache-2.0
// Evaluates nodes whose inputs are all initializers and stores their results as
// initializers: shape arithmetic, positional encodings, weight transposes and casts.
// Legality: the op must be deterministic; results larger than kMaxFoldedElements stay
// computed at run time so the saved model does not balloon.
#include <unordered_set>

#include "ir/rewrite.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {
constexpr int64_t kMaxFoldedElements = int64_t{1} << 24;

bool is_deterministic(const ir::Node& n) {
  static const std::unordered_set<std::string> kRandom = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                          "RandomUniformLike", "Multinomial", "Bernoulli"};
  return !kRandom.count(n.op_type);
}
}  // namespace

Result<int> fold_constants(ir::Graph& g, const PassContext& ctx) {
  if (!ctx.evaluate) return 0;
  IGNIS_ASSIGN_OR_RETURN(auto order, ir::topological_order(g));
  std::vector<bool> remove(g.nodes.size(), false);
  int count = 0;
  for (int idx : order) {
    const ir::Node& n = g.nodes[idx];
    if (!is_deterministic(n) || n.inputs.empty()) continue;
    std::vector<const Tensor*> inputs;
    bool all_constant = true;
    for (const auto& in : n.inputs) {
      if (in.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      const Tensor* t = ir::constant_value(g, in);
      if (!t) {
        all_constant = false;
        break;
      }
      inputs.push_back(t);
    }
    if (!all_constant) continue;
    bool output_is_interface = false;
    for (const auto& o : n.outputs) output_is_interface |= !o.empty() && ir::is_graph_output(g, o);
    if (output_is_interface) continue;
    auto results = ctx.evaluate(n, g.opset(n.domain), inputs);
    if (!results) continue;  // leave it to run time, where the error (if any) is reported with context
    int64_t elements = 0;
    for (const auto& t : *results) elements += t.numel();
    if (elements > kMaxFoldedElements) continue;
    for (size_t o = 0; o < n.outputs.size() && o < results->size(); ++o)
      if (!n.outputs[o].empty()) g.initializers[n.outputs[o]] = (*results)[o];
    remove[idx] = true;
    ++count;
  }
  if (count) ir::remove_nodes(g, remove);
  return count;
}

}  // namespace ignis::passes
