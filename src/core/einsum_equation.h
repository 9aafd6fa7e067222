// SPDX-License-Identifier: Apache-2.0
// Einsum equation parsing shared by shape inference and the reference kernel: subscripts
// become label ids per operand axis, ellipses expand into broadcast labels, and the output
// labels follow the explicit "->" part or numpy's implicit rule.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "ignis/shape.h"
#include "ignis/status.h"

namespace ignis {

struct EinsumEquation {
  int num_labels = 0;
  std::vector<std::vector<int>> inputs;  // label of each axis of each operand
  std::vector<int> output;               // label of each output axis
  std::vector<int64_t> label_dims;       // extent of each label; ellipsis dims broadcast
};

// Parses `equation` for operands of the given shapes. Letters are labels; "..." stands for
// the operand's remaining leading axes, which broadcast numpy-style across operands.
// A label repeated within one operand takes that operand's diagonal. Without "->" the output
// is the ellipsis axes followed by the labels used exactly once, in ASCII order.
// InvalidArgument when the equation is malformed or does not match the shapes.
Result<EinsumEquation> parse_einsum(std::string_view equation, std::span<const Shape> inputs);

}  // namespace ignis
