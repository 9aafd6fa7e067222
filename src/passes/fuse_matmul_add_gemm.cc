// SPDX-License-Identifier: Apache-2.0
// Turns a 2-D MatMul with a constant weight followed by a constant bias Add into one Gemm:
//   Add(MatMul(A, B), C)  =>  Gemm(A, B, C)        (alpha = beta = 1, no transposes)
// Gemm computes A * B + C with C broadcast to [M, N] (unidirectionally, opset >= 7), which is
// the Add when C broadcasts to [M, N] without widening it: C is [N], [1], [1, N] or [1, 1].
// Legality: A is provably 2-D float32, B a 2-D float32 constant, C a float32 constant of one
// of those shapes, and the product feeds only the Add and is not a graph output. A standard-op
// rewrite, so its output still runs in any ONNX runtime.
#include "ir/rewrite.h"
#include "passes/match.h"
#include "passes/pass.h"

namespace ignis::passes {

Result<int> fuse_matmul_add_gemm(ir::Graph& g, const PassContext&) {
  if (g.opset("") < 7) return 0;
  const GraphFacts facts(g);
  return rewrite_all(g, [&](const GraphIndex& index, int mi) -> Result<bool> {
    const ir::Node& mm = g.nodes[mi];
    if (!is_onnx(mm, "MatMul") || mm.inputs.size() != 2 || mm.outputs.size() != 1) return false;
    const ValueFact& a = facts[mm.inputs[0]];
    const Tensor* b = ir::constant_value(g, mm.inputs[1]);
    if (a.rank != 2 || a.dtype != DType::F32 || !b || b->rank() != 2 || b->dtype() != DType::F32) return false;
    const std::string& m = mm.outputs[0];
    if (!index.single_use(m)) return false;
    const int ai = index.consumers(m)[0];
    const ir::Node& add = g.nodes[ai];
    if (!is_onnx(add, "Add") || add.outputs.size() != 1) return false;
    const std::string c_name = other_input(add, m);
    const Tensor* c = c_name.empty() ? nullptr : ir::constant_value(g, c_name);
    if (!c || c->dtype() != DType::F32 || c->rank() > 2) return false;
    const int64_t n = b->dim(1);
    const int64_t last = c->rank() == 0 ? 1 : c->dim(c->rank() - 1);
    if ((last != 1 && last != n) || (c->rank() == 2 && c->dim(0) != 1)) return false;

    ir::Node gemm;
    gemm.name = mm.name;
    gemm.op_type = "Gemm";
    gemm.inputs = {mm.inputs[0], mm.inputs[1], c_name};
    gemm.outputs = add.outputs;
    replace_nodes(g, {mi, ai}, std::move(gemm));
    return true;
  });
}

}  // namespace ignis::passes
