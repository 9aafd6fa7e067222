// SPDX-License-Identifier: Apache-2.0
// The list of optimized x86 kernel families, called from the global registry.
// Registration runs on every CPU, so this file and the family registration functions are
// built without ISA flags; only the kernels themselves execute AVX2 code.
#include "core/strings.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

void register_all(KernelRegistry& r) {
  register_nn_gemm(r);
  register_nn_conv(r);
}

Result<std::unique_ptr<Kernel>> make_reference_kernel(std::string_view op_type, const KernelInit& init) {
  for (const KernelDef& d : KernelRegistry::global().all()) {
    if (d.domain.empty() && d.op_type == op_type && d.isa == Isa::None && d.backend == Backend::Cpu &&
        d.types.contains(DType::F32) && init.opset >= d.since_opset && init.opset <= d.until_opset)
      return make_kernel(d, init);
  }
  return internal_error(str_cat("no reference kernel for ", op_type, " at opset ", init.opset));
}

}  // namespace ignis::kernels::x86
