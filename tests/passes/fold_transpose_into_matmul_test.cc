// SPDX-License-Identifier: Apache-2.0
// fold_transpose_into_matmul: MatMul / FusedMatMul reading a last-two-axes Transpose becomes
// FusedMatMul with transA / transB. The pass is off in the pipeline until every FusedMatMul
// kernel reads the flags, so graphs here run on the reference kernels only; the FusedMatMul
// kernels with the flags are checked against each other at the end.
#include "ir/op_schema.h"
#include "passes/fuse_test_util.h"
#include "passes/reference_runner.h"
#include "passes/pass.h"

namespace ignis::fuse_test {
namespace {

using reference_runner::max_difference;

ir::Graph fold(const ir::Graph& g, int* rewrites = nullptr) {
  return run_pass(passes::fold_transpose_into_matmul, g, rewrites);
}

// Makes node `i` an ai.ignis op.
ir::Graph to_ignis(ir::Graph g, size_t i) {
  g.nodes[i].domain = "ai.ignis";
  g.opsets["ai.ignis"] = 1;
  return g;
}

int64_t flag(const ir::Node& n, const char* name) { return n.attrs.get_int(name, 0); }

TEST(FoldTransposeIntoMatMul, FoldsATransposedLeftOperand) {
  GraphBuilder b;
  b.input("a", {5, 3}).weight("w", {5, 4}, 1);
  b.node("Transpose", {"a"}, {"at"}, {{"perm", ints({1, 0})}}).node("MatMul", {"at", "w"}, {"y"}).output("y");
  int n = 0;
  const ir::Graph g = fold(b.graph(), &n);
  EXPECT_EQ(n, 1);
  ASSERT_EQ(g.nodes.size(), 1u);
  const ir::Node& m = g.nodes[0];
  EXPECT_EQ(m.op_type, "FusedMatMul");
  EXPECT_EQ(m.domain, "ai.ignis");
  EXPECT_EQ(m.inputs, (std::vector<std::string>{"a", "w"}));
  EXPECT_EQ(flag(m, "transA"), 1);
  EXPECT_EQ(flag(m, "transB"), 0);
  EXPECT_EQ(g.opset("ai.ignis"), 1);
  EXPECT_LT(max_difference(b.graph(), g, random_inputs(b.graph(), {{5, 3}}, 1)), 1e-6);
}

TEST(FoldTransposeIntoMatMul, FoldsTransposedRightOperandsWithBatchAxes) {
  // [batch, 3, 5] x Transpose([batch, 4, 5]) and a broadcast 2-D weight, default perm.
  GraphBuilder b;
  b.input("a", {-1, 3, 5}, {"batch", "", ""}).input("k", {-1, 4, 5}, {"batch", "", ""}).weight("w", {6, 4}, 2);
  b.node("Transpose", {"k"}, {"kt"}, {{"perm", ints({0, 2, 1})}}).node("MatMul", {"a", "kt"}, {"s"});
  b.node("Transpose", {"w"}, {"wt"}).node("MatMul", {"s", "wt"}, {"y"}).output("y");
  int n = 0;
  const ir::Graph g = fold(b.graph(), &n);
  EXPECT_EQ(n, 2);
  EXPECT_EQ(count_ops(g, "Transpose"), 0);
  ASSERT_EQ(count_ops(g, "FusedMatMul", "ai.ignis"), 2);
  for (const auto& m : g.nodes) EXPECT_EQ(flag(m, "transB"), 1);
  EXPECT_LT(max_difference(b.graph(), g, random_inputs(b.graph(), {{2, 3, 5}, {2, 4, 5}}, 2)), 1e-5);
}

TEST(FoldTransposeIntoMatMul, FoldsBothOperands) {
  GraphBuilder b;
  b.input("a", {2, 7, 3}).input("c", {4, 7});
  b.node("Transpose", {"a"}, {"at"}, {{"perm", ints({0, 2, 1})}}).node("Transpose", {"c"}, {"ct"});
  b.node("MatMul", {"at", "ct"}, {"y"}).output("y");
  const ir::Graph g = fold(b.graph());
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"a", "c"}));
  EXPECT_EQ(flag(g.nodes[0], "transA"), 1);
  EXPECT_EQ(flag(g.nodes[0], "transB"), 1);
  EXPECT_LT(max_difference(b.graph(), g, random_inputs(b.graph(), {{2, 7, 3}, {4, 7}}, 3)), 1e-5);
}

TEST(FoldTransposeIntoMatMul, AddsFlagsToFusedMatMulKeepingBiasAndActivation) {
  GraphBuilder b;
  b.input("a", {-1, 6}, {"batch", ""}).weight("w", {5, 6}, 4).weight("bias", {5}, 5);
  b.node("Transpose", {"w"}, {"wt"});
  b.node("FusedMatMul", {"a", "wt", "bias"}, {"y"}, {{"activation", string_attr("Relu")}}).output("y");
  const ir::Graph in = to_ignis(b.graph(), 1);
  const ir::Graph g = fold(in);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"a", "w", "bias"}));
  EXPECT_EQ(flag(g.nodes[0], "transB"), 1);
  EXPECT_EQ(g.nodes[0].attrs.get_string("activation"), "Relu");
  EXPECT_LT(max_difference(in, g, random_inputs(in, {{3, 6}}, 4)), 1e-5);
}

TEST(FoldTransposeIntoMatMul, TogglesAFlagAlreadySet) {
  // FusedMatMul(Transpose(a), w, transA = 1) reads a as it is.
  GraphBuilder b;
  b.input("a", {3, 5}).weight("w", {5, 4}, 6);
  b.node("Transpose", {"a"}, {"at"}).node("FusedMatMul", {"at", "w"}, {"y"}, {{"transA", int_attr(1)}}).output("y");
  const ir::Graph in = to_ignis(b.graph(), 1);
  const ir::Graph g = fold(in);
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[0], "a");
  EXPECT_EQ(flag(g.nodes[0], "transA"), 0);
  EXPECT_LT(max_difference(in, g, random_inputs(in, {{3, 5}}, 5)), 1e-5);
}

TEST(FoldTransposeIntoMatMul, RejectsOtherPermsSharedOrOutputTransposesAndNonFloat) {
  auto rewrites = [](const ir::Graph& in) {
    int n = -1;
    fold(in, &n);
    return n;
  };
  // A perm that moves a batch axis.
  GraphBuilder perm;
  perm.input("a", {3, 2, 5}).weight("w", {5, 4}, 1);
  perm.node("Transpose", {"a"}, {"at"}, {{"perm", ints({1, 0, 2})}}).node("MatMul", {"at", "w"}, {"y"}).output("y");
  EXPECT_EQ(rewrites(perm.graph()), 0) << "perm [1, 0, 2]";
  // The transposed value has a second reader.
  GraphBuilder shared;
  shared.input("a", {5, 3}).weight("w", {5, 4}, 1);
  shared.node("Transpose", {"a"}, {"at"}).node("MatMul", {"at", "w"}, {"y"}).node("Neg", {"at"}, {"z"});
  EXPECT_EQ(rewrites(shared.output("y").output("z").graph()), 0) << "second reader";
  // The transposed value is a graph output.
  GraphBuilder out;
  out.input("a", {5, 3}).weight("w", {5, 4}, 1);
  out.node("Transpose", {"a"}, {"at"}).node("MatMul", {"at", "w"}, {"y"}).output("y").output("at");
  EXPECT_EQ(rewrites(out.graph()), 0) << "graph output";
  // Integer MatMul: FusedMatMul is float32 only.
  GraphBuilder ints_mm;
  ints_mm.input("a", {5, 3}, {}, DType::I32).input("b", {5, 4}, {}, DType::I32);
  ints_mm.node("Transpose", {"a"}, {"at"}).node("MatMul", {"at", "b"}, {"y"}).output("y");
  EXPECT_EQ(rewrites(ints_mm.graph()), 0) << "int32";
  // Default perm of a value of unknown rank: may not be a 2-D swap.
  GraphBuilder unknown;
  unknown.input("a", {5, 3}).weight("w", {5, 4}, 1);
  unknown.node("Transpose", {"a"}, {"at"}).node("MatMul", {"at", "w"}, {"y"}).output("y");
  ir::Graph g = unknown.graph();
  g.inputs[0].has_shape = false;
  g.inputs[0].dims.clear();
  g.inputs[0].dim_names.clear();
  EXPECT_EQ(rewrites(g), 0) << "unknown rank";
}

// ---- the FusedMatMul kernels with transA / transB ---------------------------------------------

Result<Tensor> run_fused_matmul(std::string_view kernel_id, const AttrMap& attrs, const std::vector<Tensor>& in) {
  const kernels::KernelDef* def = kernels::KernelRegistry::global().find_by_id(kernel_id);
  if (!def) return not_found(std::string(kernel_id));
  std::vector<const Tensor*> inputs;
  std::vector<ir::ValueType> types;
  std::vector<DType> dtypes;
  for (const auto& t : in) types.push_back({t.dtype(), t.shape()});
  std::vector<const ir::ValueType*> type_ptrs;
  for (size_t i = 0; i < in.size(); ++i) {
    inputs.push_back(&in[i]);
    type_ptrs.push_back(&types[i]);
    dtypes.push_back(in[i].dtype());
  }
  const auto* schema = ir::OpSchemaRegistry::global().find("ai.ignis", "FusedMatMul", 1);
  ir::InferContext ictx("m", "FusedMatMul", 1, attrs, type_ptrs, inputs, 1);
  IGNIS_RETURN_IF_ERROR(schema->infer(ictx));
  kernels::KernelInit init{attrs, 1, dtypes, inputs};
  IGNIS_ASSIGN_OR_RETURN(auto kernel, kernels::make_kernel(*def, init));
  Tensor y = Tensor::zeros(DType::F32, ictx.outputs()[0].shape);
  Tensor* outs[1] = {&y};
  kernels::Scratch scratch;
  kernels::KernelContext ctx(attrs, 1, inputs, outs, nullptr, &scratch);
  IGNIS_RETURN_IF_ERROR(kernel->run(ctx));
  return y;
}

Tensor random_tensor(std::vector<int64_t> dims, uint32_t seed) {
  const Shape s(dims);
  Tensor t = Tensor::empty(DType::F32, s);
  const auto v = random_values(s.numel(), seed);
  std::copy(v.begin(), v.end(), t.data_as<float>());
  return t;
}

TEST(FoldTransposeIntoMatMul, ComposedKernelMatchesTheReferenceWithFlags) {
  struct Case {
    std::vector<int64_t> a, b;
    int64_t ta, tb;
  };
  const Case cases[] = {{{7, 3}, {7, 5}, 1, 0},          {{3, 7}, {5, 7}, 0, 1},   {{2, 7, 3}, {5, 7}, 1, 1},
                        {{3, 7}, {4, 1, 5, 7}, 0, 1},   {{1, 7, 1}, {2, 7, 1}, 1, 0}, {{0, 7, 3}, {7, 5}, 1, 0}};
  for (const auto& c : cases) {
    AttrMap attrs;
    attrs.set("transA", int_attr(c.ta));
    attrs.set("transB", int_attr(c.tb));
    attrs.set("activation", string_attr("Sigmoid"));
    const Tensor a = random_tensor(c.a, 11), b = random_tensor(c.b, 12);
    auto want = run_fused_matmul("ref/fusedmatmul", attrs, {a, b});
    auto got = run_fused_matmul("cpu/fusedmatmul_f32_composed", attrs, {a, b});
    ASSERT_TRUE(want && got);
    ASSERT_EQ(want->shape(), got->shape());
    for (int64_t i = 0; i < want->numel(); ++i) EXPECT_EQ(want->data_as<float>()[i], got->data_as<float>()[i]);
  }
}

TEST(FoldTransposeIntoMatMul, SchemaChecksTheFlags) {
  auto status = [](const AttrMap& attrs, std::vector<int64_t> a, std::vector<int64_t> b) {
    auto r = run_fused_matmul("ref/fusedmatmul", attrs, {random_tensor(a, 1), random_tensor(b, 2)});
    return r ? StatusCode::Ok : r.error().code();
  };
  AttrMap ta;
  ta.set("transA", int_attr(1));
  EXPECT_EQ(status(ta, {4, 3}, {4, 2}), StatusCode::Ok);
  EXPECT_EQ(status(ta, {3, 4}, {4, 2}), StatusCode::InvalidArgument) << "inner extents differ once transposed";
  EXPECT_EQ(status(ta, {4}, {4, 2}), StatusCode::InvalidArgument) << "transA on a vector";
  AttrMap two;
  two.set("transB", int_attr(2));
  EXPECT_EQ(status(two, {3, 4}, {2, 4}), StatusCode::InvalidArgument) << "transB = 2";
  AttrMap tb;
  tb.set("transB", int_attr(1));
  EXPECT_EQ(status(tb, {3, 4}, {2, 4}), StatusCode::Ok);
}

}  // namespace
}  // namespace ignis::fuse_test
