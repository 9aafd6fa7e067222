// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the recurrent ops: LSTM, GRU, RNN.
#include "kernels/registry.h"

namespace ignis::kernels::ref {

void register_recurrent(KernelRegistry& r) { (void)r; }

}  // namespace ignis::kernels::ref
