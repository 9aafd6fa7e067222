// SPDX-License-Identifier: Apache-2.0
// The list of optimized x86 kernel families, called from the global registry, and helpers
// the family files share. Registration runs on every CPU, so this file and the family
// registration functions are built without ISA flags; only the kernels execute AVX2 code.
#include <limits>
#include <string>

#include "core/strings.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

void register_all(KernelRegistry& r) {
  register_nn_gemm(r);
  register_nn_int8(r);
  register_quantize_lookup(r);
  register_nn_qlinear_conv(r);
  register_nn_qlinear_conv_nhwc(r);
  register_nn_cast(r);
  register_nn_matmul_nbits(r);
  register_nn_conv(r);
  register_nn_conv_transpose(r);
  register_nn_conv_blocked(r);
  register_nn_pool(r);
  register_nn_resize(r);
  register_elementwise(r);
  register_transpose(r);
  register_pad(r);
  register_nn_norm(r);
  register_reduce(r);
  register_nn_transformer(r);
  register_nn_recurrent(r);
  register_ml_tree(r);
  register_ml_scaler(r);
  register_concat(r);
}

Result<std::unique_ptr<Kernel>> make_reference_kernel(std::string_view domain, std::string_view op_type,
                                                      const KernelInit& init, DType type) {
  const KernelDef* ref = KernelRegistry::global().reference(domain, op_type, init.opset, type);
  if (!ref) return internal_error(str_cat("no reference kernel for ", op_type, " at opset ", init.opset));
  return make_kernel(*ref, init);
}

GemmEpilogue fused_activation(const AttrMap& attrs) {
  const ActivationSpec a = read_activation(attrs);
  GemmEpilogue e;
  e.act = a.kind;
  e.act_lo = a.lo;
  e.act_hi = a.hi;
  e.act_alpha = a.alpha;
  e.act_beta = a.beta;
  return e;
}

}  // namespace ignis::kernels::x86
