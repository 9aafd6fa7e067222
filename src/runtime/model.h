// SPDX-License-Identifier: Apache-2.0
// A verified graph indexed for execution: values numbered, nodes in topological order,
// every op checked against the schema and kernel registries.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/graph.h"
#include "ir/op_schema.h"

namespace ignis::runtime {

struct NodeInfo {
  const ir::Node* node = nullptr;
  const ir::OpSchema* schema = nullptr;
  int64_t opset = 0;
  std::vector<int> inputs;   // value ids; -1 for an omitted optional input
  std::vector<int> outputs;  // value ids; -1 for an omitted optional output
};

struct Model {
  ir::Graph graph;
  std::vector<std::string> value_names;
  std::unordered_map<std::string, int> value_ids;
  std::vector<const Tensor*> initializers;  // per value id; null when not an initializer
  std::vector<int> graph_inputs;            // value ids, in graph.inputs order
  std::vector<int> graph_outputs;           // value ids, in graph.outputs order
  std::vector<NodeInfo> nodes;              // topological order
  std::vector<int> last_use;                // per value: last node index reading it, -1 if none
  Precision precision = Precision::F32;     // SessionOptions::precision, passed to every kernel
};

// Verifies the graph and checks every node against the registries. Unsupported ops are
// reported all at once, grouped by op type with the node names.
Result<std::shared_ptr<Model>> build_model(ir::Graph graph);

// Frees the data of initializer `value`, keeping its dtype and shape for shape inference (its
// data pointer becomes null). For weights that only kernels holding their own copy read
// (PlanOptions::on_initializer_unused); never while a run may read the model.
void release_initializer_data(Model& model, int value);

}  // namespace ignis::runtime
