// SPDX-License-Identifier: Apache-2.0
// Schemas of the ai.ignis fused ops produced by the graph optimizer (docs/ops_ai_ignis.md).
#include "ir/op_schema.h"

namespace ignis::ir {

void register_fused_schemas(OpSchemaRegistry&) {}

}  // namespace ignis::ir
