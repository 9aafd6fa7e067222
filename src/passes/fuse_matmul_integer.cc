// SPDX-License-Identifier: Apache-2.0
// Folds the float tail of a dynamically quantized MatMul into one node:
//   MatMulInteger(A, B, a_zp, b_zp) -> Cast(to = float) -> Mul(scale) [-> Mul(row_scale)]
//     [-> Add(bias)]  =>  ai.ignis.MatMulIntegerToFloat(A, B, scale, a_zp, b_zp, bias, row_scale)
// This is the graph onnxruntime's quantize_dynamic and `ignis quantize --mode dynamic` write
// (the scale is the product of the activation's and the weight's scales, computed at run
// time); with `--per-row` the weight's scale comes first and A's scale per row second, the
// scale output of the ai.ignis.DynamicQuantizeRows that made A (fuse_dynamic_quantize_rows).
// The kernel converts each int32 result to float, multiplies by the scales and adds the bias
// as the tile is stored, with the same roundings as the separate ops, instead of writing the
// int32 matrix and reading it back twice.
// Legality: each folded intermediate feeds only the next node and is not a graph output; the
// scale is float32 with one element or one per column (B's last dimension, provably fixed),
// so the Mul does not broadcast the product to a larger shape; the bias likewise is a 1-D
// float32 constant with one value per column; a row scale is the scale DynamicQuantizeRows
// gives A (A's shape with its last extent 1, so it broadcasts over the product's columns and
// B's batch only).
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

constexpr int64_t kOnnxFloat = 1;  // TensorProto.FLOAT

// True when `v` is known to hold one element, or exactly `columns` along a single axis.
bool per_column_or_scalar(const ValueFact& v, const DimFact& columns) {
  if (v.rank == 0) return true;
  if (v.rank != 1 || !v.dims[0].is_fixed()) return false;
  return v.dims[0].value == 1 || (columns.is_fixed() && v.dims[0].value == columns.value);
}

}  // namespace

Result<int> fuse_matmul_integer(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& mm = g.nodes[mi];
    if (!is_onnx(mm, "MatMulInteger") || mm.outputs.size() != 1 || mm.inputs.size() < 2) return false;
    const ValueFact& b = facts[mm.inputs[1]];
    if (b.rank < 2) return false;
    const DimFact columns = b.last_dim();

    const std::string& product = mm.outputs[0];
    if (!index.single_use(product)) return false;
    const int ci = index.consumers(product)[0];
    const ir::Node& cast = g.nodes[ci];
    if (!is_onnx(cast, "Cast") || cast.outputs.size() != 1 || cast.attrs.get_int("to", 0) != kOnnxFloat) return false;
    const std::string& as_float = cast.outputs[0];
    if (!index.single_use(as_float)) return false;
    const int mul_i = index.consumers(as_float)[0];
    const ir::Node& mul = g.nodes[mul_i];
    if (!is_onnx(mul, "Mul") || mul.outputs.size() != 1) return false;
    const std::string scale = other_input(mul, as_float);
    if (scale.empty() || scale == as_float || facts.dtype(scale) != DType::F32 ||
        !per_column_or_scalar(facts[scale], columns))
      return false;

    ir::Node fused;
    fused.name = mm.name;
    fused.op_type = "MatMulIntegerToFloat";
    fused.domain = "ai.ignis";
    fused.inputs = {mm.inputs[0], mm.inputs[1], scale};
    for (size_t i = 2; i < mm.inputs.size(); ++i) fused.inputs.push_back(mm.inputs[i]);
    std::vector<int> pattern = {mi, ci, mul_i};
    std::string out = mul.outputs[0];

    std::string row_scale;
    if (index.single_use(out)) {
      const int ri = index.consumers(out)[0];
      const ir::Node& row_mul = g.nodes[ri];
      const std::string r = is_onnx(row_mul, "Mul") && row_mul.outputs.size() == 1 ? other_input(row_mul, out) : "";
      const ir::Node* quantize = r.empty() ? nullptr : index.producer_op(r, {});
      if (quantize && is_ignis(*quantize, "DynamicQuantizeRows") && quantize->outputs.size() == 2 &&
          quantize->outputs[1] == r && quantize->outputs[0] == mm.inputs[0]) {
        row_scale = r;
        pattern.push_back(ri);
        out = row_mul.outputs[0];
      }
    }
    fused.inputs.resize(5);  // the zero points keep their places (empty = omitted)
    if (const auto add = constant_bias_add(g, index, out, columns.is_fixed() ? columns.value : -1)) {
      fused.inputs.push_back(add->second);
      pattern.push_back(add->first);
      out = g.nodes[add->first].outputs[0];
    }
    if (!row_scale.empty()) {
      fused.inputs.resize(6);
      fused.inputs.push_back(row_scale);
    }
    while (!fused.inputs.empty() && fused.inputs.back().empty()) fused.inputs.pop_back();
    fused.outputs = {out};
    replace_nodes(g, pattern, std::move(fused));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
