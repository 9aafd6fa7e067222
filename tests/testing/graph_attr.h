// SPDX-License-Identifier: Apache-2.0
// A control-flow body as a node attribute, for tests that build ir::Graphs by hand.
#pragma once

#include <memory>
#include <utility>

#include "core/attribute.h"
#include "ir/graph.h"

namespace ignis::testing {

inline Attribute graph_attr(ir::Graph body) {
  Attribute a;
  a.kind = Attribute::Kind::Graph;
  a.graph = std::make_shared<const ir::Graph>(std::move(body));
  return a;
}

}  // namespace ignis::testing
