// SPDX-License-Identifier: Apache-2.0
// Recognizes LeakyRelu written as a maximum (tf2onnx's form) and replaces it with one node:
//   Max(x, Mul(x, a)) = LeakyRelu(x, alpha = a)     operands of Max and of Mul in either order
// Algebra, for a constant 0 < a < 1: x >= 0 gives a * x <= x, x < 0 gives a * x >= x (float
// rounding is monotone, so this holds for the rounded product too), so the maximum is x where
// x >= 0 and a * x where x < 0, which is LeakyRelu. Both compute a * x in float32, so the
// results agree bit for bit, NaN, infinities and signed zeros included.
// Legality: opset 7 or newer (no legacy broadcast attributes), x provably float32, a a float32
// scalar of rank no larger than x's (the Mul does not widen x's shape). The Mul goes too when
// the Max is its only reader.
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> fuse_leaky_relu(ir::Graph& g, const PassContext&) {
  if (g.opset("") < 7) return 0;
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& max = g.nodes[mi];
    if (!is_onnx(max, "Max") || max.inputs.size() != 2 || max.outputs.size() != 1) return false;
    for (int side = 0; side < 2; ++side) {
      const std::string& x = max.inputs[side];
      const std::string& m = max.inputs[1 - side];
      const int pi = index.producer(m);
      if (pi < 0 || facts.dtype(x) != DType::F32) continue;
      const ir::Node& mul = g.nodes[pi];
      if (!is_onnx(mul, "Mul") || mul.outputs.size() != 1) continue;
      const std::string a = other_input(mul, x);
      if (a.empty() || a == x) continue;
      const auto alpha = scalar_constant(g, a, std::max(0, facts.rank(x)));
      if (!alpha || !(*alpha > 0.0 && *alpha < 1.0)) continue;

      ir::Node leaky;
      leaky.name = max.name;
      leaky.op_type = "LeakyRelu";
      leaky.inputs = {x};
      leaky.outputs = max.outputs;
      Attribute attr;
      attr.kind = Attribute::Kind::Float;
      attr.f = static_cast<float>(*alpha);
      leaky.attrs.set("alpha", attr);
      std::vector<int> pattern = {mi};
      if (index.used_only_by(m, {mi})) pattern.push_back(pi);
      replace_nodes(g, pattern, std::move(leaky));
      return true;
    }
    return false;
  });
}

}  // namespace ignis::passes
