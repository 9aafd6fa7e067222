// SPDX-License-Identifier: Apache-2.0
#include "runtime/model.h"

#include <map>

#include "core/strings.h"
#include "kernels/registry.h"

namespace ignis::runtime {

Result<std::shared_ptr<Model>> build_model(ir::Graph graph) {
  auto m = std::make_shared<Model>();
  m->graph = std::move(graph);
  const ir::Graph& g = m->graph;
  IGNIS_RETURN_IF_ERROR(ir::verify(g));
  IGNIS_ASSIGN_OR_RETURN(auto order, ir::topological_order(g));

  auto id_of = [&](const std::string& name) {
    auto [it, inserted] = m->value_ids.emplace(name, static_cast<int>(m->value_names.size()));
    if (inserted) {
      m->value_names.push_back(name);
      m->initializers.push_back(nullptr);
    }
    return it->second;
  };
  for (const auto& [name, t] : g.initializers) m->initializers[id_of(name)] = &t;
  for (const auto& in : g.inputs) m->graph_inputs.push_back(id_of(in.name));

  // Unsupported ops, grouped: "Foo (opset 13): 'a', 'b'".
  std::map<std::string, std::vector<std::string>> missing;
  const auto& schemas = ir::OpSchemaRegistry::global();
  const auto& kernels = kernels::KernelRegistry::global();
  for (int idx : order) {
    const ir::Node& n = g.nodes[idx];
    NodeInfo info;
    info.node = &n;
    info.opset = g.opset(n.domain);
    if (info.opset == 0 && !n.domain.empty())
      return invalid_model(str_cat(n.label(), ": domain '", n.domain, "' is not in the model's opset imports"));
    info.schema = schemas.find(n.domain, n.op_type, info.opset);
    if (!info.schema || !kernels.has_op(n.domain, n.op_type, info.opset)) {
      std::string key = str_cat(n.domain.empty() ? "" : n.domain + ".", n.op_type, " (opset ", info.opset, ")");
      missing[key].push_back("'" + n.name + "'");
      continue;
    }
    if (info.schema->check) {
      const Status s = info.schema->check(n.attrs, info.opset);
      if (!s)
        return Status(s.code(), str_cat("node '", n.name, "' (", n.domain.empty() ? "" : n.domain + ".", n.op_type,
                                        ", opset ", info.opset, "): ", s.message()));
    }
    for (const auto& in : n.inputs) info.inputs.push_back(in.empty() ? -1 : id_of(in));
    for (const auto& out : n.outputs) info.outputs.push_back(out.empty() ? -1 : id_of(out));
    m->nodes.push_back(std::move(info));
  }
  if (!missing.empty()) {
    std::vector<std::string> parts;
    for (auto& [op, nodes] : missing) {
      if (nodes.size() > 5) {
        const size_t more = nodes.size() - 5;
        nodes.resize(5);
        nodes.push_back(str_cat("and ", more, " more"));
      }
      parts.push_back(str_cat(op, " at nodes ", str_join(nodes)));
    }
    return unsupported(str_cat("unsupported ops: ", str_join(parts, "; ")));
  }
  for (const auto& out : g.outputs) m->graph_outputs.push_back(id_of(out.name));

  m->last_use.assign(m->value_names.size(), -1);
  for (int i = 0; i < static_cast<int>(m->nodes.size()); ++i)
    for (int v : m->nodes[i].inputs)
      if (v >= 0) m->last_use[v] = i;
  return m;
}

void release_initializer_data(Model& model, int value) {
  auto it = model.graph.initializers.find(model.value_names[value]);
  if (it == model.graph.initializers.end()) return;
  Tensor& t = it->second;
  t = Tensor::view(t.dtype(), t.shape(), static_cast<const void*>(nullptr));
}

}  // namespace ignis::runtime
