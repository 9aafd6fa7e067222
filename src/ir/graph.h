// SPDX-License-Identifier: Apache-2.0
// The in-memory model: nodes wired by value names, initializers, declared inputs/outputs.
// Independent of protobuf; src/onnx/ converts to and from ONNX.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/attribute.h"
#include "ignis/session.h"
#include "ignis/status.h"
#include "ignis/tensor.h"

namespace ignis::ir {

struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain ("ai.onnx" is normalized to "")
  std::vector<std::string> inputs;   // "" marks an omitted optional input
  std::vector<std::string> outputs;  // "" marks an omitted optional output
  AttrMap attrs;

  // "node 'conv_3' (Conv)" — the prefix every error about this node starts with.
  std::string label() const;
};

struct Graph {
  std::string name;
  int64_t ir_version = 0;
  std::string producer;
  std::map<std::string, int64_t> opsets;  // domain -> version; "" is ai.onnx
  std::vector<Node> nodes;
  std::unordered_map<std::string, Tensor> initializers;
  std::vector<ValueInfo> inputs;   // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;

  // Opset version of `domain`, or 0 when the model does not import it.
  int64_t opset(const std::string& domain) const;
};

// The names a node's subgraphs (graph attributes, nested ones included) read from enclosing
// scopes: read by a subgraph node but neither a subgraph input, initializer nor node output.
// Sorted and unique. The importer appends them to the node's inputs after the declared ones,
// in this order, so the outer graph's ordering, liveness and renaming see them; inside the
// subgraphs they keep these names.
std::vector<std::string> outer_scope_names(const AttrMap& attrs);
// The same for one body graph.
std::vector<std::string> outer_scope_names(const Graph& body);

// Inputs of `n` as the ONNX node declares them: all but the trailing outer-scope values.
size_t declared_input_count(const Node& n);

// Node indices in an order where every node comes after the producers of its inputs.
// Fails naming the nodes involved when the graph has a cycle or reads an undefined value.
Result<std::vector<int>> topological_order(const Graph& g);

// Structural checks: unique value producers, defined inputs, declared outputs produced.
Status verify(const Graph& g);

}  // namespace ignis::ir
