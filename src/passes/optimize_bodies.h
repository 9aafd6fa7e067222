// SPDX-License-Identifier: Apache-2.0
// Optimizing control-flow bodies (If's branches, Loop's and Scan's body) as graphs of their
// own: the values a body reads from outer scope enter as run-time inputs, or as initializers
// where an enclosing graph holds them as constants, and leave again afterwards.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>

#include "ignis/status.h"
#include "ignis/tensor.h"
#include "ir/graph.h"

namespace ignis::passes {

// The constants a graph's bodies may read from scopes around it: name -> value.
using OuterConstants = std::unordered_map<std::string, Tensor>;

// Runs `optimize` on a working copy of each body of `g`'s nodes, `g`'s own constants and
// `outer` (what encloses `g`) being those it may fold with. `optimize` gets the working copy
// and the constants visible inside it, and returns its rewrites. A body that changed replaces
// the old one; its outputs, declared inputs and the outer names it still reads keep their
// names, and the node's captured inputs are cut to what the body still reads. `g`'s nodes'
// captured inputs must name what their bodies read (ir::sync_outer_reads). Returns the
// rewrites inside bodies; `dropped` counts the captured inputs removed.
Result<int> optimize_bodies(ir::Graph& g, const OuterConstants& outer,
                            const std::function<Result<int>(ir::Graph&, const OuterConstants&)>& optimize,
                            int* dropped);

}  // namespace ignis::passes
