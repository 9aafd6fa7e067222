// SPDX-License-Identifier: Apache-2.0
#include "ir/rewrite.h"

namespace ignis::ir {

std::unordered_map<std::string, std::vector<int>> consumers(const Graph& g) {
  std::unordered_map<std::string, std::vector<int>> c;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    for (const auto& in : g.nodes[i].inputs)
      if (!in.empty()) c[in].push_back(i);
  return c;
}

std::unordered_map<std::string, int> producers(const Graph& g) {
  std::unordered_map<std::string, int> p;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    for (const auto& out : g.nodes[i].outputs)
      if (!out.empty()) p[out] = i;
  return p;
}

bool is_graph_output(const Graph& g, const std::string& value) {
  for (const auto& o : g.outputs)
    if (o.name == value) return true;
  return false;
}

bool is_graph_input(const Graph& g, const std::string& value) {
  for (const auto& i : g.inputs)
    if (i.name == value) return true;
  return false;
}

const Tensor* constant_value(const Graph& g, const std::string& value) {
  auto it = g.initializers.find(value);
  return it == g.initializers.end() ? nullptr : &it->second;
}

void replace_uses(Graph& g, const std::string& from, const std::string& to) {
  for (auto& n : g.nodes)
    for (auto& in : n.inputs)
      if (in == from) in = to;
}

void remove_nodes(Graph& g, const std::vector<bool>& remove) {
  std::vector<Node> kept;
  kept.reserve(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (!remove[i]) kept.push_back(std::move(g.nodes[i]));
  g.nodes = std::move(kept);
}

int remove_unused_initializers(Graph& g) {
  std::unordered_set<std::string> used;
  for (const auto& n : g.nodes)
    for (const auto& in : n.inputs) used.insert(in);
  for (const auto& o : g.outputs) used.insert(o.name);
  int removed = 0;
  for (auto it = g.initializers.begin(); it != g.initializers.end();) {
    if (!used.count(it->first)) {
      it = g.initializers.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

std::string unique_value_name(const Graph& g, const std::string& base) {
  std::unordered_set<std::string> taken;
  for (const auto& n : g.nodes) {
    taken.insert(n.inputs.begin(), n.inputs.end());
    taken.insert(n.outputs.begin(), n.outputs.end());
  }
  for (const auto& [name, t] : g.initializers) taken.insert(name);
  for (const auto& i : g.inputs) taken.insert(i.name);
  if (!taken.count(base)) return base;
  for (int k = 1;; ++k) {
    std::string candidate = base + "_" + std::to_string(k);
    if (!taken.count(candidate)) return candidate;
  }
}

}  // namespace ignis::ir
