// SPDX-License-Identifier: Apache-2.0
// Graph-building helpers of the quantizers.
#include "compress/graph_edit.h"

#include <unordered_set>
#include <utility>

#include "ir/rewrite.h"

namespace ignis::compress {

Attribute int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

std::string add_initializer(ir::Graph& g, const std::string& base, Tensor t) {
  std::string name = ir::unique_value_name(g, base);
  g.initializers.emplace(name, std::move(t));
  return name;
}

ir::Node& add_node(ir::Graph& g, std::string name, std::string op_type, std::vector<std::string> inputs,
                   std::vector<std::string> outputs) {
  ir::Node& n = g.nodes.emplace_back();
  n.name = std::move(name);
  n.op_type = std::move(op_type);
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

Status sort_nodes(ir::Graph& g) {
  IGNIS_ASSIGN_OR_RETURN(std::vector<int> order, ir::topological_order(g));
  std::vector<ir::Node> sorted;
  sorted.reserve(g.nodes.size());
  for (int i : order) sorted.push_back(std::move(g.nodes[static_cast<size_t>(i)]));
  g.nodes = std::move(sorted);
  return Status::ok();
}

std::vector<std::string> unknown_node_names(const ir::Graph& g, const std::vector<std::string>& names) {
  std::unordered_set<std::string> present;
  for (const auto& n : g.nodes) present.insert(n.name);
  std::vector<std::string> unknown;
  for (const auto& name : names)
    if (!present.count(name)) unknown.push_back(name);
  return unknown;
}

}  // namespace ignis::compress
