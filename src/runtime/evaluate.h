// SPDX-License-Identifier: Apache-2.0
// Evaluates one node on given inputs outside any plan: shape inference, best kernel, run.
// Used by constant folding and by tests that exercise a single op.
#pragma once

#include <vector>

#include "ignis/session.h"
#include "ignis/status.h"
#include "ir/graph.h"
#include "passes/pass.h"

namespace ignis::runtime {

// `inputs` has one entry per node input (null for omitted optional inputs).
Result<std::vector<Tensor>> evaluate_node(const ir::Node& node, int64_t opset, const std::vector<const Tensor*>& inputs);

inline passes::Level pass_level(OptLevel level) {
  switch (level) {
    case OptLevel::Basic: return passes::Level::Basic;
    case OptLevel::Extended: return passes::Level::Extended;
    default: return passes::Level::All;
  }
}

// A PassContext whose evaluator is evaluate_node.
passes::PassContext make_pass_context(Precision precision = Precision::F32);

}  // namespace ignis::runtime
