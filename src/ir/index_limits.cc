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

// The extent indexed by input 1 of a Gather/GatherElements over an initializer; 0 if none.
int64_t indexed_extent(const Node& n, const Graph& g) {
  if (!n.domain.empty() || (n.op_type != "Gather" && n.op_type != "GatherElements") || n.inputs.size() < 2) return 0;
  auto table = g.initializers.find(n.inputs[0]);
  if (table == g.initializers.end()) return 0;
  const int64_t rank = table->second.rank();
  int64_t axis = n.attrs.get_int("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return 0;
  return table->second.dim(static_cast<int>(axis));
}

}  // namespace

std::map<std::string, int64_t> gather_index_limits(const Graph& g) {
  std::unordered_map<std::string, std::vector<std::pair<const Node*, size_t>>> consumers;
  for (const auto& n : g.nodes)
    for (size_t i = 0; i < n.inputs.size(); ++i)
      if (!n.inputs[i].empty()) consumers[n.inputs[i]].emplace_back(&n, i);

  std::map<std::string, int64_t> limits;
  for (const auto& in : g.inputs) {
    if (!dtype_is_integer(in.dtype)) continue;
    int64_t limit = 0;  // 0: no table found yet
    std::vector<std::string> pending = {in.name};
    std::set<std::string> seen = {in.name};
    while (!pending.empty()) {
      const std::string value = std::move(pending.back());
      pending.pop_back();
      auto it = consumers.find(value);
      if (it == consumers.end()) continue;
      for (const auto& use : it->second) {
        const Node& n = *use.first;
        if (use.second == 1) {
          const int64_t extent = indexed_extent(n, g);
          if (extent > 0) limit = limit == 0 ? extent : std::min(limit, extent);
        } else if (use.second == 0 && passes_values_through(n) && !n.outputs.empty() && !n.outputs[0].empty() &&
                   seen.insert(n.outputs[0]).second) {
          pending.push_back(n.outputs[0]);
        }
      }
    }
    if (limit > 0) limits[in.name] = limit;
  }
  return limits;
}

}  // namespace ignis::ir
