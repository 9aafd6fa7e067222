// SPDX-License-Identifier: Apache-2.0
// Small graph-building steps the quantizers share: fresh initializers, appended nodes, and
// restoring topological order once the rewritten nodes have been appended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attribute.h"
#include "ignis/status.h"
#include "ir/graph.h"

namespace ignis::compress {

constexpr int64_t kOnnxFloat = 1;  // TensorProto.FLOAT, Cast's `to`

Attribute int_attr(int64_t v);

// Adds `t` as an initializer named after `base` (made unique); returns the name used.
std::string add_initializer(ir::Graph& g, const std::string& base, Tensor t);

// Appends a default-domain node and returns it (valid until the next append).
ir::Node& add_node(ir::Graph& g, std::string name, std::string op_type, std::vector<std::string> inputs,
                   std::vector<std::string> outputs);

// Reorders g.nodes so that every node follows the producers of its inputs, as ONNX files
// must be; rewrites append their nodes at the end and rely on this afterwards.
Status sort_nodes(ir::Graph& g);

// The node names of `names` that no node of `g` carries, for "--exclude" typos.
std::vector<std::string> unknown_node_names(const ir::Graph& g, const std::vector<std::string>& names);

}  // namespace ignis::compress
