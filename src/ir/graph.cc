// SPDX-License-Identifier: Apache-2.0
#include "ir/graph.h"

#include <queue>
#include <set>
#include <unordered_set>

#include "core/strings.h"

namespace ignis::ir {

std::string Node::label() const {
  std::string dom = domain.empty() ? "" : domain + ".";
  return str_cat("node '", name, "' (", dom, op_type, ")");
}

int64_t Graph::opset(const std::string& domain) const {
  auto it = opsets.find(domain);
  return it == opsets.end() ? 0 : it->second;
}

namespace {

// Adds to `out` the names `g` reads without defining them.
void collect_outer_reads(const Graph& g, std::set<std::string>& out) {
  std::set<std::string> defined;
  for (const auto& in : g.inputs) defined.insert(in.name);
  for (const auto& [name, t] : g.initializers) defined.insert(name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs) defined.insert(o);
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name)) out.insert(name);
  };
  for (const auto& n : g.nodes) {
    for (size_t i = 0; i < declared_input_count(n); ++i) read(n.inputs[i]);
    for (const auto& name : outer_scope_names(n.attrs)) read(name);
  }
  for (const auto& o : g.outputs) read(o.name);
}

}  // namespace

std::vector<std::string> outer_scope_names(const AttrMap& attrs) {
  std::set<std::string> names;
  for (const auto& [name, a] : attrs.items())
    if (a.kind == Attribute::Kind::Graph && a.graph) collect_outer_reads(*a.graph, names);
  return {names.begin(), names.end()};
}

std::vector<std::string> outer_scope_names(const Graph& body) {
  std::set<std::string> names;
  collect_outer_reads(body, names);
  return {names.begin(), names.end()};
}

size_t declared_input_count(const Node& n) {
  const size_t captured = outer_scope_names(n.attrs).size();
  return n.inputs.size() >= captured ? n.inputs.size() - captured : 0;
}

namespace {

// Values available before any node runs: graph inputs and initializers.
std::unordered_set<std::string> source_values(const Graph& g) {
  std::unordered_set<std::string> s;
  for (const auto& in : g.inputs) s.insert(in.name);
  for (const auto& [name, t] : g.initializers) s.insert(name);
  return s;
}
}  // namespace

Result<std::vector<int>> topological_order(const Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : g.nodes[i].outputs)
      if (!o.empty()) producer[o] = i;
  const auto sources = source_values(g);

  std::vector<int> pending(n, 0);
  std::vector<std::vector<int>> consumers(n);
  for (int i = 0; i < n; ++i) {
    std::unordered_set<int> deps;
    for (const auto& in : g.nodes[i].inputs) {
      if (in.empty() || sources.count(in)) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return invalid_model(str_cat(g.nodes[i].label(), ": input '", in,
                                     "' is not a graph input, an initializer, or any node's output"));
      deps.insert(it->second);
    }
    pending[i] = static_cast<int>(deps.size());
    for (int d : deps) consumers[d].push_back(i);
  }
  // Kahn's algorithm; the min-heap keeps the model's own order when it is already valid.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(i);
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int c : consumers[i])
      if (--pending[c] == 0) ready.push(c);
  }
  if (static_cast<int>(order.size()) != n) {
    std::vector<std::string> stuck;
    for (int i = 0; i < n && stuck.size() < 8; ++i)
      if (pending[i] > 0) stuck.push_back("'" + g.nodes[i].name + "'");
    return invalid_model(str_cat("graph has a cycle through nodes ", str_join(stuck)));
  }
  return order;
}

Status verify(const Graph& g) {
  std::unordered_set<std::string> defined = source_values(g);
  for (const auto& node : g.nodes) {
    for (const auto& o : node.outputs) {
      if (o.empty()) continue;
      if (!defined.insert(o).second)
        return invalid_model(str_cat(node.label(), ": output '", o, "' is already defined elsewhere"));
    }
  }
  for (const auto& out : g.outputs)
    if (!defined.count(out.name))
      return invalid_model(str_cat("graph output '", out.name, "' is not produced by any node"));
  return topological_order(g).status();
}

}  // namespace ignis::ir
