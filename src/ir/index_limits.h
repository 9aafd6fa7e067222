// SPDX-License-Identifier: Apache-2.0
// Which integer graph inputs are used as indices into constant tables, and how far they may go:
// lets tools generate random inputs that a model accepts (e.g. token_type_ids into 2 rows).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/graph.h"

namespace ignis::ir {

// For each integer graph input that reaches the indices of a Gather or GatherElements whose
// data is an initializer — directly or through ops that only move or retype its values
// (Cast, Identity, Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand) — the smallest
// extent along the gather axis among the tables it indexes: indices in [0, limit) are valid.
// Inputs that index no such table are absent. Tables with a zero extent are ignored. A value
// a control-flow body reads from outer scope is followed into the body, where the table may
// be the body's initializer or an enclosing graph's.
std::map<std::string, int64_t> gather_index_limits(const Graph& g);

}  // namespace ignis::ir
