// SPDX-License-Identifier: Apache-2.0
// Folds a Transpose that swaps the last two axes into the MatMul reading it:
//   MatMul(Transpose(A), B)  =>  ai.ignis.FusedMatMul(A, B, transA = 1)
//   MatMul(A, Transpose(B))  =>  ai.ignis.FusedMatMul(A, B, transB = 1)
// and the same on an existing FusedMatMul, whose flag toggles (swapping twice is the
// identity). The product reads the operand with its last two axes swapped instead of a
// transposed copy; batch axes and their broadcasting are untouched, so the result is the
// same product, computed from the same values.
// Legality: the perm is [0, ..., r-3, r-1, r-2] with r >= 2 (an empty perm, the reversal,
// only for r = 2); the operand is float32 (FusedMatMul is float32 only); the transposed
// value is read once, by the MatMul, and is not a graph output.
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

namespace {

bool swaps_last_two_axes(const ir::Node& t, int rank) {
  if (rank < 2) return false;
  std::vector<int64_t> perm = t.attrs.get_ints("perm");
  if (perm.empty()) return rank == 2;
  if (static_cast<int>(perm.size()) != rank) return false;
  for (int i = 0; i + 2 < rank; ++i)
    if (perm[i] != i) return false;
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2;
}

}  // namespace

Result<int> fold_transpose_into_matmul(ir::Graph& g, const PassContext&) {
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& m = g.nodes[mi];
    const bool fused = is_ignis(m, "FusedMatMul");
    if ((!fused && !is_onnx(m, "MatMul")) || m.inputs.size() < 2 || m.outputs.size() != 1) return false;
    ir::Node out = m;
    std::vector<int> pattern;
    for (int side = 0; side < 2; ++side) {
      const std::string& v = m.inputs[side];
      const int ti = index.producer(v);
      if (ti < 0 || !index.single_use(v)) continue;
      const ir::Node& t = g.nodes[ti];
      if (!is_onnx(t, "Transpose") || t.inputs.size() != 1 || t.outputs.size() != 1) continue;
      const std::string& x = t.inputs[0];
      if (facts.dtype(x) != DType::F32 || !swaps_last_two_axes(t, facts.rank(x))) continue;
      const char* flag = side == 0 ? "transA" : "transB";
      Attribute a;
      a.kind = Attribute::Kind::Int;
      a.i = m.attrs.get_int(flag, 0) != 0 ? 0 : 1;
      out.attrs.set(flag, a);
      out.inputs[side] = x;
      pattern.push_back(ti);
    }
    if (pattern.empty()) return false;
    out.op_type = "FusedMatMul";
    out.domain = "ai.ignis";
    pattern.push_back(mi);
    replace_nodes(g, pattern, std::move(out));
    import_ignis_domain(g);
    return true;
  });
}

}  // namespace ignis::passes
