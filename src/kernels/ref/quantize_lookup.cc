// SPDX-License-Identifier: Apache-2.0
// Reference ai.ignis QLinearLookup: a function of a quantized value, given as its 256 results.
#include <cstdint>

#include "kernels/qlinear_lookup.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {
namespace {

// Each byte of X indexes the 256-entry table (from X's type's minimum).
Status qlinear_lookup_kernel(KernelContext& ctx) {
  const LookupOperands o = lookup_operands(ctx);
  for (int64_t i = 0; i < o.n; ++i) o.y[i] = o.table[o.x[i] ^ o.flip];
  return Status::ok();
}

}  // namespace

void register_quantize_lookup(KernelRegistry& r) {
  r.add({.domain = "ai.ignis", .op_type = "QLinearLookup", .since_opset = 1, .types = DTypeSet{DType::U8, DType::I8},
         .id = "ref/qlinearlookup", .fn = qlinear_lookup_kernel});
}

}  // namespace ignis::kernels::ref
