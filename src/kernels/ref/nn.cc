// SPDX-License-Identifier: Apache-2.0
// Entry point of the reference NN kernels; each nn_*.cc file registers its own ops.
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

void register_nn(KernelRegistry& r) {
  register_nn_gemm(r);
  register_nn_conv(r);
  register_nn_pool(r);
  register_nn_norm(r);
  register_nn_resize(r);
  register_nn_einsum(r);
}

}  // namespace ignis::kernels::ref
