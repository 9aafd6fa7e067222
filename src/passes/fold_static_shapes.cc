// SPDX-License-Identifier: Apache-2.0
// Replaces Shape and Size of a value whose extents are fixed (graph_facts) with int64
// initializers, so the arithmetic on them (Gather, Concat, Mul...) folds to constants in
// fold_constants and the saved model carries the static shapes. Level Basic: the output is
// plain initializers.
// Legality: a fixed extent is the same on every run of a valid model. Symbolic extents stay
// symbolic: Shape folds only when every extent it returns (those in [start, end)) is fixed,
// Size only when all are. A Shape or Size whose output is a graph output stays.
#include <algorithm>
#include <optional>

#include "ir/rewrite.h"
#include "passes/graph_facts.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// The extents Shape returns (start/end from opset 15: negative counts from the back,
// both clamped to [0, rank]), or nullopt when one of them is not fixed.
std::optional<std::vector<int64_t>> static_shape(const ir::Node& n, const ValueFact& x) {
  const int64_t rank = x.rank;
  auto clamp_axis = [&](int64_t a) { return std::clamp<int64_t>(a < 0 ? a + rank : a, 0, rank); };
  const int64_t start = clamp_axis(n.attrs.get_int("start", 0));
  const int64_t end = clamp_axis(n.attrs.get_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t i = start; i < end; ++i) {
    if (!x.dims[i].is_fixed()) return std::nullopt;
    dims.push_back(x.dims[i].value);
  }
  return dims;
}

}  // namespace

Result<int> fold_static_shapes(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  std::vector<bool> remove(g.nodes.size(), false);
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const ir::Node& n = g.nodes[i];
    if (!n.domain.empty() || (n.op_type != "Shape" && n.op_type != "Size")) continue;
    if (n.inputs.size() != 1 || n.inputs[0].empty() || n.outputs.size() != 1 || n.outputs[0].empty()) continue;
    if (ir::is_graph_output(g, n.outputs[0])) continue;
    const ValueFact& x = facts[n.inputs[0]];
    if (!x.has_rank()) continue;
    Tensor t;
    if (n.op_type == "Shape") {
      auto dims = static_shape(n, x);
      if (!dims) continue;
      t = Tensor::empty(DType::I64, Shape{static_cast<int64_t>(dims->size())});
      std::copy(dims->begin(), dims->end(), t.data_as<int64_t>());
    } else {
      int64_t size = 1;
      bool fixed = true;
      for (const auto& d : x.dims) {
        fixed &= d.is_fixed();
        size *= d.is_fixed() ? d.value : 1;
      }
      if (!fixed) continue;
      t = Tensor::empty(DType::I64, Shape{});
      t.data_as<int64_t>()[0] = size;
    }
    g.initializers[n.outputs[0]] = std::move(t);
    remove[i] = true;
    ++count;
  }
  if (count) ir::remove_nodes(g, remove);
  return count;
}

}  // namespace ignis::passes
