// SPDX-License-Identifier: Apache-2.0
// Folds symmetric int8 quantization of each row written out in standard ops, the form
// `ignis quantize --mode dynamic --per-row` writes before each MatMulInteger:
//   s = Div(Max(ReduceMax(Abs(x), axes = [-1], keepdims = 1), floor), L)
//   q = Cast(Clip(Round(Div(x, s)), -L, L), to = int8)
//     =>  (q, s) = ai.ignis.DynamicQuantizeRows(x, floor, limit = L)
// The kernel reads each row twice while it is in cache (its largest |x|, then x / s) instead
// of the seven ops writing and reading six tensors. Its arithmetic is theirs, step by step in
// float32 (a true division by s, round half to even), so q and s are bit for bit the same.
// Legality: x is provably float32 with a known rank >= 1 (the axes name its last axis);
// floor is a float32 scalar constant > 0 and L one with an integral value in [1, 127], the
// Clip bounds exactly -L and L; the intermediates other than s are read only inside the
// pattern and are not graph outputs; s may have other readers, none of them before the Cast
// (the fused node takes the Cast's place). A NaN in x differs: Abs -> ReduceMax may propagate
// it into s, where the kernel leaves it out of the row's maximum.
#include <cmath>
#include <string>
#include <vector>

#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

constexpr int64_t kOnnxInt8 = 3;  // TensorProto.INT8

}  // namespace

Result<int> fuse_dynamic_quantize_rows(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int ai) -> Result<bool> {
    const ir::Node& abs = g.nodes[ai];
    if (!is_onnx(abs, "Abs") || abs.inputs.size() != 1 || abs.outputs.size() != 1) return false;
    const std::string x = abs.inputs[0];
    const ValueFact& xf = facts[x];
    if (xf.dtype != DType::F32 || xf.rank < 1) return false;

    const int ri = only_reader(index, abs.outputs[0]);
    if (ri < 0 || !reduces_last_axis(g, g.nodes[ri], "ReduceMax", xf.rank)) return false;
    const int mi = only_reader(index, g.nodes[ri].outputs[0]);
    if (mi < 0 || !is_onnx(g.nodes[mi], "Max") || g.nodes[mi].inputs.size() != 2) return false;
    const auto floor = scalar_constant(g, other_input(g.nodes[mi], g.nodes[ri].outputs[0]), 0);
    if (!floor || !(*floor > 0.0) || !std::isfinite(*floor)) return false;
    const int di = only_reader(index, g.nodes[mi].outputs[0]);
    if (di < 0 || !is_onnx(g.nodes[di], "Div") || g.nodes[di].inputs[0] != g.nodes[mi].outputs[0]) return false;
    const auto limit = scalar_constant(g, g.nodes[di].inputs[1], 0);
    if (!limit || *limit < 1.0 || *limit > 127.0 || *limit != std::floor(*limit)) return false;
    const std::string scale = g.nodes[di].outputs[0];

    // Among the scale's readers, Div(x, s) starts the quantization.
    int qi = -1;
    for (int c : index.consumers(scale))
      if (is_onnx(g.nodes[c], "Div") && g.nodes[c].inputs[0] == x && g.nodes[c].inputs[1] == scale) qi = c;
    if (qi < 0) return false;
    const int round_i = only_reader(index, g.nodes[qi].outputs[0]);
    if (round_i < 0 || !is_onnx(g.nodes[round_i], "Round")) return false;
    const int clip_i = only_reader(index, g.nodes[round_i].outputs[0]);
    if (clip_i < 0) return false;
    const auto bounds = constant_clip_bounds(g, g.nodes[clip_i]);
    if (!bounds || bounds->first != static_cast<float>(-*limit) || bounds->second != static_cast<float>(*limit))
      return false;
    const int cast_i = only_reader(index, g.nodes[clip_i].outputs[0]);
    if (cast_i < 0 || !is_onnx(g.nodes[cast_i], "Cast") || g.nodes[cast_i].attrs.get_int("to", 0) != kOnnxInt8)
      return false;
    for (int c : index.consumers(scale))
      if (c != qi && c < cast_i) return false;

    ir::Node fused;
    fused.name = abs.name.empty() ? g.nodes[cast_i].name : abs.name;
    fused.op_type = "DynamicQuantizeRows";
    fused.domain = "ai.ignis";
    fused.inputs = {x};
    fused.outputs = {g.nodes[cast_i].outputs[0], scale};
    Attribute floor_attr;
    floor_attr.kind = Attribute::Kind::Float;
    floor_attr.f = static_cast<float>(*floor);
    fused.attrs.set("floor", floor_attr);
    set_int(fused, "limit", static_cast<int64_t>(*limit));
    replace_nodes(g, {ai, ri, mi, di, qi, round_i, clip_i, cast_i}, std::move(fused));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
