// SPDX-License-Identifier: Apache-2.0
#include "ir/index_limits.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ignis::ir {

namespace {

// Ops whose output holds only values of input 0 (moved, repeated or cast), so an index range
// that is valid for the output must hold for the input.
bool passes_values_through(const Node& n) {
  static const std::set<std::string> kOps = {"Cast",    "Identity",  "Reshape", "Flatten",
                                             "Squeeze", "Unsqueeze", "Transpose", "Expand"};
  return n.domain.empty() && kOps.count(n.op_type) != 0;
}

// A graph with the scopes around it, innermost first: a body's Gather may index a table
// that an enclosing graph holds.
struct Scope {
  const Graph* graph;
  const Scope* parent;
};

// The initializer `name` as `scope` sees it: its own, or an enclosing graph's where `scope`
// does not define the name at run time.
const Tensor* table_in_scope(const Scope* scope, const std::string& name) {
  for (; scope; scope = scope->parent) {
    const Graph& g = *scope->graph;
    auto it = g.initializers.find(name);
    if (it != g.initializers.end()) return &it->second;
    for (const auto& in : g.inputs)
      if (in.name == name) return nullptr;
    for (const auto& n : g.nodes)
      for (const auto& o : n.outputs)
        if (o == name) return nullptr;
  }
  return nullptr;
}

// The extent indexed by input 1 of a Gather/GatherElements over an initializer; 0 if none.
int64_t indexed_extent(const Node& n, const Scope& scope) {
  if (!n.domain.empty() || (n.op_type != "Gather" && n.op_type != "GatherElements") || n.inputs.size() < 2) return 0;
  const Tensor* table = table_in_scope(&scope, n.inputs[0]);
  if (!table) return 0;
  const int64_t rank = table->rank();
  int64_t axis = n.attrs.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return 0;
  return table->dim(static_cast<int>(axis));
}

// Follows `value` through `scope`'s graph, and into the bodies that read it as a captured
// input, lowering `limit` at each table it indexes.
class IndexWalk {
 public:
  // The smallest extent `value` of the graph `g` indexes; 0 when it indexes no table.
  int64_t limit_of(const Graph& g, const std::string& value) {
    seen_.clear();
    int64_t limit = 0;
    visit(Scope{&g, nullptr}, value, limit);
    return limit;
  }

 private:
  void visit(const Scope& scope, const std::string& value, int64_t& limit) {
    if (!seen_.insert({scope.graph, value}).second) return;
    const auto& uses = consumers(*scope.graph);
    auto it = uses.find(value);
    if (it == uses.end()) return;
    for (const auto& [n, i] : it->second) {
      if (i == 1) {
        const int64_t extent = indexed_extent(*n, scope);
        if (extent > 0) limit = limit == 0 ? extent : std::min(limit, extent);
      }
      if (i == 0 && passes_values_through(*n) && !n->outputs.empty() && !n->outputs[0].empty())
        visit(scope, n->outputs[0], limit);
      const size_t declared = declared_input_count(*n);
      if (i < declared) continue;
      // A captured input: inside the bodies that read it, it keeps its name.
      const std::string captured = outer_scope_names(n->attrs)[i - declared];
      for (const auto& [attr_name, a] : n->attrs.items()) {
        if (a.kind != Attribute::Kind::Graph || !a.graph) continue;
        const auto reads = outer_scope_names(*a.graph);
        if (std::binary_search(reads.begin(), reads.end(), captured)) visit(Scope{a.graph.get(), &scope}, captured, limit);
      }
    }
  }

  using Uses = std::unordered_map<std::string, std::vector<std::pair<const Node*, size_t>>>;

  const Uses& consumers(const Graph& g) {
    auto [it, added] = consumers_.try_emplace(&g);
    if (added)
      for (const auto& n : g.nodes)
        for (size_t i = 0; i < n.inputs.size(); ++i)
          if (!n.inputs[i].empty()) it->second[n.inputs[i]].emplace_back(&n, i);
    return it->second;
  }

  std::map<const Graph*, Uses> consumers_;
  std::set<std::pair<const Graph*, std::string>> seen_;
};

}  // namespace

std::map<std::string, int64_t> gather_index_limits(const Graph& g) {
  std::map<std::string, int64_t> limits;
  IndexWalk walk;
  for (const auto& in : g.inputs) {
    if (!dtype_is_integer(in.dtype)) continue;
    const int64_t limit = walk.limit_of(g, in.name);
    if (limit > 0) limits[in.name] = limit;
  }
  return limits;
}

}  // namespace ignis::ir
