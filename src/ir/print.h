// SPDX-License-Identifier: Apache-2.0
// Human-readable renderings of a graph.
#pragma once

#include <string>

#include "ir/graph.h"

namespace ignis::ir {

// Graphviz DOT: op nodes as boxes, graph inputs/outputs as ellipses, edges labelled by value.
std::string to_dot(const Graph& g);

}  // namespace ignis::ir
