// SPDX-License-Identifier: Apache-2.0
// GraphFacts: what the fusion passes may assume about dtypes, ranks and extents.
#include "passes/graph_facts.h"

#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

std::string dims(const passes::GraphFacts& f, const std::string& v) {
  const passes::ValueFact& fact = f[v];
  if (!fact.has_rank()) return "?";
  std::string s = "[";
  for (int i = 0; i < fact.rank; ++i) {
    const passes::DimFact& d = fact.dims[i];
    s += (i ? ", " : "") + (d.is_fixed() ? std::to_string(d.value) : d.symbol);
  }
  return s + "]";
}

TEST(GraphFacts, PropagatesDtypesRanksAndExtentsThroughKnownOps) {
  GraphBuilder b;
  b.input("x", {-1, 3, 16, 16}, {"batch", "", "", ""}).input("ids", {-1, -1}, {"batch", "seq"}, DType::I64);
  b.weight("W", {8, 3, 3, 3}, 1).weight("table", {100, 32}, 2).weight("proj", {32, 5}, 3);
  b.node("Conv", {"x", "W"}, {"c"}, {{"strides", ints({2, 2})}, {"pads", ints({1, 1, 1, 1})}});
  b.node("MaxPool", {"c"}, {"p"}, {{"kernel_shape", ints({2, 2})}, {"strides", ints({2, 2})}});
  b.node("GlobalAveragePool", {"p"}, {"gap"}).node("Flatten", {"gap"}, {"flat"});
  b.node("Gather", {"table", "ids"}, {"emb"}).node("MatMul", {"emb", "proj"}, {"m"});
  b.node("Transpose", {"m"}, {"t"}, {{"perm", ints({2, 0, 1})}});
  b.node("Cast", {"m"}, {"m64"}, {{"to", int_attr(11)}}).node("Shape", {"m"}, {"shape"});
  b.ints_constant("axes", {1}).node("Unsqueeze", {"m", "axes"}, {"u"});
  b.ints_constant("target", {0, -1}).node("Reshape", {"m", "target"}, {"r"});
  b.node("Equal", {"ids", "ids"}, {"eq"}).node("NonZero", {"eq"}, {"nz"});
  // -1 among fixed extents: the element count over them, a symbol kept when it is the rest.
  b.ints_constant("gate", {-1, 8, 1, 1}).node("Reshape", {"gap", "gate"}, {"g"});
  b.ints_constant("rows", {-1, 27}).node("Reshape", {"W", "rows"}, {"w2"});
  b.ints_constant("cols", {-1, 16}).node("Reshape", {"p", "cols"}, {"p2"});
  b.ints_constant("last", {-1, 5}).node("Reshape", {"m", "last"}, {"m2"});
  const passes::GraphFacts f(b.graph());
  EXPECT_EQ(dims(f, "g"), "[batch, 8, 1, 1]");
  EXPECT_EQ(dims(f, "w2"), "[8, 27]");
  // 128 * batch elements in rows of 16, and batch * seq rows of 5: no extent known.
  for (const char* v : {"p2", "m2"}) {
    EXPECT_EQ(f.rank(v), 2) << v;
    EXPECT_FALSE(f[std::string(v)].dims[0].is_fixed()) << v;
    EXPECT_NE(f[std::string(v)].dims[0].symbol, "batch") << v;
  }
  EXPECT_EQ(dims(f, "c"), "[batch, 8, 8, 8]");
  EXPECT_EQ(dims(f, "p"), "[batch, 8, 4, 4]");
  EXPECT_EQ(dims(f, "gap"), "[batch, 8, 1, 1]");
  EXPECT_EQ(dims(f, "flat"), "[batch, 8]");
  EXPECT_EQ(dims(f, "emb"), "[batch, seq, 32]");
  EXPECT_EQ(dims(f, "m"), "[batch, seq, 5]");
  EXPECT_EQ(dims(f, "t"), "[5, batch, seq]");
  EXPECT_EQ(f.dtype("m64"), DType::F64);
  EXPECT_EQ(dims(f, "shape"), "[3]");
  EXPECT_EQ(f.dtype("shape"), DType::I64);
  EXPECT_EQ(dims(f, "u"), "[batch, 1, seq, 5]");
  EXPECT_EQ(f.rank("r"), 2);
  EXPECT_EQ(f[std::string("r")].dims[0].symbol, "batch");  // 0 copies the extent
  EXPECT_EQ(f.dtype("eq"), DType::Bool);
  EXPECT_EQ(f.rank("nz"), 2);
  EXPECT_TRUE(f.same_shape("m", "m"));
  EXPECT_FALSE(f.same_shape("m", "emb"));
}

// QuantizeLinear / DequantizeLinear keep the shape; the element type is the zero point's (Q)
// or the scale's (DQ). onnxruntime's quantize_dynamic writes an embedding table as int8 with a
// DequantizeLinear after its Gather: without these rules every later value had no rank, and
// the transformer's attention did not fuse.
TEST(GraphFacts, QuantizeAndDequantizeKeepTheShape) {
  GraphBuilder b;
  b.input("ids", {-1, -1}, {"batch", "seq"}, DType::I64).input("x", {-1, 3, 8}, {"batch", "", ""});
  b.scalar("s", 0.1f);
  b.node("QuantizeLinear", {"x", "s", "zi8"}, {"q8"}).node("QuantizeLinear", {"x", "s"}, {"qu8"});
  b.node("DequantizeLinear", {"q8", "s", "zi8"}, {"d"});
  b.node("Gather", {"table", "ids"}, {"rows"}).node("DequantizeLinear", {"rows", "s", "zi8"}, {"emb"});
  ir::Graph g = b.graph();
  Tensor table = Tensor::empty(DType::I8, Shape{50, 16});
  for (int64_t i = 0; i < table.numel(); ++i) table.data_as<int8_t>()[i] = static_cast<int8_t>(i % 7);
  g.initializers["table"] = table;
  g.initializers["zi8"] = Tensor::empty(DType::I8, Shape{});
  g.initializers["zi8"].data_as<int8_t>()[0] = 0;
  const passes::GraphFacts f(g);
  EXPECT_EQ(dims(f, "q8"), "[batch, 3, 8]");
  EXPECT_EQ(f.dtype("q8"), DType::I8);
  EXPECT_EQ(f.dtype("qu8"), DType::U8);
  EXPECT_EQ(dims(f, "d"), "[batch, 3, 8]");
  EXPECT_EQ(f.dtype("d"), DType::F32);
  EXPECT_EQ(dims(f, "emb"), "[batch, seq, 16]");
  EXPECT_EQ(f.dtype("emb"), DType::F32);
}

TEST(GraphFacts, BroadcastsOnlyWhatValidityImplies) {
  GraphBuilder b;
  b.input("a", {-1, 4}, {"n", ""}).input("b", {1, 4}).input("c", {-1, 1}, {"m", ""}).input("d", {-1, 4}, {"k", ""});
  b.node("Add", {"a", "b"}, {"ab"}).node("Add", {"a", "c"}, {"ac"}).node("Add", {"a", "d"}, {"ad"});
  b.node("Relu", {"ad"}, {"r"}).node("Unknown", {"a"}, {"u"});
  const passes::GraphFacts f(b.graph());
  EXPECT_EQ(dims(f, "ab"), "[n, 4]");
  EXPECT_EQ(f[std::string("ac")].dims[1].value, 4);
  // n against m: either may be 1, so the result is only "this Add's extent", shared by the
  // values computed from it and by nothing else.
  const passes::DimFact& n_or_k = f[std::string("ad")].dims[0];
  EXPECT_FALSE(n_or_k.is_fixed());
  EXPECT_NE(n_or_k.symbol, "n");
  EXPECT_NE(n_or_k.symbol, "k");
  EXPECT_TRUE(f.same_shape("ad", "r"));
  EXPECT_FALSE(f.same_shape("ad", "a"));
  EXPECT_EQ(f.rank("u"), -1);
  EXPECT_EQ(f.dtype("u"), DType::Undefined);
  EXPECT_EQ(f.rank("not_a_value"), -1);
}

// A torch export's reshape of a computed shape (an audio front-end: a 1-D filterbank Conv,
// then its frames cut into two halves of 64 bins): Shape -> Gather -> Unsqueeze -> Concat with
// constants gives the Reshape a target the optimizer can read, its batch extent included.
TEST(GraphFacts, ReadsReshapeTargetsBuiltFromShapes) {
  GraphBuilder b(13);
  b.input("wave", {-1, 1, 16000}, {"batch", "", ""}).weight("fb", {128, 1, 400}, 1);
  b.node("Conv", {"wave", "fb"}, {"spec"}, {{"strides", ints({160})}, {"pads", ints({200, 200})}});
  b.node("Shape", {"spec"}, {"shape"});
  // Scalar indices, as torch writes them: Gather then drops the axis.
  b.ints_constant("axis0", {0}).int_scalar("zero", 0).int_scalar("two", 2).int_scalar("one", 1);
  b.node("Gather", {"shape", "zero"}, {"n1"}).node("Gather", {"shape", "two"}, {"t1"});
  b.node("Unsqueeze", {"n1", "axis0"}, {"n"}).node("Unsqueeze", {"t1", "axis0"}, {"t"});
  b.ints_constant("halves", {2}).ints_constant("bins", {64});
  b.node("Concat", {"n", "halves", "bins", "t"}, {"target"}, {{"axis", int_attr(0)}});
  b.node("Reshape", {"spec", "target"}, {"r"});
  // -1 with the rest known; a computed extent that 0 could stand for (x's own extent there):
  // not taken, since 0 copies x's extent there.
  b.ints_constant("minus", {-1}).node("Concat", {"n", "minus", "t"}, {"target2"}, {{"axis", int_attr(0)}});
  b.node("Reshape", {"spec", "target2"}, {"r2"});
  b.node("Shape", {"r"}, {"rshape"});
  b.node("Gather", {"rshape", "one"}, {"two_again"});
  b.node("Concat", {"t", "n"}, {"swapped"}, {{"axis", int_attr(0)}});
  b.node("Reshape", {"spec", "swapped"}, {"r3"});
  const passes::GraphFacts f(b.graph());
  EXPECT_EQ(dims(f, "spec"), "[batch, 128, 101]");
  EXPECT_EQ(dims(f, "r"), "[batch, 2, 64, 101]");
  EXPECT_EQ(dims(f, "r2"), "[batch, 128, 101]");
  ASSERT_EQ(f["two_again"].contents.size(), 1u);
  EXPECT_EQ(f["two_again"].contents[0].value, 2);
  // [101, batch] from [batch, 128, 101]: 101 is fixed; batch at position 1 is not x's extent
  // there (128), and a batch of 0 would copy 128, so it stays unknown.
  EXPECT_EQ(f["r3"].dims[0].value, 101);
  EXPECT_FALSE(f["r3"].dims[1].is_fixed());
  EXPECT_NE(f["r3"].dims[1].symbol, "batch");
}

}  // namespace
}  // namespace ignis::fuse_test
