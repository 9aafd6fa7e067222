// SPDX-License-Identifier: Apache-2.0
// Keeping a control-flow node's captured inputs (the trailing inputs after the declared ones,
// ir::declared_input_count) and the names its bodies read from outer scope in step, when a
// rewrite renames the values or moves a body's nodes into another graph.
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"

namespace ignis::ir {

// Every value name `g` or a body nested in it defines or reads.
std::unordered_set<std::string> all_value_names(const Graph& g);

// `base`, or `base_1`, `base_2`... : the first not in `taken`, which it is then added to.
std::string fresh_name(std::unordered_set<std::string>& taken, const std::string& base);

// A copy of `body` in which each read of a key of `renames` reads the mapped name instead,
// wherever the name is free: not defined by `body`, nor by a nested body for the reads inside
// it. Nested nodes' captured inputs follow. The mapped names must not be defined in `body` or
// below it (sync_outer_reads checks that before calling).
Graph rename_outer_reads(const Graph& body, const std::unordered_map<std::string, std::string>& renames);

// Where a rewrite renamed a node's captured input (replace_uses does not look into bodies),
// rewrites the node's bodies to read the new name, so that every captured input again names
// the value its bodies read; enclosing scopes (outer_scope_names), the runtime and the exporter
// rely on that. Where a body defines the new name itself, the node reads it through an Identity
// with a fresh name instead. Returns how many nodes changed.
int sync_outer_reads(Graph& g);

}  // namespace ignis::ir
