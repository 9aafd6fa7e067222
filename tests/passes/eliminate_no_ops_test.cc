// SPDX-License-Identifier: Apache-2.0
// eliminate_no_ops: ops that return their input unchanged are dropped, Transpose / Reshape /
// Cast chains shortened, and nothing that could change a value or a name is touched.
#include <limits>

#include "passes/fuse_test_util.h"
#include "passes/reference_runner.h"
#include "passes/pass.h"

namespace ignis::fuse_test {
namespace {

using reference_runner::max_difference;

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

GraphBuilder with_input(std::vector<int64_t> dims = {2, 3, 4}, DType dtype = DType::F32, int64_t opset = 17) {
  GraphBuilder b(opset);
  std::vector<std::string> names(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0) names[i] = "d" + std::to_string(i);
  b.input("x", dims, names, dtype);
  return b;
}

ir::Graph no_ops(const GraphBuilder& b, int* rewrites = nullptr) {
  return run_pass(passes::eliminate_no_ops, b.graph(), rewrites);
}

// Inputs of the graph's dtypes, integers in [-100, 100] (small enough for every type used).
NamedTensors inputs_for(const ir::Graph& g, const std::vector<int64_t>& dims, uint32_t seed) {
  NamedTensors feeds;
  const Shape shape(dims);
  const auto v = random_values(shape.numel(), seed, -100.0f, 100.0f);
  for (const auto& in : g.inputs) {
    Tensor t = Tensor::empty(in.dtype, shape);
    for (int64_t i = 0; i < t.numel(); ++i) {
      const float f = v[static_cast<size_t>(i)];
      switch (in.dtype) {
        case DType::F32: t.data_as<float>()[i] = f; break;
        case DType::I8: t.data_as<int8_t>()[i] = static_cast<int8_t>(f); break;
        case DType::U8: t.data_as<uint8_t>()[i] = static_cast<uint8_t>(std::fabs(f)); break;
        case DType::I32: t.data_as<int32_t>()[i] = static_cast<int32_t>(f) * 1000003; break;
        case DType::I64: t.data_as<int64_t>()[i] = static_cast<int64_t>(f) * 100000000007; break;
        default: ADD_FAILURE() << "no generator for " << dtype_name(in.dtype);
      }
    }
    feeds.emplace_back(in.name, t);
  }
  return feeds;
}

// Runs `b` with the pass applied and expects `ops` nodes left and unchanged outputs.
void expect_nodes_after(const GraphBuilder& b, size_t ops, const std::vector<int64_t>& dims, const std::string& what) {
  int n = 0;
  const ir::Graph g = no_ops(b, &n);
  EXPECT_EQ(g.nodes.size(), ops) << what;
  EXPECT_EQ(max_difference(b.graph(), g, inputs_for(b.graph(), dims, 1)), 0.0) << what;
}

Attribute to(DType t) { return int_attr(static_cast<int64_t>(t)); }

TEST(EliminateNoOps, DropsCastsToTheSameType) {
  GraphBuilder b = with_input();
  b.node("Cast", {"x"}, {"c"}, {{"to", to(DType::F32)}}).node("Neg", {"c"}, {"y"}).output("y");
  expect_nodes_after(b, 1, {2, 3, 4}, "same-type Cast");
  GraphBuilder f16 = with_input();
  f16.node("Cast", {"x"}, {"c"}, {{"to", to(DType::F16)}}).node("Cast", {"c"}, {"y"}, {{"to", to(DType::F32)}});
  int n = -1;
  no_ops(f16.output("y"), &n);
  EXPECT_EQ(n, 0) << "float32 -> float16 -> float32 rounds";
}

TEST(EliminateNoOps, ShortensOnlyExactCastChains) {
  struct Case {
    DType t0, t1, t2;
    size_t nodes_left;  // of Cast, Cast, Identity
  };
  const Case cases[] = {
      {DType::I32, DType::F64, DType::I32, 1},  // exact round trip: both go
      {DType::F32, DType::F64, DType::F32, 1},
      {DType::I8, DType::I32, DType::F32, 2},   // becomes Cast(x, float32)
      {DType::U8, DType::F32, DType::I64, 2},
      {DType::I32, DType::F32, DType::I32, 3},  // float32 cannot hold every int32
      {DType::I64, DType::F64, DType::I64, 3},
      {DType::F32, DType::I32, DType::F32, 3},  // truncation
      {DType::I8, DType::I32, DType::F16, 2},   // int8 fits float16 exactly too
      {DType::I32, DType::I64, DType::F32, 3},  // int32 -> float32 rounds: left as written
      {DType::U8, DType::I8, DType::U8, 3},     // sign change
  };
  for (const auto& c : cases) {
    GraphBuilder b = with_input({2, 3, 4}, c.t0);
    b.node("Cast", {"x"}, {"c1"}, {{"to", to(c.t1)}}).node("Cast", {"c1"}, {"c2"}, {{"to", to(c.t2)}});
    b.node("Identity", {"c2"}, {"y"}).output("y");
    const std::string what = std::string(dtype_name(c.t0)) + " -> " + std::string(dtype_name(c.t1)) + " -> " +
                             std::string(dtype_name(c.t2));
    int n = 0;
    const ir::Graph g = no_ops(b, &n);
    const ir::Graph live = run_pass(passes::eliminate_dead_code, g);
    EXPECT_EQ(live.nodes.size(), c.nodes_left) << what;
    if (c.nodes_left == 2) {
      EXPECT_EQ(find_op(live, "Cast", "")->inputs[0], "x") << what;
    }
    if (c.t2 != DType::F16) {
      EXPECT_EQ(max_difference(b.graph(), g, inputs_for(b.graph(), {2, 3, 4}, 2)), 0.0) << what;
    }
  }
}

TEST(EliminateNoOps, DropsReshapesThatKeepTheShape) {
  GraphBuilder r = with_input({-1, 3, 4});
  r.ints_constant("s", {0, 3, 4}).node("Reshape", {"x", "s"}, {"r"}).node("Neg", {"r"}, {"y"}).output("y");
  expect_nodes_after(r, 1, {2, 3, 4}, "Reshape [0, 3, 4] of [batch, 3, 4]");
  GraphBuilder minus = with_input({-1, 3, 4});
  minus.ints_constant("s", {-1, 3, 4}).node("Reshape", {"x", "s"}, {"r"}).node("Neg", {"r"}, {"y"}).output("y");
  expect_nodes_after(minus, 1, {2, 3, 4}, "Reshape [-1, 3, 4] of [batch, 3, 4]: -1 is batch");
  GraphBuilder two = with_input({-1, -1, 4});
  two.ints_constant("s", {-1, 0, 4}).node("Reshape", {"x", "s"}, {"r"}).node("Neg", {"r"}, {"y"}).output("y");
  expect_nodes_after(two, 2, {2, 3, 4}, "Reshape [-1, 0, 4] of [d0, d1, 4]: not provable");
  GraphBuilder other = with_input();
  other.ints_constant("s", {2, 12}).node("Reshape", {"x", "s"}, {"r"}).node("Neg", {"r"}, {"y"}).output("y");
  expect_nodes_after(other, 2, {2, 3, 4}, "Reshape to another shape");
  GraphBuilder flat = with_input({5, 7});
  flat.node("Flatten", {"x"}, {"f"}).node("Neg", {"f"}, {"y"}).output("y");
  expect_nodes_after(flat, 1, {5, 7}, "Flatten of a matrix");
  GraphBuilder sq = with_input();
  sq.node("Squeeze", {"x"}, {"s"}).node("Neg", {"s"}, {"y"}).output("y");
  expect_nodes_after(sq, 1, {2, 3, 4}, "Squeeze with no unit axis");
  GraphBuilder sq_dyn = with_input({-1, 3, 4});
  sq_dyn.node("Squeeze", {"x"}, {"s"}).node("Neg", {"s"}, {"y"}).output("y");
  expect_nodes_after(sq_dyn, 2, {2, 3, 4}, "Squeeze of a symbolic extent");
}

TEST(EliminateNoOps, DropsExpandsThatBroadcastToTheInputShape) {
  auto expand = [](std::vector<int64_t> dims, std::vector<int64_t> shape) {
    GraphBuilder b = with_input(dims);
    b.ints_constant("s", shape).node("Expand", {"x", "s"}, {"e"}).node("Neg", {"e"}, {"y"}).output("y");
    return b;
  };
  expect_nodes_after(expand({2, 3, 4}, {1, 4}), 1, {2, 3, 4}, "Expand [1, 4]");
  expect_nodes_after(expand({2, 3, 4}, {2, 3, 4}), 1, {2, 3, 4}, "Expand to the same shape");
  expect_nodes_after(expand({-1, 3, 4}, {1, 1, 1}), 1, {2, 3, 4}, "Expand [1, 1, 1] of a symbolic shape");
  expect_nodes_after(expand({2, 3, 4}, {1, 2, 3, 4}), 2, {2, 3, 4}, "Expand adding an axis");
  expect_nodes_after(expand({2, 1, 4}, {2, 3, 4}), 2, {2, 1, 4}, "Expand broadcasting a unit axis");
  expect_nodes_after(expand({-1, 3, 4}, {2, 3, 4}), 2, {2, 3, 4}, "Expand of a symbolic extent");
  GraphBuilder dynamic = with_input();
  dynamic.input("s", {1}, {}, DType::I64).node("Expand", {"x", "s"}, {"e"}).node("Neg", {"e"}, {"y"}).output("y");
  int n = -1;
  no_ops(dynamic, &n);
  EXPECT_EQ(n, 0) << "Expand to a computed shape";
}

TEST(EliminateNoOps, DropsIdentityTransposesAndComposesPairs) {
  GraphBuilder id = with_input();
  id.node("Transpose", {"x"}, {"t"}, {{"perm", ints({0, 1, 2})}}).node("Neg", {"t"}, {"y"}).output("y");
  expect_nodes_after(id, 1, {2, 3, 4}, "identity perm");
  GraphBuilder inverse = with_input();
  inverse.node("Transpose", {"x"}, {"t1"}, {{"perm", ints({1, 2, 0})}});
  inverse.node("Transpose", {"t1"}, {"t2"}, {{"perm", ints({2, 0, 1})}});
  inverse.node("Neg", {"t2"}, {"y"}).output("y");
  int n = 0;
  ir::Graph g = no_ops(inverse, &n);
  g = run_pass(passes::eliminate_dead_code, g);
  EXPECT_EQ(g.nodes.size(), 1u) << "a perm and its inverse";
  EXPECT_EQ(max_difference(inverse.graph(), g, inputs_for(inverse.graph(), {2, 3, 4}, 3)), 0.0);
  // Two perms composing to a third; the first Transpose keeps its other reader.
  GraphBuilder pair = with_input();
  pair.node("Transpose", {"x"}, {"t1"}, {{"perm", ints({0, 2, 1})}});
  pair.node("Transpose", {"t1"}, {"t2"}, {{"perm", ints({1, 0, 2})}});
  pair.node("Neg", {"t2"}, {"y"}).node("Abs", {"t1"}, {"z"}).output("y").output("z");
  g = no_ops(pair);
  ASSERT_EQ(count_ops(g, "Transpose"), 2);
  const ir::Node& composed = g.nodes[1];
  EXPECT_EQ(composed.inputs[0], "x");
  EXPECT_EQ(composed.attrs.get_ints("perm"), (std::vector<int64_t>{2, 0, 1}));
  EXPECT_EQ(max_difference(pair.graph(), g, inputs_for(pair.graph(), {2, 3, 4}, 4)), 0.0);
  // Default perms (reversal) need the rank: known here.
  GraphBuilder rev = with_input();
  rev.node("Transpose", {"x"}, {"t1"}).node("Transpose", {"t1"}, {"t2"}).node("Neg", {"t2"}, {"y"}).output("y");
  g = no_ops(rev);
  g = run_pass(passes::eliminate_dead_code, g);
  EXPECT_EQ(g.nodes.size(), 1u) << "reversal twice";
}

TEST(EliminateNoOps, CancelsTransposePairsAroundAnElementwiseOp) {
  // tf2onnx's NCHW -> NHWC -> activation -> NCHW around a convolution's output.
  const auto around = [](const std::string& op, std::vector<int64_t> p2, bool second_reader = false) {
    GraphBuilder b = with_input({2, 3, 4, 5});
    b.scalar("lo", -20.0f).scalar("hi", 30.0f);
    b.node("Transpose", {"x"}, {"t1"}, {{"perm", ints({0, 2, 3, 1})}});
    b.node(op, op == "Clip" ? std::vector<std::string>{"t1", "lo", "hi"} : std::vector<std::string>{"t1"}, {"u"});
    b.node("Transpose", {"u"}, {"y"}, {{"perm", ints(std::move(p2))}}).output("y");
    if (second_reader) b.node("Neg", {"u"}, {"z"}).output("z");
    return b;
  };
  for (const std::string op : {"LeakyRelu", "Relu", "Sigmoid", "Clip"}) {
    const GraphBuilder b = around(op, {0, 3, 1, 2});
    int n = 0;
    ir::Graph g = no_ops(b, &n);
    EXPECT_EQ(n, 1) << op;
    g = run_pass(passes::eliminate_dead_code, g);
    ASSERT_EQ(g.nodes.size(), 1u) << op;
    EXPECT_EQ(g.nodes[0].op_type, op);
    EXPECT_EQ(g.nodes[0].inputs[0], "x");
    EXPECT_EQ(g.nodes[0].outputs, std::vector<std::string>{"y"});
    EXPECT_EQ(max_difference(b.graph(), g, inputs_for(b.graph(), {2, 3, 4, 5}, 5)), 0.0) << op;
  }
  int n = -1;
  no_ops(around("Relu", {0, 2, 3, 1}), &n);
  EXPECT_EQ(n, 0) << "perms that do not cancel";
  no_ops(around("Relu", {0, 3, 1, 2}, true), &n);
  EXPECT_EQ(n, 0) << "the activation has another reader";
  no_ops(around("Softmax", {0, 3, 1, 2}), &n);
  EXPECT_EQ(n, 0) << "Softmax depends on the layout";
}

TEST(EliminateNoOps, CollapsesReshapeChainsWhenTheLastShapeStandsAlone) {
  GraphBuilder b = with_input();
  b.ints_constant("s1", {6, 4}).ints_constant("s2", {-1, 12});
  b.node("Reshape", {"x", "s1"}, {"r1"}).node("Reshape", {"r1", "s2"}, {"r2"}).node("Neg", {"r2"}, {"y"}).output("y");
  ir::Graph g = no_ops(b);
  g = run_pass(passes::eliminate_dead_code, g);
  ASSERT_EQ(count_ops(g, "Reshape"), 1);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "s2"}));
  EXPECT_EQ(max_difference(b.graph(), g, inputs_for(b.graph(), {2, 3, 4}, 5)), 0.0);
  GraphBuilder flat = with_input();
  flat.ints_constant("s", {4, 6}).node("Flatten", {"x"}, {"f"}).node("Reshape", {"f", "s"}, {"r"});
  flat.node("Neg", {"r"}, {"y"}).output("y");
  g = no_ops(flat);
  g = run_pass(passes::eliminate_dead_code, g);
  EXPECT_EQ(count_ops(g, "Flatten"), 0) << "Flatten -> Reshape";
  EXPECT_EQ(max_difference(flat.graph(), g, inputs_for(flat.graph(), {2, 3, 4}, 6)), 0.0);
  // 0 copies an extent of the intermediate: the chain stays.
  GraphBuilder zero = with_input();
  zero.ints_constant("s1", {6, 4}).ints_constant("s2", {0, 2, 2});
  zero.node("Reshape", {"x", "s1"}, {"r1"}).node("Reshape", {"r1", "s2"}, {"r2"}).node("Neg", {"r2"}, {"y"}).output("y");
  int n = -1;
  no_ops(zero, &n);
  EXPECT_EQ(n, 0) << "0 in the last shape";
  // A computed last shape: the chain stays.
  GraphBuilder computed = with_input();
  computed.input("s2", {2}, {}, DType::I64).ints_constant("s1", {6, 4});
  computed.node("Reshape", {"x", "s1"}, {"r1"}).node("Reshape", {"r1", "s2"}, {"r2"}).output("r2");
  no_ops(computed, &n);
  EXPECT_EQ(n, 0) << "computed shape";
}

TEST(EliminateNoOps, DropsSlicesOfEveryElement) {
  auto slice = [](std::vector<int64_t> dims, std::vector<int64_t> starts, std::vector<int64_t> ends,
                  std::vector<int64_t> axes, std::vector<int64_t> steps) {
    GraphBuilder b = with_input(dims);
    b.ints_constant("starts", starts).ints_constant("ends", ends).ints_constant("axes", axes);
    b.ints_constant("steps", steps);
    b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"}).node("Neg", {"s"}, {"y"}).output("y");
    return b;
  };
  expect_nodes_after(slice({2, 3, 4}, {0}, {kEnd}, {1}, {1}), 1, {2, 3, 4}, "[:, 0:]");
  expect_nodes_after(slice({-1, 3, 4}, {0, -3}, {kEnd, 3}, {0, 1}, {1, 1}), 1, {2, 3, 4}, "[0:, -3:3]");
  expect_nodes_after(slice({2, 3, 4}, {0}, {3}, {2}, {1}), 2, {2, 3, 4}, "ends short of the extent");
  expect_nodes_after(slice({2, 3, 4}, {1}, {kEnd}, {0}, {1}), 2, {2, 3, 4}, "starts past 0");
  expect_nodes_after(slice({2, 3, 4}, {0}, {kEnd}, {1}, {2}), 2, {2, 3, 4}, "step 2");
  expect_nodes_after(slice({-1, 3, 4}, {0}, {100}, {0}, {1}), 2, {2, 3, 4}, "symbolic extent, finite end");
  // Opset 9: starts and ends as attributes.
  GraphBuilder old = with_input({2, 3, 4}, DType::F32, 9);
  old.node("Slice", {"x"}, {"s"}, {{"starts", ints({0, 0})}, {"ends", ints({2, 1000})}, {"axes", ints({0, 2})}});
  old.node("Neg", {"s"}, {"y"}).output("y");
  expect_nodes_after(old, 1, {2, 3, 4}, "opset 9 Slice");
}

TEST(EliminateNoOps, DropsPadsByZero) {
  auto pad = [](std::vector<int64_t> pads, const char* mode) {
    GraphBuilder b = with_input({2, 3, 4});
    b.ints_constant("pads", pads);
    b.node("Pad", {"x", "pads"}, {"p"}, {{"mode", string_attr(mode)}}).node("Neg", {"p"}, {"y"}).output("y");
    return b;
  };
  expect_nodes_after(pad({0, 0, 0, 0, 0, 0}, "constant"), 1, {2, 3, 4}, "zero pads");
  expect_nodes_after(pad({0, 0, 0, 0, 0, 0}, "reflect"), 1, {2, 3, 4}, "zero pads, reflect");
  expect_nodes_after(pad({0, 0, 1, 0, 0, 0}, "constant"), 2, {2, 3, 4}, "one pad at the start");
  expect_nodes_after(pad({0, 0, 0, 0, 0, -1}, "constant"), 2, {2, 3, 4}, "a negative pad (a crop)");
  // Opset 9: pads as an attribute.
  GraphBuilder old = with_input({2, 3, 4}, DType::F32, 9);
  old.node("Pad", {"x"}, {"p"}, {{"pads", ints({0, 0, 0, 0, 0, 0})}}).node("Neg", {"p"}, {"y"}).output("y");
  expect_nodes_after(old, 1, {2, 3, 4}, "opset 9 Pad");
  GraphBuilder old_padded = with_input({2, 3, 4}, DType::F32, 9);
  old_padded.node("Pad", {"x"}, {"p"}, {{"pads", ints({0, 1, 0, 0, 0, 0})}}).node("Neg", {"p"}, {"y"}).output("y");
  expect_nodes_after(old_padded, 2, {2, 3, 4}, "opset 9 Pad by one");
}

TEST(EliminateNoOps, DropsConcatsOfOneInput) {
  GraphBuilder one = with_input({2, 3, 4});
  one.node("Concat", {"x"}, {"c"}, {{"axis", int_attr(1)}}).node("Neg", {"c"}, {"y"}).output("y");
  expect_nodes_after(one, 1, {2, 3, 4}, "one input");
  GraphBuilder two = with_input({2, 3, 4});
  two.node("Concat", {"x", "x"}, {"c"}, {{"axis", int_attr(1)}}).node("Neg", {"c"}, {"y"}).output("y");
  expect_nodes_after(two, 2, {2, 3, 4}, "two inputs");
}

TEST(EliminateNoOps, KeepsNoOpsThatNameAGraphOutput) {
  GraphBuilder b = with_input();
  b.node("Cast", {"x"}, {"c"}, {{"to", to(DType::F32)}}).node("Transpose", {"c"}, {"y"}, {{"perm", ints({0, 1, 2})}});
  b.output("c").output("y");
  int n = -1;
  const ir::Graph g = no_ops(b, &n);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(g.nodes.size(), 2u);
  // A Transpose pair composing to the identity into a graph output becomes one Identity.
  GraphBuilder pair = with_input();
  pair.node("Transpose", {"x"}, {"t"}, {{"perm", ints({2, 0, 1})}}).node("Transpose", {"t"}, {"y"}, {{"perm", ints({1, 2, 0})}});
  pair.output("y");
  ir::Graph g2 = no_ops(pair);
  g2 = run_pass(passes::eliminate_dead_code, g2);
  ASSERT_EQ(g2.nodes.size(), 1u);
  EXPECT_EQ(g2.nodes[0].op_type, "Identity");
  EXPECT_EQ(g2.nodes[0].outputs[0], "y");
}

}  // namespace
}  // namespace ignis::fuse_test
