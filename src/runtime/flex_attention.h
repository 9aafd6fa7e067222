// SPDX-License-Identifier: Apache-2.0
// The kernel for ai.onnx.preview FlexAttention, which runs its score_mod and prob_mod
// subgraphs with the runtime between the reference stages of src/kernels/ref/transformer_flex.h.
#pragma once

#include "kernels/registry.h"

namespace ignis::runtime {

void register_flex_attention_kernels(kernels::KernelRegistry& r);

}  // namespace ignis::runtime
