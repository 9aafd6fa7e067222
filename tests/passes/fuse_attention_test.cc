// SPDX-License-Identifier: Apache-2.0
// fuse_attention: the BERT self-attention subgraph -> ai.ignis.Attention.
#include "passes/fuse_test_util.h"

namespace ignis::fuse_test {
namespace {

constexpr int64_t kHeads = 2, kHead = 4, kHidden = kHeads * kHead;

struct Options {
  bool dynamic_shapes = true;   // torch-style Shape/Gather/Concat targets, else [0, 0, H, D]
  bool mask = true;
  bool mask_first = false;      // Add(mask, scores)
  bool mul_scale = false;       // Mul(scores, 1/sqrt(D)) instead of Div(scores, sqrt(D))
  int64_t softmax_axis = -1;
  std::vector<int64_t> k_perm = {0, 2, 3, 1};
  bool scores_output = false;   // the scaled scores are also a graph output
  std::vector<int64_t> h_dims = {-1, -1, kHidden};
  std::vector<int64_t> mask_dims = {-1, 1, 1, -1};
};

// Reshape target for `v`: [dim0(v), dim1(v), tail...], built as torch exports it.
void dynamic_target(GraphBuilder& b, const std::string& v, const std::vector<int64_t>& tail, const std::string& out) {
  b.node("Shape", {v}, {v + "_shape"});
  std::vector<std::string> parts;
  for (int i = 0; i < 2; ++i) {
    const std::string idx = v + "_i" + std::to_string(i), g = v + "_g" + std::to_string(i);
    b.int_scalar(idx, i).node("Gather", {v + "_shape", idx}, {g}, {{"axis", int_attr(0)}});
    b.node("Unsqueeze", {g, "axes0"}, {g + "_u"});
    parts.push_back(g + "_u");
  }
  b.ints_constant(out + "_tail", tail);
  parts.push_back(out + "_tail");
  b.node("Concat", parts, {out}, {{"axis", int_attr(0)}});
}

GraphBuilder attention(const Options& o) {
  GraphBuilder b;
  std::vector<std::string> names = {"batch", "seq", ""};
  for (size_t i = 0; i < names.size(); ++i)
    if (o.h_dims[i] >= 0) names[i] = "";
  b.input("h", o.h_dims, names);
  if (o.mask) {
    std::vector<std::string> mnames = {"batch", "", "", "seq"};
    for (size_t i = 0; i < mnames.size(); ++i)
      if (o.mask_dims[i] >= 0) mnames[i] = "";
    b.input("mask", o.mask_dims, mnames);
  }
  b.ints_constant("axes0", {0}).ints_constant("heads", {0, 0, kHeads, kHead}).ints_constant("merge", {0, 0, kHidden});
  for (const char* p : {"q", "k", "v"}) {
    const std::string s = p;
    b.weight("W" + s, {kHidden, kHidden}, static_cast<uint32_t>(s[0]), -0.5f, 0.5f);
    b.weight("b" + s, {kHidden}, static_cast<uint32_t>(s[0]) + 1);
    b.node("MatMul", {"h", "W" + s}, {s + "_mm"}).node("Add", {"b" + s, s + "_mm"}, {s});
    std::string target = "heads";
    if (o.dynamic_shapes) {
      target = s + "_target";
      dynamic_target(b, s, {kHeads, kHead}, target);
    }
    b.node("Reshape", {s, target}, {s + "_4d"});
    const std::vector<int64_t> perm = s == "k" ? o.k_perm : std::vector<int64_t>{0, 2, 1, 3};
    b.node("Transpose", {s + "_4d"}, {s + "_t"}, {{"perm", ints(perm)}});
  }
  b.node("MatMul", {"q_t", "k_t"}, {"qk"});
  if (o.mul_scale) b.scalar("scale", 0.5f).node("Mul", {"scale", "qk"}, {"scaled"});
  else b.scalar("scale", 2.0f).node("Div", {"qk", "scale"}, {"scaled"});
  std::string scores = "scaled";
  if (o.mask) {
    if (o.mask_first) b.node("Add", {"mask", "scaled"}, {"masked"});
    else b.node("Add", {"scaled", "mask"}, {"masked"});
    scores = "masked";
  }
  b.node("Softmax", {scores}, {"p"}, {{"axis", int_attr(o.softmax_axis)}});
  b.node("MatMul", {"p", "v_t"}, {"ctx"}).node("Transpose", {"ctx"}, {"ctx_t"}, {{"perm", ints({0, 2, 1, 3})}});
  std::string merge = "merge";
  if (o.dynamic_shapes) {
    merge = "ctx_target";
    dynamic_target(b, "ctx_t", {kHidden}, merge);
  }
  b.node("Reshape", {"ctx_t", merge}, {"att"});
  b.weight("Wo", {kHidden, kHidden}, 9).node("MatMul", {"att", "Wo"}, {"y"}).output("y");
  if (o.scores_output) b.output("scaled");
  return b;
}

NamedTensors feeds(const GraphBuilder& b, int64_t batch = 2, int64_t seq = 5, uint32_t seed = 1) {
  std::vector<std::vector<int64_t>> shapes = {{batch, seq, kHidden}};
  if (b.graph().inputs.size() > 1) shapes.push_back({batch, 1, 1, seq});
  NamedTensors f = random_inputs(b.graph(), shapes, seed);
  if (f.size() > 1) {  // a padding mask: the last key of every row is masked out
    Tensor& m = f[1].second;
    for (int64_t i = 0; i < m.numel(); ++i) m.data_as<float>()[i] = (i % seq == seq - 1) ? -3.4e38f : 0.0f;
  }
  return f;
}

TEST(FuseAttention, FusesTheBertSubgraph) {
  for (bool dynamic : {true, false}) {
    for (bool mask_first : {false, true}) {
      Options o;
      o.dynamic_shapes = dynamic;
      o.mask_first = mask_first;
      GraphBuilder b = attention(o);
      int n = 0;
      const ir::Graph g = run_pass(passes::fuse_attention, b.graph(), &n);
      EXPECT_EQ(n, 1);
      const ir::Node* a = find_op(g, "Attention");
      ASSERT_NE(a, nullptr);
      EXPECT_EQ(a->inputs, (std::vector<std::string>{"q", "k", "v", "mask"}));
      EXPECT_EQ(a->outputs, std::vector<std::string>{"att"});
      EXPECT_EQ(a->attrs.get_int("num_heads"), kHeads);
      EXPECT_EQ(a->attrs.get_float("scale"), 0.5f);
      for (const char* op : {"Transpose", "Softmax", "Reshape", "Div"}) EXPECT_EQ(count_ops(g, op), 0) << op;
      EXPECT_EQ(count_ops(g, "MatMul"), 4);  // the projections remain
      // The shape chains of q, k, v are dead now; the pipeline's dead-code pass removes them.
      const ir::Graph all = optimized(b.graph());
      EXPECT_EQ(count_ops(all, "Shape"), 0);
      EXPECT_EQ(count_ops(all, "Attention", "ai.ignis"), 1);
      EXPECT_EQ(count_ops(all, "FusedMatMul", "ai.ignis"), 3);  // the biased projections
      EXPECT_EQ(count_ops(all, "MatMul"), 1);
      EXPECT_LT(optimized_vs_plain(b.graph(), feeds(b)), 1e-5);
    }
  }
}

TEST(FuseAttention, FusesWithoutMaskAndWithAMultipliedScale) {
  Options o;
  o.mask = false;
  o.mul_scale = true;
  GraphBuilder b = attention(o);
  const ir::Graph g = run_pass(passes::fuse_attention, b.graph());
  const ir::Node* a = find_op(g, "Attention");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->inputs.size(), 3u);
  EXPECT_EQ(a->attrs.get_float("scale"), 0.5f);
  EXPECT_LT(optimized_vs_plain(b.graph(), feeds(b, 3, 4)), 1e-5);
}

TEST(FuseAttention, LeavesOtherAxesPermutationsAndSharedScores) {
  auto fused = [](const Options& o) {
    return count_ops(run_pass(passes::fuse_attention, attention(o).graph()), "Attention", "ai.ignis");
  };
  Options axis;
  axis.softmax_axis = 2;
  EXPECT_EQ(fused(axis), 0);
  Options perm;  // K^T through [0, 2, 1, 3] is not the transposed key
  perm.k_perm = {0, 2, 1, 3};
  EXPECT_EQ(fused(perm), 0);
  Options shared;
  shared.scores_output = true;
  EXPECT_EQ(fused(shared), 0);
  // A mask provably wider than the scores (batch 3 against batch 1) broadcasts them up.
  Options wide;
  wide.h_dims = {1, -1, kHidden};
  wide.mask_dims = {3, 1, 1, -1};
  EXPECT_EQ(fused(wide), 0);
  GraphBuilder b = attention(wide);
  NamedTensors f = random_inputs(b.graph(), {{1, 4, kHidden}, {3, 1, 1, 4}}, 7);
  EXPECT_LT(optimized_vs_plain(b.graph(), f), 1e-5);
}

}  // namespace
}  // namespace ignis::fuse_test
