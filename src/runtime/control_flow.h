// SPDX-License-Identifier: Apache-2.0
// The control-flow kernels (If, Loop, Scan), which run bodies with the runtime.
#pragma once

#include "kernels/registry.h"

namespace ignis::runtime {

void register_control_flow_kernels(kernels::KernelRegistry& r);

}  // namespace ignis::runtime
