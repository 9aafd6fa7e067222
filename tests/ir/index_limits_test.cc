// SPDX-License-Identifier: Apache-2.0
#include "ir/index_limits.h"

#include <gtest/gtest.h>

#include "testing/graph_attr.h"

namespace ignis::ir {
namespace {

using testing::graph_attr;

Node make_node(std::string op, std::vector<std::string> in, std::vector<std::string> out, int64_t axis = 0) {
  Node n;
  n.name = out.empty() ? op : out[0];
  n.op_type = std::move(op);
  n.inputs = std::move(in);
  n.outputs = std::move(out);
  if (axis != 0) {
    Attribute a;
    a.kind = Attribute::Kind::Int;
    a.i = axis;
    n.attrs.set("axis", a);
  }
  return n;
}

// A BERT-style embedding front: word table of 30 rows, token-type table of 2 rows.
Graph embeddings() {
  Graph g;
  g.inputs.push_back({"input_ids", DType::I64, {1, 8}, {"", ""}, true});
  g.inputs.push_back({"token_type_ids", DType::I64, {1, 8}, {"", ""}, true});
  g.inputs.push_back({"attention_mask", DType::I64, {1, 8}, {"", ""}, true});
  g.inputs.push_back({"x", DType::F32, {1, 8}, {"", ""}, true});
  g.initializers.emplace("word", Tensor::zeros(DType::F32, Shape{30, 4}));
  g.initializers.emplace("type", Tensor::zeros(DType::F32, Shape{2, 4}));
  g.nodes.push_back(make_node("Gather", {"word", "input_ids"}, {"we"}));
  g.nodes.push_back(make_node("Cast", {"token_type_ids"}, {"tt32"}));
  g.nodes.push_back(make_node("Unsqueeze", {"tt32", "axes"}, {"tt3"}));
  g.nodes.push_back(make_node("Reshape", {"tt3", "shape"}, {"tt"}));
  g.nodes.push_back(make_node("Gather", {"type", "tt"}, {"te"}));
  g.nodes.push_back(make_node("Cast", {"attention_mask"}, {"maskf"}));
  g.nodes.push_back(make_node("Add", {"we", "te"}, {"y"}));
  return g;
}

TEST(GatherIndexLimits, BoundsInputsByTheTablesTheyIndex) {
  auto limits = gather_index_limits(embeddings());
  EXPECT_EQ(limits, (std::map<std::string, int64_t>{{"input_ids", 30}, {"token_type_ids", 2}}));
}

TEST(GatherIndexLimits, TakesTheSmallestTableAlongTheGatherAxis) {
  Graph g = embeddings();
  g.initializers.emplace("cols", Tensor::zeros(DType::F32, Shape{100, 7}));
  g.nodes.push_back(make_node("Gather", {"cols", "input_ids"}, {"c"}, /*axis=*/-1));
  g.initializers.emplace("big", Tensor::zeros(DType::F32, Shape{50, 4}));
  g.nodes.push_back(make_node("GatherElements", {"big", "input_ids"}, {"b"}));
  EXPECT_EQ(gather_index_limits(g).at("input_ids"), 7);
}

TEST(GatherIndexLimits, IgnoresShapeInputsArithmeticAndNonConstantTables) {
  Graph g;
  g.inputs.push_back({"ids", DType::I64, {4}, {""}, true});
  g.inputs.push_back({"shape", DType::I64, {2}, {""}, true});
  g.inputs.push_back({"table", DType::F32, {3, 4}, {"", ""}, true});
  g.initializers.emplace("w", Tensor::zeros(DType::F32, Shape{5, 4}));
  g.nodes.push_back(make_node("Gather", {"table", "ids"}, {"a"}));  // table is not an initializer
  g.nodes.push_back(make_node("Reshape", {"w", "shape"}, {"r"}));   // a shape, not indices
  g.nodes.push_back(make_node("Add", {"ids", "ids"}, {"sum"}));     // arithmetic ends the chain
  g.nodes.push_back(make_node("Gather", {"w", "sum"}, {"b"}));
  EXPECT_TRUE(gather_index_limits(g).empty());
}


TEST(GatherIndexLimits, FollowsCapturedInputsIntoBodies) {
  // ids reaches a Loop body through the outer scope: the body gathers from the outer table
  // (8 rows) and, in a nested If, from its own (5 rows).
  Graph inner;
  inner.initializers.emplace("small", Tensor::zeros(DType::F32, Shape{5, 4}));
  inner.nodes.push_back(make_node("Gather", {"small", "ids32"}, {"s"}));
  inner.outputs.push_back({"s", DType::F32, {}, {}, false});
  Graph body;
  body.inputs.push_back({"i", DType::I64, {}, {}, true});
  body.inputs.push_back({"cond", DType::Bool, {}, {}, true});
  body.nodes.push_back(make_node("Gather", {"table", "ids32"}, {"t"}));
  Node nested = make_node("If", {"cond"}, {"u"});
  nested.attrs.set("then_branch", graph_attr(inner));
  nested.attrs.set("else_branch", graph_attr(inner));
  nested.inputs.push_back("ids32");
  body.nodes.push_back(nested);
  body.outputs.push_back({"cond", DType::Bool, {}, {}, false});
  body.outputs.push_back({"t", DType::F32, {}, {}, false});
  Graph g;
  g.inputs.push_back({"ids", DType::I64, {3}, {""}, true});
  g.inputs.push_back({"other", DType::I64, {3}, {""}, true});
  g.initializers.emplace("table", Tensor::zeros(DType::F32, Shape{8, 4}));
  g.nodes.push_back(make_node("Cast", {"ids"}, {"ids32"}));
  Node loop = make_node("Loop", {"", "", "other"}, {"y"});
  loop.attrs.set("body", graph_attr(body));
  ASSERT_EQ(outer_scope_names(loop.attrs), (std::vector<std::string>{"ids32", "table"}));
  loop.inputs.push_back("ids32");
  loop.inputs.push_back("table");
  g.nodes.push_back(loop);
  EXPECT_EQ(gather_index_limits(g), (std::map<std::string, int64_t>{{"ids", 5}}));
  // Without the nested If the outer table bounds it.
  body.nodes.pop_back();
  g.nodes[1].attrs.set("body", graph_attr(body));
  EXPECT_EQ(gather_index_limits(g), (std::map<std::string, int64_t>{{"ids", 8}}));
}

}  // namespace
}  // namespace ignis::ir
