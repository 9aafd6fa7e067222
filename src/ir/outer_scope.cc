// SPDX-License-Identifier: Apache-2.0
#include "ir/outer_scope.h"

#include <memory>
#include <utility>
#include <vector>

namespace ignis::ir {

namespace {

template <typename F>
void for_each_body(const Node& n, F&& f) {
  for (const auto& [name, a] : n.attrs.items())
    if (a.kind == Attribute::Kind::Graph && a.graph) f(*a.graph);
}

// Names defined by `g` itself: inputs, initializers, node outputs.
std::unordered_set<std::string> defined_names(const Graph& g) {
  std::unordered_set<std::string> s;
  for (const auto& in : g.inputs) s.insert(in.name);
  for (const auto& [name, t] : g.initializers) s.insert(name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty()) s.insert(o);
  return s;
}

// True when `name` is defined by a body of `n` or by a graph nested below one.
bool defined_in_bodies(const Node& n, const std::string& name) {
  bool found = false;
  for_each_body(n, [&](const Graph& body) {
    if (found || defined_names(body).count(name)) {
      found = true;
      return;
    }
    for (const auto& inner : body.nodes) found = found || defined_in_bodies(inner, name);
  });
  return found;
}

void collect_names(const Graph& g, std::unordered_set<std::string>& out) {
  for (const auto& in : g.inputs) out.insert(in.name);
  for (const auto& o : g.outputs) out.insert(o.name);
  for (const auto& [name, t] : g.initializers) out.insert(name);
  for (const auto& n : g.nodes) {
    for (const auto& v : n.inputs) out.insert(v);
    for (const auto& v : n.outputs) out.insert(v);
    for_each_body(n, [&](const Graph& body) { collect_names(body, out); });
  }
  out.erase("");
}

// The node's captured inputs rebuilt from what its bodies read now; the bodies read the names
// the node passes after a rename, so the list is the names themselves.
void reset_captured_inputs(Node& n, size_t declared) {
  n.inputs.resize(declared);
  for (auto& name : outer_scope_names(n.attrs)) n.inputs.push_back(std::move(name));
}

// Replaces each body of `n` that reads a key of `renames` by its renamed copy.
void rename_in_bodies(Node& n, const std::unordered_map<std::string, std::string>& renames) {
  std::vector<std::pair<std::string, Attribute>> replaced;
  for (const auto& [attr_name, a] : n.attrs.items()) {
    if (a.kind != Attribute::Kind::Graph || !a.graph) continue;
    bool reads = false;
    for (const auto& name : outer_scope_names(*a.graph)) reads = reads || renames.count(name);
    if (!reads) continue;
    Attribute copy = a;
    copy.graph = std::make_shared<const Graph>(rename_outer_reads(*a.graph, renames));
    replaced.emplace_back(attr_name, std::move(copy));
  }
  for (auto& [attr_name, a] : replaced) n.attrs.set(attr_name, std::move(a));
}

}  // namespace

std::unordered_set<std::string> all_value_names(const Graph& g) {
  std::unordered_set<std::string> names;
  collect_names(g, names);
  return names;
}

std::string fresh_name(std::unordered_set<std::string>& taken, const std::string& base) {
  std::string name = base;
  for (int k = 1; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  taken.insert(name);
  return name;
}

Graph rename_outer_reads(const Graph& body, const std::unordered_map<std::string, std::string>& renames) {
  Graph out = body;
  sync_outer_reads(out);  // nested nodes' captured inputs must name what their bodies read
  const auto defined = defined_names(out);
  std::unordered_map<std::string, std::string> free;
  for (const auto& [from, to] : renames)
    if (!defined.count(from)) free.emplace(from, to);
  if (free.empty()) return out;
  auto rename = [&](std::string& name) {
    auto it = free.find(name);
    if (it != free.end()) name = it->second;
  };
  for (auto& n : out.nodes) {
    const size_t declared = declared_input_count(n);
    const bool has_captured = declared < n.inputs.size();
    for (size_t i = 0; i < declared; ++i) rename(n.inputs[i]);
    if (!has_captured) continue;
    rename_in_bodies(n, free);
    reset_captured_inputs(n, declared);
  }
  for (auto& o : out.outputs) rename(o.name);
  return out;
}

int sync_outer_reads(Graph& g) {
  std::unordered_set<std::string> taken;
  bool have_taken = false;
  std::vector<std::pair<size_t, Node>> identities;  // (position, node) to insert before that node
  int changed = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    const std::vector<std::string> captured = outer_scope_names(n.attrs);
    if (captured.empty() || n.inputs.size() < captured.size()) continue;
    const size_t declared = n.inputs.size() - captured.size();
    std::unordered_map<std::string, std::string> renames;
    for (size_t k = 0; k < captured.size(); ++k) {
      const std::string& from = captured[k];
      const std::string& to = n.inputs[declared + k];
      if (from == to) continue;
      if (!defined_in_bodies(n, to)) {
        renames.emplace(from, to);
        continue;
      }
      // A body defines `to` itself: reading it there would read the body's value.
      if (!have_taken) {
        taken = all_value_names(g);
        have_taken = true;
      }
      Node id;
      id.name = n.name + "/outer_" + from;
      id.op_type = "Identity";
      id.inputs = {to};
      id.outputs = {fresh_name(taken, to)};
      renames.emplace(from, id.outputs[0]);
      identities.emplace_back(i, std::move(id));
    }
    if (renames.empty()) continue;
    rename_in_bodies(n, renames);
    reset_captured_inputs(n, declared);
    ++changed;
  }
  if (!identities.empty()) {
    std::vector<Node> nodes;
    nodes.reserve(g.nodes.size() + identities.size());
    size_t next = 0;
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      for (; next < identities.size() && identities[next].first == i; ++next)
        nodes.push_back(std::move(identities[next].second));
      nodes.push_back(std::move(g.nodes[i]));
    }
    g.nodes = std::move(nodes);
  }
  return changed;
}

}  // namespace ignis::ir
