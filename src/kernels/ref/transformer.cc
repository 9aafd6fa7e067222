// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the transformer ops: Attention, RMSNormalization, RotaryEmbedding.
#include "kernels/registry.h"

namespace ignis::kernels::ref {

void register_transformer(KernelRegistry& r) { (void)r; }

}  // namespace ignis::kernels::ref
