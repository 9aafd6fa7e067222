// SPDX-License-Identifier: Apache-2.0
// Graph-editing helpers for passes. Passes edit the graph only through these, never by
// splicing edge lists by hand, so invariants (single producer, outputs kept) hold.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/graph.h"

namespace ignis::ir {

// Where each value is read: value name -> indices of consuming nodes (one entry per use).
std::unordered_map<std::string, std::vector<int>> consumers(const Graph& g);
// Value name -> index of the node that produces it.
std::unordered_map<std::string, int> producers(const Graph& g);

bool is_graph_output(const Graph& g, const std::string& value);
bool is_graph_input(const Graph& g, const std::string& value);
// The initializer named `value`, or nullptr.
const Tensor* constant_value(const Graph& g, const std::string& value);

// Every node input reading `from` reads `to` instead. Graph outputs are not renamed.
void replace_uses(Graph& g, const std::string& from, const std::string& to);

// Removes the nodes whose flag is set, keeping the order of the rest.
void remove_nodes(Graph& g, const std::vector<bool>& remove);

// Drops initializers that no node reads and that are not graph outputs.
int remove_unused_initializers(Graph& g);

// A value name not used anywhere in the graph, derived from `base`.
std::string unique_value_name(const Graph& g, const std::string& base);

}  // namespace ignis::ir
