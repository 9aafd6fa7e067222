// SPDX-License-Identifier: Apache-2.0
// Replaces float32 Pow and Div by a constant scalar with cheaper ops that give the same values:
//   Pow(x, 1)  = Identity(x)          Pow(x, 2) = Mul(x, x)          Pow(x, -1) = Reciprocal(x)
//   Pow(x, 3)  = Mul(Mul(x, x), x)
//   Div(x, c)  = Mul(x, 1 / c)        only for c = +-2^k with 1 / c a normal float
// The reference Pow computes in double and rounds once. For 1, 2 and -1 that equals the float
// op bit for bit: x * x of two floats is exact in double, and a float quotient rounded to
// double and then to float is rounded correctly (53 >= 2 * 24 + 2 bits). For 3 the float
// product rounds twice, so results may differ from Pow in the last bit (and x * x overflows
// only where x^3 does). Div by a power of two and Mul by its exact inverse are the same real
// number rounded the same way, so they agree bit for bit, infinities, zeros and NaN included;
// other divisors are left alone, since 1 / c would add a rounding. Pow(x, 0.5) is not Sqrt:
// the two differ at -inf (+inf against NaN), so the x86 Pow kernel handles it instead.
// Legality: opset 7 or newer (no legacy broadcast attributes), x provably float32, the
// constant a single float32, float64 or integer element of rank no larger than x's, so the
// rewrite never changes the output's shape.
#include <cmath>
#include <optional>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// The single value of a constant of a numeric dtype with rank <= max_rank, else nullopt.
std::optional<double> numeric_scalar(const ir::Graph& g, const std::string& value, int max_rank) {
  const Tensor* t = ir::constant_value(g, value);
  if (!t || t->numel() != 1 || t->rank() > max_rank) return std::nullopt;
  switch (t->dtype()) {
    case DType::F32: return static_cast<double>(t->data_as<float>()[0]);
    case DType::F64: return t->data_as<double>()[0];
    case DType::I32: return static_cast<double>(t->data_as<int32_t>()[0]);
    case DType::I64: return static_cast<double>(t->data_as<int64_t>()[0]);
    default: return std::nullopt;
  }
}

ir::Node make_node(const ir::Node& from, std::string op, std::vector<std::string> inputs, std::string output,
                   const std::string& suffix = {}) {
  ir::Node n;
  n.name = from.name + suffix;
  n.op_type = std::move(op);
  n.inputs = std::move(inputs);
  n.outputs = {std::move(output)};
  return n;
}

bool try_pow(ir::Graph& g, int i, const std::string& x, double e) {
  const ir::Node pow = g.nodes[i];
  const std::string& y = pow.outputs[0];
  if (e == 1.0) g.nodes[i] = make_node(pow, "Identity", {x}, y);
  else if (e == 2.0) g.nodes[i] = make_node(pow, "Mul", {x, x}, y);
  else if (e == -1.0) g.nodes[i] = make_node(pow, "Reciprocal", {x}, y);
  else if (e == 3.0) {
    const std::string sq = ir::unique_value_name(g, x + "_squared");
    g.nodes[i] = make_node(pow, "Mul", {sq, x}, y);
    // The square goes right before its reader, so the list stays topologically ordered.
    g.nodes.insert(g.nodes.begin() + i, make_node(pow, "Mul", {x, x}, sq, "_square"));
  } else {
    return false;
  }
  return true;
}

bool try_div(ir::Graph& g, int i, const std::string& x, const std::string& c_name, double c) {
  const float cf = static_cast<float>(c);
  int exponent = 0;
  if (static_cast<double>(cf) != c || !std::isnormal(cf) || std::fabs(std::frexp(cf, &exponent)) != 0.5f) return false;
  const float inverse = 1.0f / cf;
  if (!std::isnormal(inverse)) return false;
  Tensor t = Tensor::empty(DType::F32, ir::constant_value(g, c_name)->shape());
  t.data_as<float>()[0] = inverse;
  const std::string inv_name = ir::unique_value_name(g, c_name + "_inverse");
  g.initializers[inv_name] = t;
  const ir::Node div = g.nodes[i];
  g.nodes[i] = make_node(div, "Mul", {x, inv_name}, div.outputs[0]);
  return true;
}

}  // namespace

Result<int> reduce_strength(ir::Graph& g, const PassContext&) {
  if (g.opset("") < 7) return 0;
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex&, int i) -> Result<bool> {
    const ir::Node& n = g.nodes[i];
    const bool pow = is_onnx(n, "Pow");
    if ((!pow && !is_onnx(n, "Div")) || n.inputs.size() != 2 || n.outputs.size() != 1 || n.outputs[0].empty())
      return false;
    const std::string x = n.inputs[0], c = n.inputs[1];
    const ValueFact& xf = facts[x];
    if (xf.dtype != DType::F32) return false;
    const auto v = numeric_scalar(g, c, std::max(0, xf.rank));
    if (!v) return false;
    if (pow) return try_pow(g, i, x, *v);
    return ir::constant_value(g, c)->dtype() == DType::F32 && try_div(g, i, x, c, *v);
  });
}

}  // namespace ignis::passes
