// SPDX-License-Identifier: Apache-2.0
// The operands of ai.ignis QLinearLookup as bytes, shared by the reference and the x86 kernel.
#pragma once

#include <cstdint>

#include "kernels/kernel.h"

namespace ignis::kernels {

struct LookupOperands {
  const uint8_t* x = nullptr;
  const uint8_t* table = nullptr;  // 256 entries
  uint8_t* y = nullptr;
  int64_t n = 0;
  // y[i] = table[x[i] ^ flip]: an int8 byte's index is its value + 128, the byte with its sign
  // bit flipped.
  uint8_t flip = 0;
};

inline LookupOperands lookup_operands(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  return {.x = static_cast<const uint8_t*>(x.data()),
          .table = static_cast<const uint8_t*>(ctx.input(1).data()),
          .y = static_cast<uint8_t*>(ctx.output(0).data()),
          .n = x.numel(),
          .flip = static_cast<uint8_t>(x.dtype() == DType::I8 ? 0x80 : 0)};
}

}  // namespace ignis::kernels
