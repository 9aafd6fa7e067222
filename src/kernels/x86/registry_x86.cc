// SPDX-License-Identifier: Apache-2.0
// The list of optimized x86 kernel families, called from the global registry.
#include "kernels/registry.h"

namespace ignis::kernels::x86 {

void register_all(KernelRegistry&) {}

}  // namespace ignis::kernels::x86
