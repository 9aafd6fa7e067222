// SPDX-License-Identifier: Apache-2.0
// Runs one op outside any graph: shape inference from its schema, then the best registered
// kernel. For kernel unit tests; the runtime does the same per node.
#pragma once

#include <string>
#include <vector>

#include "core/attribute.h"
#include "ignis/status.h"
#include "ignis/tensor.h"

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

// Helpers to build inputs and attributes tersely.
Tensor make_tensor_f32(const Shape& shape, const std::vector<float>& values);
Tensor make_tensor_i64(const Shape& shape, const std::vector<int64_t>& values);
Attribute attr_int(int64_t v);
Attribute attr_float(float v);
Attribute attr_ints(std::vector<int64_t> v);
Attribute attr_floats(std::vector<float> v);
Attribute attr_string(std::string v);

}  // namespace ignis::testing
