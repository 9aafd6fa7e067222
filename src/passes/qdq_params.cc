// SPDX-License-Identifier: Apache-2.0
#include "passes/qdq_params.h"

#include "ir/rewrite.h"

namespace ignis::passes {

std::optional<QParams> constant_params(const ir::Graph& g, const ir::Node& n) {
  if (n.inputs.size() < 3 || n.inputs[2].empty() || n.attrs.get_int("block_size", 0) != 0) return std::nullopt;
  QParams p;
  p.scale_name = n.inputs[1];
  p.zero_point_name = n.inputs[2];
  p.scale = ir::constant_value(g, p.scale_name);
  p.zero_point = ir::constant_value(g, p.zero_point_name);
  if (!p.scale || !p.zero_point || p.scale->dtype() != DType::F32 || p.scale->rank() > 1) return std::nullopt;
  if (p.zero_point->dtype() != DType::U8 && p.zero_point->dtype() != DType::I8) return std::nullopt;
  if (p.zero_point->numel() != p.scale->numel()) return std::nullopt;
  p.axis = n.attrs.get_int("axis", 1);
  return p;
}

int32_t zero_point_value(const QParams& p, int64_t i) {
  const Tensor& z = *p.zero_point;
  return z.dtype() == DType::U8 ? static_cast<int32_t>(z.data_as<uint8_t>()[i]) : static_cast<int32_t>(z.data_as<int8_t>()[i]);
}

std::optional<std::pair<int, QParams>> per_tensor_dq(const ir::Graph& g, const GraphIndex& index,
                                                     const std::string& value) {
  const int i = index.producer(value);
  if (i < 0 || !is_onnx(g.nodes[i], "DequantizeLinear")) return std::nullopt;
  auto p = constant_params(g, g.nodes[i]);
  if (!p || p->count() != 1) return std::nullopt;
  return std::make_pair(i, *p);
}

}  // namespace ignis::passes
