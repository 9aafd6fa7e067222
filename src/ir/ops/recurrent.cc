// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the recurrent ops: LSTM, GRU, RNN.
#include "ir/op_schema.h"

namespace ignis::ir {

void register_recurrent_schemas(OpSchemaRegistry& r) { (void)r; }

}  // namespace ignis::ir
