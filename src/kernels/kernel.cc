// SPDX-License-Identifier: Apache-2.0
// Out-of-line members of Kernel (kernel.h explains why they are not inline).
#include "kernels/kernel.h"

namespace ignis::kernels {

Kernel::~Kernel() = default;

bool Kernel::uses_constant_data(int input) const {
  (void)input;
  return true;
}

}  // namespace ignis::kernels
