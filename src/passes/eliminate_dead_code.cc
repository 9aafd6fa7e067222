// SPDX-License-Identifier: Apache-2.0
// Removes nodes that no graph output depends on, then initializers nothing reads.
#include <unordered_set>

#include "ir/rewrite.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> eliminate_dead_code(ir::Graph& g, const PassContext&) {
  const auto prod = ir::producers(g);
  std::unordered_set<std::string> live_values;
  std::vector<bool> live(g.nodes.size(), false);
  std::vector<std::string> stack;
  for (const auto& o : g.outputs) stack.push_back(o.name);
  while (!stack.empty()) {
    std::string v = std::move(stack.back());
    stack.pop_back();
    if (!live_values.insert(v).second) continue;
    auto it = prod.find(v);
    if (it == prod.end() || live[it->second]) continue;
    live[it->second] = true;
    for (const auto& in : g.nodes[it->second].inputs)
      if (!in.empty()) stack.push_back(in);
  }
  std::vector<bool> remove(g.nodes.size());
  int count = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    remove[i] = !live[i];
    count += remove[i] ? 1 : 0;
  }
  if (count) ir::remove_nodes(g, remove);
  return count + ir::remove_unused_initializers(g);
}

}  // namespace ignis::passes
