// SPDX-License-Identifier: Apache-2.0
// The constant parameters of QuantizeLinear / DequantizeLinear nodes, as the QDQ passes
// (fuse_qdq_into_qlinear.cc, eliminate_qdq_around_data_movement.cc) match them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ir/graph.h"
#include "passes/match.h"

namespace ignis::passes {

// The constant scale and zero point of a QuantizeLinear / DequantizeLinear node.
struct QParams {
  const Tensor* scale = nullptr;
  const Tensor* zero_point = nullptr;
  std::string scale_name, zero_point_name;
  int64_t axis = 1;
  int64_t count() const { return scale->numel(); }
};

// The node's parameters when its scale is a float32 constant of rank <= 1 and its zero point
// a uint8/int8 constant of as many elements (present: its type names the quantized type),
// without blocks; else nullopt.
std::optional<QParams> constant_params(const ir::Graph& g, const ir::Node& n);

// Zero point i as an integer.
int32_t zero_point_value(const QParams& p, int64_t i);

// The DequantizeLinear producing `value` with constant per-tensor parameters, if any: its
// node index and parameters.
std::optional<std::pair<int, QParams>> per_tensor_dq(const ir::Graph& g, const GraphIndex& index,
                                                     const std::string& value);

}  // namespace ignis::passes
