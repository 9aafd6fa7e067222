// SPDX-License-Identifier: Apache-2.0
#include "ir/op_schema.h"

namespace ignis::ir {
void register_tensor_schemas(OpSchemaRegistry&) {}
}  // namespace ignis::ir
