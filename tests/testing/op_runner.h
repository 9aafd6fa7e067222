// SPDX-License-Identifier: Apache-2.0
// Runs one op outside any graph: shape inference from its schema, then the best registered
// kernel. For kernel unit tests; the runtime does the same per node.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/attribute.h"
#include "ignis/status.h"
#include "ignis/tensor.h"
#include "kernels/kernel.h"

namespace ignis::testing {

struct OpCall {
  std::string op_type;
  std::string domain;               // "" = ai.onnx
  int64_t opset = 17;
  AttrMap attrs;
  std::vector<Tensor> inputs;       // an undefined Tensor marks an omitted optional input
  int num_outputs = 1;
};

// Infers output shapes (with every input value known), allocates outputs, runs the kernel.
Result<std::vector<Tensor>> run_op(const OpCall& call);

// The machinery behind run_op, for tests that pick the kernel themselves: shape inference
// from the op's schema, then `choose(input dtypes)` (null -> Unsupported naming `what`),
// float32 outputs poisoned with NaN, and a `threads`-wide pool when threads > 1. Every
// input is offered to the kernel factory as a constant unless `only_weights_constant`, in
// which case only input 1 is (so prepacking kernels prepack weights, as in a real plan).
using KernelChooser = std::function<const kernels::KernelDef*(const std::vector<DType>& dtypes)>;
Result<std::vector<Tensor>> run_op_with(const OpCall& call, const KernelChooser& choose, const std::string& what,
                                        int threads = 1, bool only_weights_constant = false);

// Helpers to build inputs and attributes tersely.
Tensor make_tensor_f32(const Shape& shape, const std::vector<float>& values);
Tensor make_tensor_i64(const Shape& shape, const std::vector<int64_t>& values);
Tensor make_tensor_str(const Shape& shape, const std::vector<std::string>& values);
Attribute attr_int(int64_t v);
Attribute attr_float(float v);
Attribute attr_ints(std::vector<int64_t> v);
Attribute attr_floats(std::vector<float> v);
Attribute attr_string(std::string v);
Attribute attr_strings(std::vector<std::string> v);
Attribute attr_tensor(Tensor t);

}  // namespace ignis::testing
