// SPDX-License-Identifier: Apache-2.0
// Replaces an If whose condition is a constant (an initializer, given or folded) with the
// nodes of the branch it always takes, so the rest of the pipeline optimizes them with the
// graph around them and no body runs.
// Legality: If runs exactly the chosen branch on the values it reads, so the branch's nodes
// computed in the enclosing graph give the same values. The branch's own names (node outputs,
// initializers) get names no scope of the graph uses; the values it reads from outer scope
// are the If's captured inputs, position for position; its outputs become the If's: the node
// producing one is renamed to write it, and an output that is an initializer, an outer value
// or a second use of one value is copied by an Identity. Level Basic: standard ops only.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>

#include "ir/outer_scope.h"
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// The branch a constant condition selects, or null when the node is not an If with a
// well-formed constant condition (the runtime reports malformed ones).
std::shared_ptr<const ir::Graph> taken_branch(const ir::Graph& g, const ir::Node& n) {
  if (!is_onnx(n, "If") || n.inputs.empty() || n.inputs[0].empty()) return nullptr;
  const Tensor* cond = ir::constant_value(g, n.inputs[0]);
  if (!cond || cond->dtype() != DType::Bool || cond->numel() != 1) return nullptr;
  const bool value = static_cast<const uint8_t*>(cond->data())[0] != 0;
  const Attribute* a = n.attrs.find(value ? "then_branch" : "else_branch");
  if (!a || a->kind != Attribute::Kind::Graph || !a->graph) return nullptr;
  if (!a->graph->inputs.empty() || a->graph->outputs.size() != n.outputs.size()) return nullptr;
  if (ir::declared_input_count(n) != 1) return nullptr;
  return a->graph;
}

// The nodes that compute `n`'s outputs from `branch`, to take n's place in `g` (which no
// longer holds `n`); adds the branch's initializers to `g` under their new names.
std::vector<ir::Node> inline_branch(ir::Graph& g, const ir::Node& n, const ir::Graph& branch) {
  // New names avoid every name of `g` (and of `n`, out of `g` by now) and of the bodies nested
  // in the branch, which would otherwise read a local value where they read the renamed one.
  std::unordered_set<std::string> taken = ir::all_value_names(g);
  taken.insert(n.inputs.begin(), n.inputs.end());
  taken.insert(n.outputs.begin(), n.outputs.end());
  for (const auto& bn : branch.nodes)
    for (const auto& [attr_name, a] : bn.attrs.items())
      if (a.kind == Attribute::Kind::Graph && a.graph) taken.merge(ir::all_value_names(*a.graph));

  std::unordered_map<std::string, std::string> renamed;  // branch name -> name in g
  const std::vector<std::string> captured = ir::outer_scope_names(n.attrs);
  const size_t declared = n.inputs.size() - captured.size();
  // Only what this branch reads: the other branch may define a name this one reads from outside.
  const std::vector<std::string> reads = ir::outer_scope_names(branch);
  for (size_t k = 0; k < captured.size(); ++k)
    if (std::binary_search(reads.begin(), reads.end(), captured[k])) renamed.emplace(captured[k], n.inputs[declared + k]);

  std::unordered_set<std::string> produced;
  for (const auto& bn : branch.nodes)
    for (const auto& o : bn.outputs)
      if (!o.empty()) produced.insert(o);
  // New names are given in node order, initializers in name order, so they do not depend on
  // hashing.
  std::vector<size_t> copied_outputs;  // outputs an Identity writes
  for (size_t k = 0; k < branch.outputs.size(); ++k) {
    const std::string& out = branch.outputs[k].name;
    if (n.outputs[k].empty()) continue;
    if (produced.count(out) && !renamed.count(out)) renamed.emplace(out, n.outputs[k]);
    else copied_outputs.push_back(k);
  }
  for (const auto& bn : branch.nodes)
    for (const auto& o : bn.outputs)
      if (!o.empty() && !renamed.count(o)) renamed.emplace(o, ir::fresh_name(taken, o));
  std::map<std::string, Tensor> initializers(branch.initializers.begin(), branch.initializers.end());
  for (const auto& [name, t] : initializers) {
    const std::string local = ir::fresh_name(taken, name);
    renamed.emplace(name, local);
    g.initializers[local] = t;
  }
  auto mapped = [&](const std::string& name) {
    auto it = renamed.find(name);
    return it == renamed.end() ? name : it->second;
  };

  std::vector<ir::Node> nodes;
  for (const auto& bn : branch.nodes) {
    ir::Node copy = bn;
    copy.name = n.name + "/" + bn.name;
    // Captured inputs too: position for position they stay what the nested bodies read, and
    // sync_outer_reads then makes those bodies read the new names.
    for (auto& in : copy.inputs)
      if (!in.empty()) in = mapped(in);
    for (auto& o : copy.outputs)
      if (!o.empty()) o = mapped(o);
    nodes.push_back(std::move(copy));
  }
  for (size_t k : copied_outputs) {
    ir::Node id;
    id.name = n.name + "/" + n.outputs[k];
    id.op_type = "Identity";
    id.inputs = {mapped(branch.outputs[k].name)};
    id.outputs = {n.outputs[k]};
    nodes.push_back(std::move(id));
  }
  return nodes;
}

}  // namespace

Result<int> inline_constant_if(ir::Graph& g, const PassContext&) {
  int count = 0;
  // One at a time: each inlining takes names the next must avoid, and may bring in an If
  // whose condition was the branch's constant, which the scan then meets at the same index.
  for (size_t i = 0; i < g.nodes.size();) {
    const std::shared_ptr<const ir::Graph> branch = taken_branch(g, g.nodes[i]);
    if (!branch) {
      ++i;
      continue;
    }
    const ir::Node node = std::move(g.nodes[i]);
    g.nodes.erase(g.nodes.begin() + static_cast<std::ptrdiff_t>(i));
    std::vector<ir::Node> inlined = inline_branch(g, node, *branch);
    g.nodes.insert(g.nodes.begin() + static_cast<std::ptrdiff_t>(i), std::make_move_iterator(inlined.begin()),
                   std::make_move_iterator(inlined.end()));
    ++count;
  }
  if (count) ir::sync_outer_reads(g);
  return count;
}

}  // namespace ignis::passes
