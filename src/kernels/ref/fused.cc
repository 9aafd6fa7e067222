// SPDX-License-Identifier: Apache-2.0
// Reference kernels of the ai.ignis fused ops.
#include "kernels/registry.h"

namespace ignis::kernels::ref {

void register_fused(KernelRegistry&) {}

}  // namespace ignis::kernels::ref
