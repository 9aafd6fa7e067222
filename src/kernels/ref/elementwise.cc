// SPDX-License-Identifier: Apache-2.0
// Entry point of the elementwise reference kernels; the ops live in elementwise_unary.cc,
// elementwise_binary.cc and elementwise_misc.cc.
#include "kernels/ref/elementwise_internal.h"

namespace ignis::kernels::ref {

void register_elementwise(KernelRegistry& r) {
  register_elementwise_unary(r);
  register_elementwise_binary(r);
  register_elementwise_misc(r);
}

}  // namespace ignis::kernels::ref
