// SPDX-License-Identifier: Apache-2.0
// Fuses the residual Add in front of a last-axis LayerNormalization:
//   LayerNormalization(Add(X, Skip))                 => ai.ignis.SkipLayerNorm(X, Skip, gamma, beta)
//   LayerNormalization(Add(Add(Y, bias), Skip))      => ai.ignis.SkipLayerNorm(Y, Skip, gamma, beta, bias)
// SkipLayerNorm broadcasts X and Skip as Add does and normalizes the sum over its last axis,
// exactly LayerNormalization(axis = -1) of the sum. When the sum has other readers (pre-norm
// transformers reuse it), the fused node also produces it as its second output under the
// Add's name, so those readers are untouched.
// Legality: the LayerNormalization is opset >= 17 with default stash_type, normalizes only the
// last axis, and has no Mean/InvStdDev output in use; its input is provably float32; scale and
// bias are 1-D with the sum's last extent (provably, or because a 1-D scale of extent > 1 only
// broadcasts against an equal last axis); a folded bias is a 1-D float32 constant whose extent
// provably equals Y's and the sum's last extent (so neither Add broadcasts it) and whose Add feeds
// only the residual Add. The sum is computed in float32 like the Adds; the folded bias is added
// after Skip rather than before, which differs in rounding only.
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

// A LayerNormalization parameter that SkipLayerNorm can take as a 1-D row of `last`.
bool is_row_parameter(const GraphFacts& facts, const std::string& value, const DimFact& last) {
  const ValueFact& f = facts[value];
  if (f.rank != 1 || f.dtype != DType::F32) return false;
  return same_dim(f.dims[0], last) || (f.dims[0].is_fixed() && f.dims[0].value > 1);
}

}  // namespace

Result<int> fuse_skip_layer_norm(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int li) -> Result<bool> {
    const ir::Node& ln = g.nodes[li];
    // ONNX LayerNormalization (opset 17+), or the ai.ignis one fuse_layer_norm writes for older opsets.
    const bool layer_norm = (is_onnx(ln, "LayerNormalization") && g.opset("") >= 17) || is_ignis(ln, "LayerNormalization");
    if (!layer_norm || ln.inputs.size() < 2 || ln.inputs.size() > 3 || ln.outputs.empty())
      return false;
    for (size_t o = 1; o < ln.outputs.size(); ++o)
      if (!ln.outputs[o].empty() && (!index.consumers(ln.outputs[o]).empty() || ir::is_graph_output(g, ln.outputs[o])))
        return false;
    if (ln.attrs.get_int("stash_type", 1) != 1) return false;
    const std::string& s = ln.inputs[0];
    const ValueFact& sf = facts[s];
    const int64_t axis = ln.attrs.get_int("axis", -1);
    if (sf.dtype != DType::F32 || !(axis == -1 || (sf.has_rank() && axis == sf.rank - 1))) return false;
    if (!is_row_parameter(facts, ln.inputs[1], sf.last_dim())) return false;
    if (ln.inputs.size() > 2 && !ln.inputs[2].empty() && !is_row_parameter(facts, ln.inputs[2], sf.last_dim()))
      return false;
    const int ai = index.producer(s);
    if (ai < 0 || !is_onnx(g.nodes[ai], "Add") || g.nodes[ai].inputs.size() != 2 || g.nodes[ai].outputs.size() != 1)
      return false;
    const ir::Node& add = g.nodes[ai];
    std::vector<int> pattern = {ai, li};
    std::string x = add.inputs[0], skip = add.inputs[1], bias;

    // An inner Add(Y, constant bias) on either side is folded as the Bias input.
    for (int side = 0; side < 2 && bias.empty(); ++side) {
      const std::string& v = add.inputs[side];
      const int bi = index.producer(v);
      if (bi < 0 || !index.single_use(v) || !is_onnx(g.nodes[bi], "Add") || g.nodes[bi].inputs.size() != 2) continue;
      const ir::Node& inner = g.nodes[bi];
      for (int k = 0; k < 2; ++k) {
        const Tensor* t = ir::constant_value(g, inner.inputs[k]);
        const std::string& y = inner.inputs[1 - k];
        if (!t || t->dtype() != DType::F32 || t->rank() != 1 || ir::constant_value(g, y)) continue;
        const DimFact last = facts[y].last_dim();
        if (!last.is_fixed() || last.value != t->dim(0) || !same_dim(last, sf.last_dim())) continue;
        x = y;
        skip = add.inputs[1 - side];
        bias = inner.inputs[k];
        pattern.push_back(bi);
        break;
      }
    }

    ir::Node fused;
    fused.name = ln.name;
    fused.op_type = "SkipLayerNorm";
    fused.domain = "ai.ignis";
    fused.inputs = {x, skip, ln.inputs[1], ln.inputs.size() > 2 ? ln.inputs[2] : std::string()};
    if (!bias.empty()) fused.inputs.push_back(bias);
    while (fused.inputs.back().empty()) fused.inputs.pop_back();
    Attribute eps;
    eps.kind = Attribute::Kind::Float;
    eps.f = ln.attrs.get_float("epsilon", 1e-5f);
    fused.attrs.set("epsilon", eps);
    fused.outputs = {ln.outputs[0]};
    // The sum keeps its name when something besides the LayerNormalization reads it.
    if (!index.single_use(s)) fused.outputs.push_back(s);
    replace_nodes(g, pattern, std::move(fused));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
