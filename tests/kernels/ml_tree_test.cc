// SPDX-License-Identifier: Apache-2.0
// Tests for the tree ensembles of ai.onnx.ml (TreeEnsembleRegressor, TreeEnsembleClassifier,
// TreeEnsemble): branch modes, missing values, aggregation, post transforms, input types, the
// thread pool, and the errors malformed ensembles get. Expected values come from plain formulas
// written here, or, where onnxruntime's convention decides (binary classifiers, classes without
// votes), from onnxruntime 1.32 run on the same nodes.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/nn_test_util.h"

namespace ignis::nn_test {
namespace {

constexpr const char* kMl = "ai.onnx.ml";
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();

OpCall tree_call(const std::string& op, int64_t opset, Tensor x) {
  OpCall call;
  call.op_type = op;
  call.domain = kMl;
  call.opset = opset;
  call.inputs = {std::move(x)};
  return call;
}

// Tree `tree` of a version 1/3 ensemble as a stump: node 0 compares `feature` with `threshold`
// and leads to leaf 1 (true) or leaf 2 (false). Appends to the nodes_* attribute lists.
struct LegacyNodes {
  std::vector<int64_t> tree_ids, node_ids, features, trues, falses, missing;
  std::vector<std::string> modes;
  std::vector<float> values;

  void add_stump(int64_t tree, const std::string& mode, int64_t feature, float threshold, bool missing_true = false) {
    for (int64_t id = 0; id < 3; ++id) {
      tree_ids.push_back(tree);
      node_ids.push_back(id);
      features.push_back(id == 0 ? feature : 0);
      trues.push_back(id == 0 ? 1 : 0);
      falses.push_back(id == 0 ? 2 : 0);
      missing.push_back(id == 0 && missing_true ? 1 : 0);
      modes.push_back(id == 0 ? mode : "LEAF");
      values.push_back(id == 0 ? threshold : 0.0f);
    }
  }
  void set_on(OpCall& call, bool with_values = true) const {
    call.attrs.set("nodes_treeids", attr_ints(tree_ids));
    call.attrs.set("nodes_nodeids", attr_ints(node_ids));
    call.attrs.set("nodes_featureids", attr_ints(features));
    call.attrs.set("nodes_truenodeids", attr_ints(trues));
    call.attrs.set("nodes_falsenodeids", attr_ints(falses));
    call.attrs.set("nodes_missing_value_tracks_true", attr_ints(missing));
    call.attrs.set("nodes_modes", attr_strings(modes));
    if (with_values) call.attrs.set("nodes_values", attr_floats(values));
  }
};

// Votes (prefix "target" or "class"): (tree, node, id, weight) each.
struct Votes {
  std::vector<int64_t> trees, nodes, ids;
  std::vector<float> weights;
  void add(int64_t tree, int64_t node, int64_t id, float w) {
    trees.push_back(tree);
    nodes.push_back(node);
    ids.push_back(id);
    weights.push_back(w);
  }
  void set_on(OpCall& call, const std::string& prefix, bool with_weights = true) const {
    call.attrs.set(prefix + "_treeids", attr_ints(trees));
    call.attrs.set(prefix + "_nodeids", attr_ints(nodes));
    call.attrs.set(prefix + "_ids", attr_ints(ids));
    if (with_weights) call.attrs.set(prefix + "_weights", attr_floats(weights));
  }
};

OpCall regressor_call(int64_t opset, Tensor x, const LegacyNodes& nodes, const Votes& votes, int64_t targets) {
  OpCall call = tree_call("TreeEnsembleRegressor", opset, std::move(x));
  nodes.set_on(call);
  votes.set_on(call, "target");
  call.attrs.set("n_targets", attr_int(targets));
  return call;
}

// One stump regressor: true leaf 10, false leaf 20, one target.
OpCall stump_regressor(const std::string& mode, bool missing_true, Tensor x) {
  LegacyNodes nodes;
  nodes.add_stump(0, mode, 0, 1.0f, missing_true);
  Votes votes;
  votes.add(0, 1, 0, 10.0f);
  votes.add(0, 2, 0, 20.0f);
  return regressor_call(3, std::move(x), nodes, votes, 1);
}

TEST(TreeEnsembleRegressor, EveryBranchModeAndMissingValues) {
  const std::vector<float> x = {0.5f, 1.0f, 1.5f, kNan};
  const std::vector<std::pair<std::string, std::function<bool(float)>>> modes = {
      {"BRANCH_LEQ", [](float v) { return v <= 1.0f; }}, {"BRANCH_LT", [](float v) { return v < 1.0f; }},
      {"BRANCH_GTE", [](float v) { return v >= 1.0f; }}, {"BRANCH_GT", [](float v) { return v > 1.0f; }},
      {"BRANCH_EQ", [](float v) { return v == 1.0f; }},  {"BRANCH_NEQ", [](float v) { return v != 1.0f; }}};
  for (const auto& [mode, cmp] : modes) {
    for (bool missing_true : {false, true}) {
      auto r = run_op(stump_regressor(mode, missing_true, make_tensor_f32({4, 1}, x)));
      ASSERT_TRUE(r) << r.error().to_string();
      std::vector<double> want;
      for (float v : x) want.push_back(cmp(v) || (missing_true && std::isnan(v)) ? 10.0 : 20.0);
      expect_close((*r)[0], want, 0, 0, mode + (missing_true ? " missing->true" : ""));
    }
  }
}

// Three stumps on features 0, 1, 2 (threshold 0, BRANCH_LEQ); target 0 gets every tree's vote,
// target 1 only tree 2's, target 2 none (it is its base value).
OpCall three_stumps(const std::string& aggregate, Tensor x) {
  LegacyNodes nodes;
  Votes votes;
  const float w_true[3] = {1.0f, 2.0f, 4.0f}, w_false[3] = {-1.0f, 8.0f, -3.0f};
  for (int64_t t = 0; t < 3; ++t) {
    nodes.add_stump(t, "BRANCH_LEQ", t, 0.0f);
    votes.add(t, 1, 0, w_true[t]);
    votes.add(t, 2, 0, w_false[t]);
  }
  votes.add(2, 1, 1, 0.5f);
  votes.add(2, 2, 1, -0.5f);
  OpCall call = regressor_call(1, std::move(x), nodes, votes, 3);
  call.attrs.set("base_values", attr_floats({100.0f, 200.0f, 300.0f}));
  call.attrs.set("aggregate_function", attr_string(aggregate));
  return call;
}

TEST(TreeEnsembleRegressor, AggregatesTreesAndAddsBaseValues) {
  // Row 0 takes the true leaves of trees 0 and 2 and the false leaf of tree 1; row 1 the others.
  const std::vector<float> x = {-1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f};
  const std::vector<std::vector<double>> target0 = {{1, 8, 4}, {-1, 2, -3}};
  const std::vector<double> target1 = {0.5, -0.5};
  for (const std::string agg : {"SUM", "AVERAGE", "MIN", "MAX"}) {
    auto r = run_op(three_stumps(agg, make_tensor_f32({2, 3}, x)));
    ASSERT_TRUE(r) << r.error().to_string();
    std::vector<double> want;
    for (int row = 0; row < 2; ++row) {
      const auto& v = target0[row];
      double a = v[0] + v[1] + v[2];
      if (agg == "AVERAGE") a /= 3;
      if (agg == "MIN") a = std::min({v[0], v[1], v[2]});
      if (agg == "MAX") a = std::max({v[0], v[1], v[2]});
      const double b = agg == "AVERAGE" ? target1[row] / 3 : target1[row];
      want.insert(want.end(), {100 + a, 200 + b, 300});
    }
    expect_close((*r)[0], want, 1e-6, 1e-6, "aggregate " + agg);
  }
}

TEST(TreeEnsembleRegressor, PostTransformsEachRow) {
  const std::vector<float> x = {-1.0f, 1.0f, -1.0f, 1.0f, -1.0f, 1.0f};
  for (const std::string pt : {"LOGISTIC", "SOFTMAX"}) {
    OpCall call = three_stumps("SUM", make_tensor_f32({2, 3}, x));
    call.attrs.set("base_values", attr_floats({0.1f, -0.2f, 0.3f}));
    call.attrs.set("post_transform", attr_string(pt));
    auto r = run_op(call);
    ASSERT_TRUE(r) << r.error().to_string();
    std::vector<double> want;
    for (const std::vector<double>& raw :
         {std::vector<double>{13.0 + 0.1, 0.5 - 0.2, 0.3}, std::vector<double>{-2.0 + 0.1, -0.5 - 0.2, 0.3}}) {
      double sum = 0;
      for (double v : raw) sum += std::exp(v);
      for (double v : raw) want.push_back(pt == "LOGISTIC" ? 1 / (1 + std::exp(-v)) : std::exp(v) / sum);
    }
    expect_close((*r)[0], want, 1e-6, 1e-6, pt);
  }
}

TEST(TreeEnsembleRegressor, ManyRowsOverThreadPool) {
  constexpr int64_t kRows = 3001;
  const std::vector<float> x = random_floats(kRows * 3, 17);
  OpCall call = three_stumps("SUM", make_tensor_f32({kRows, 3}, x));
  auto r = run_op_threads(call, 4);
  ASSERT_TRUE(r) << r.error().to_string();
  std::vector<double> want;
  for (int64_t i = 0; i < kRows; ++i) {
    const float* row = x.data() + i * 3;
    const double a = (row[0] <= 0 ? 1 : -1) + (row[1] <= 0 ? 2 : 8) + (row[2] <= 0 ? 4 : -3);
    want.insert(want.end(), {100 + a, 200 + (row[2] <= 0 ? 0.5 : -0.5), 300});
  }
  expect_close((*r)[0], want, 1e-6, 1e-6, "3001 rows, 4 threads");
}

TEST(TreeEnsembleRegressor, IntegerAndOneDimensionalInputs) {
  auto r = run_op(stump_regressor("BRANCH_LEQ", false, make_tensor_i64({3, 1}, {0, 1, 2})));
  ASSERT_TRUE(r) << r.error().to_string();
  expect_close((*r)[0], {10, 10, 20}, 0, 0, "int64 input");
  auto one = run_op(stump_regressor("BRANCH_LEQ", false, make_tensor_f32({2}, {3.0f, 0.0f})));
  ASSERT_TRUE(one) << one.error().to_string();
  EXPECT_EQ((*one)[0].shape(), Shape({1, 1}));
  expect_close((*one)[0], {20}, 0, 0, "1-D input is one row");
}

// A stump regressor (version 3) whose threshold (0.1) and votes (1, 2) are double tensors.
OpCall double_stump(Tensor x) {
  OpCall call = tree_call("TreeEnsembleRegressor", 3, std::move(x));
  LegacyNodes nodes;
  nodes.add_stump(0, "BRANCH_LEQ", 0, 0.0f);
  nodes.set_on(call, /*with_values=*/false);
  call.attrs.set("nodes_values_as_tensor", attr_tensor(make_tensor<double>({3}, {0.1, 0, 0})));
  Votes votes;
  votes.add(0, 1, 0, 0);
  votes.add(0, 2, 0, 0);
  votes.set_on(call, "target", /*with_weights=*/false);
  call.attrs.set("target_weights_as_tensor", attr_tensor(make_tensor<double>({2}, {1.0, 2.0})));
  call.attrs.set("n_targets", attr_int(1));
  return call;
}

TEST(TreeEnsembleRegressor, DoubleAttributesAreComparedInDouble) {
  // 0.1 + 1e-10 and float(0.1) = 0.10000000149 are above the double threshold 0.1; compared
  // with the threshold rounded to float (0.10000000149) both would take the true leaf.
  auto r = run_op(double_stump(make_tensor<double>({2, 1}, {0.1, 0.1 + 1e-10})));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ((*r)[0].dtype(), DType::F32);
  expect_close((*r)[0], {1, 2}, 0, 0, "double input");
  auto f = run_op(double_stump(make_tensor_f32({2, 1}, {0.1f, 0.05f})));
  ASSERT_TRUE(f) << f.error().to_string();
  expect_close((*f)[0], {2, 1}, 0, 0, "float input");
}

// One stump (BRANCH_LEQ 0 on feature 0), leaves 1 and 2 voting `w_true`/`w_false` for class 0.
// The classes are labelled 3 and 7, or by `string_labels` when given.
OpCall binary_classifier(float w_true, float w_false, const std::string& post, Tensor x,
                         std::vector<std::string> string_labels = {}) {
  OpCall call = tree_call("TreeEnsembleClassifier", 1, std::move(x));
  LegacyNodes nodes;
  nodes.add_stump(0, "BRANCH_LEQ", 0, 0.0f);
  nodes.set_on(call);
  Votes votes;
  votes.add(0, 1, 0, w_true);
  votes.add(0, 2, 0, w_false);
  votes.set_on(call, "class");
  if (string_labels.empty()) call.attrs.set("classlabels_int64s", attr_ints({3, 7}));
  else call.attrs.set("classlabels_strings", attr_strings(std::move(string_labels)));
  call.attrs.set("post_transform", attr_string(post));
  call.num_outputs = 2;
  return call;
}

TEST(TreeEnsembleClassifier, BinaryWithOneColumnOfVotesFollowsOnnxruntime) {
  struct Case {
    float w_true, w_false;
    std::vector<float> base;
    std::string post;
    std::vector<double> scores;
  };
  const std::vector<Case> cases = {
      {0.2f, 0.8f, {}, "NONE", {0.8, 0.2, 0.2, 0.8}},
      {0.2f, 0.8f, {}, "LOGISTIC", {0.45016605, 0.54983395, 0.3100255, 0.6899745}},
      {0.2f, 0.8f, {}, "SOFTMAX", {0.8, 0.2, 0.2, 0.8}},
      {-0.2f, 0.8f, {}, "NONE", {0.2, -0.2, -0.8, 0.8}},
      {-0.2f, 0.8f, {0.1f}, "LOGISTIC", {0.5249792, 0.47502083, 0.28905052, 0.7109495}},
  };
  for (const Case& c : cases) {
    OpCall call = binary_classifier(c.w_true, c.w_false, c.post, make_tensor_f32({2, 1}, {-1.0f, 1.0f}));
    if (!c.base.empty()) call.attrs.set("base_values", attr_floats(c.base));
    auto r = run_op(call);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{3, 7})) << c.post << " " << c.w_true;
    expect_close((*r)[1], c.scores, 1e-6, 1e-6, "binary " + c.post);
  }
  // Integer inputs are compared as float.
  auto r = run_op(binary_classifier(0.2f, 0.8f, "NONE", make_tensor_i64({2, 1}, {-1, 1})));
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{3, 7}));
}

TEST(TreeEnsembleClassifier, LabelIsTheBestClassThatGotVotes) {
  // Row 0 votes -0.4 for class 2, row 1 -0.3 for class 1: class 0 (score 0) never wins.
  for (const std::string post : {"NONE", "SOFTMAX"}) {
    OpCall call = tree_call("TreeEnsembleClassifier", 3, make_tensor_f32({2, 1}, {-1.0f, 1.0f}));
    LegacyNodes nodes;
    nodes.add_stump(0, "BRANCH_LEQ", 0, 0.0f);
    nodes.set_on(call);
    Votes votes;
    votes.add(0, 1, 2, -0.4f);
    votes.add(0, 2, 1, -0.3f);
    votes.set_on(call, "class");
    call.attrs.set("classlabels_int64s", attr_ints({3, 7, 9}));
    call.attrs.set("post_transform", attr_string(post));
    call.num_outputs = 2;
    auto r = run_op(call);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ(values_of<int64_t>((*r)[0]), (std::vector<int64_t>{9, 7}));
    const std::vector<double> want =
        post == "NONE" ? std::vector<double>{0, 0, -0.4, 0, -0.3, 0}
                       : std::vector<double>{0.37448695, 0.37448695, 0.2510261, 0.36485454, 0.27029088, 0.36485454};
    expect_close((*r)[1], want, 1e-6, 1e-6, "multiclass " + post);
  }
}

TEST(TreeEnsembleClassifier, StringLabelsNameTheClasses) {
  // The first case of BinaryWithOneColumnOfVotesFollowsOnnxruntime, its classes named.
  auto r = run_op(binary_classifier(0.2f, 0.8f, "NONE", make_tensor_f32({2, 1}, {-1.0f, 1.0f}), {"no", "yes"}));
  ASSERT_TRUE(r) << r.error().to_string();
  ASSERT_EQ((*r)[0].dtype(), DType::String);
  EXPECT_EQ(values_of<std::string>((*r)[0]), (std::vector<std::string>{"no", "yes"}));
  expect_close((*r)[1], {0.8, 0.2, 0.2, 0.8}, 1e-6, 1e-6, "binary with string labels");

  // Integer and string labels together are ambiguous.
  OpCall both = binary_classifier(0.2f, 0.8f, "NONE", make_tensor_f32({1, 1}, {1.0f}), {"no", "yes"});
  both.attrs.set("classlabels_int64s", attr_ints({3, 7}));
  EXPECT_EQ(expect_op_error(both, "'classlabels_strings'"), StatusCode::InvalidArgument);
}

// `call` runs; changed by `mutate` it must fail with InvalidArgument, its message containing
// `text` (and `label`).
void expect_rejected(OpCall call, const std::function<void(OpCall&)>& mutate, const std::string& text,
                     const std::string& label = "") {
  ASSERT_TRUE(run_op(call)) << "the unbroken ensemble must run";
  mutate(call);
  auto r = run_op(call);
  ASSERT_FALSE(r) << "expected an error containing: " << text;
  EXPECT_EQ(r.error().code(), StatusCode::InvalidArgument) << r.error().to_string();
  EXPECT_NE(r.error().message().find(text), std::string::npos) << r.error().message();
  EXPECT_NE(r.error().message().find(label), std::string::npos) << r.error().message();
}

// A valid regressor of two stumps (features 0 and 1) on a [1, 2] input.
OpCall two_stumps() {
  LegacyNodes nodes;
  Votes votes;
  for (int64_t t = 0; t < 2; ++t) {
    nodes.add_stump(t, "BRANCH_LEQ", t, 0.0f);
    votes.add(t, 1, 0, static_cast<float>(2 * t + 1));
    votes.add(t, 2, 0, static_cast<float>(2 * t + 2));
  }
  return regressor_call(3, make_tensor_f32({1, 2}, {0.0f, 0.0f}), nodes, votes, 1);
}

// Each case breaks one attribute of a valid two-tree regressor; the error must name it.
TEST(TreeEnsembleRegressor, MalformedEnsemblesAreRejectedWithTheirAttribute) {
  const std::vector<std::pair<std::function<void(OpCall&)>, std::string>> cases = {
      {[](OpCall& c) {
         c.attrs.set("nodes_featureids", attr_ints({0, 0, 0, 1, 0}));
       },
       "attribute 'nodes_featureids' has 5 values, expected 6"},
      {[](OpCall& c) {
         c.attrs.set("nodes_falsenodeids", attr_ints({7, 0, 0, 2, 0, 0}));
       },
       "attribute 'nodes_falsenodeids' points node 0 of tree 0 to node 7, which tree 0 does not have"},
      {[](OpCall& c) {
         c.attrs.set("nodes_nodeids", attr_ints({0, 1, 1, 0, 1, 2}));
       },
       "node id 1 appears twice in tree 0"},
      {[](OpCall& c) {
         // Node 1 of tree 1 becomes a branch back to its root.
         c.attrs.set("nodes_modes", attr_strings({"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_LEQ", "BRANCH_GT", "LEAF"}));
         c.attrs.set("nodes_truenodeids", attr_ints({1, 0, 0, 1, 0, 0}));
         c.attrs.set("nodes_falsenodeids", attr_ints({2, 0, 0, 2, 2, 0}));
       },
       "cycle: node 1 of tree 1 leads back to node 0 of tree 1"},
      {[](OpCall& c) {
         c.attrs.set("nodes_modes", attr_strings({"BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_FOO", "LEAF", "LEAF"}));
       },
       "attribute 'nodes_modes' has 'BRANCH_FOO' at index 3"},
      {[](OpCall& c) {
         c.attrs.set("target_ids", attr_ints({0, 0, 0, 5}));
       },
       "attribute 'target_ids' has 5 at index 3"},
      {[](OpCall& c) {
         c.attrs.set("target_nodeids", attr_ints({1, 2, 1, 9}));
       },
       "vote 3 is for node 9 of tree 1, which does not exist"},
      {[](OpCall& c) {
         c.attrs.set("target_nodeids", attr_ints({1, 2, 1, 1}));
       },
       "node 2 of tree 1 is a leaf without votes"},
      {[](OpCall& c) {
         c.attrs.set("nodes_featureids", attr_ints({0, 0, 0, 4, 0, 0}));
       },
       "the trees read feature 4 (attribute 'nodes_featureids') but input 0 ('X') has 2 features"},
      {[](OpCall& c) { c.attrs.set("aggregate_function", attr_string("MEDIAN")); }, "attribute 'aggregate_function'"},
      {[](OpCall& c) {
         c.attrs.set("base_values", attr_floats({1.0f, 2.0f}));
       },
       "attribute 'base_values' has 2 values, expected 1"},
      {[](OpCall& c) {
         c.attrs.set("nodes_values_as_tensor", attr_tensor(make_tensor<double>({6}, {0, 0, 0, 0, 0, 0})));
       },
       "attributes 'nodes_values' and 'nodes_values_as_tensor' are both set"},
      {[](OpCall& c) { c.attrs.set("n_targets", attr_int(0)); }, "attribute 'n_targets' must be >= 1"},
  };
  // The message starts with the node's label: "node '' (TreeEnsembleRegressor, opset 3): ...".
  for (const auto& [mutate, text] : cases)
    expect_rejected(two_stumps(), mutate, text, "(TreeEnsembleRegressor, opset 3)");
}

// ---- TreeEnsemble (ai.onnx.ml 5) ----------------------------------------------------------------

// Two trees over one feature: tree 0 is node 0 (x <= 0 ? leaf 0 : leaf 1), tree 1 node 1
// (x < 2 ? leaf 2 : leaf 3); leaves vote 1, 2 for target 0 and 4, 8 for target 1.
template <class T>
OpCall two_trees(Tensor x) {
  OpCall call = tree_call("TreeEnsemble", 5, std::move(x));
  Tensor modes = Tensor::empty(DType::U8, Shape({2}));
  modes.data_as<uint8_t>()[0] = 0;  // BRANCH_LEQ
  modes.data_as<uint8_t>()[1] = 1;  // BRANCH_LT
  call.attrs.set("nodes_modes", attr_tensor(modes));
  call.attrs.set("nodes_featureids", attr_ints({0, 0}));
  call.attrs.set("nodes_splits", attr_tensor(make_tensor<T>({2}, {from_compute<T>(0.0), from_compute<T>(2.0)})));
  call.attrs.set("nodes_truenodeids", attr_ints({0, 2}));
  call.attrs.set("nodes_trueleafs", attr_ints({1, 1}));
  call.attrs.set("nodes_falsenodeids", attr_ints({1, 3}));
  call.attrs.set("nodes_falseleafs", attr_ints({1, 1}));
  call.attrs.set("leaf_targetids", attr_ints({0, 0, 1, 1}));
  call.attrs.set("leaf_weights", attr_tensor(make_tensor<T>({4}, {from_compute<T>(1.0), from_compute<T>(2.0),
                                                                  from_compute<T>(4.0), from_compute<T>(8.0)})));
  call.attrs.set("tree_roots", attr_ints({0, 1}));
  call.attrs.set("n_targets", attr_int(2));
  return call;
}

TEST(TreeEnsemble, AveragesInEveryFloatType) {
  const std::vector<double> x = {-1.0, 1.0, 3.0};
  const std::vector<double> want = {0.5, 2.0, 1.0, 2.0, 1.0, 4.0};  // sum / 2 trees
  auto check = [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> xs;
    for (double v : x) xs.push_back(from_compute<T>(v));
    OpCall call = two_trees<T>(make_tensor<T>({3, 1}, xs));
    call.attrs.set("aggregate_function", attr_int(0));
    auto r = run_op(call);
    ASSERT_TRUE(r) << r.error().to_string();
    EXPECT_EQ((*r)[0].dtype(), dtype_of<T>());
    expect_close((*r)[0], want, 0, 0, str_cat("TreeEnsemble ", dtype_name(dtype_of<T>())));
  };
  check(float{});
  check(double{});
  check(Half{});
}

TEST(TreeEnsemble, SingleLeafTreeReadsNoFeature) {
  // Tree 1 is one leaf: node 1's branches both lead to leaf 2. Its feature (7) is never read.
  OpCall call = two_trees<float>(make_tensor_f32({2, 1}, {-1.0f, 1.0f}));
  call.attrs.set("nodes_featureids", attr_ints({0, 7}));
  call.attrs.set("nodes_falsenodeids", attr_ints({1, 2}));
  auto r = run_op(call);
  ASSERT_TRUE(r) << r.error().to_string();
  expect_close((*r)[0], {1, 4, 2, 4}, 0, 0, "single-leaf tree");
}

TEST(TreeEnsemble, MalformedAttributesAreRejectedWithTheirName) {
  auto modes_with = [](uint8_t second) {
    Tensor t = Tensor::empty(DType::U8, Shape({2}));
    t.data_as<uint8_t>()[0] = 0;
    t.data_as<uint8_t>()[1] = second;
    return attr_tensor(t);
  };
  const std::vector<std::pair<std::function<void(OpCall&)>, std::string>> cases = {
      {[](OpCall& c) {
         c.attrs.set("leaf_targetids", attr_ints({0, 0, 1, 2}));
       },
       "attribute 'leaf_targetids' has 2 at index 3, outside [0, 2)"},
      {[](OpCall& c) {
         c.attrs.set("nodes_truenodeids", attr_ints({0, 4}));
       },
       "attribute 'nodes_truenodeids' has 4 at index 1, outside [0, 4) (the leaves)"},
      {[](OpCall& c) {
         c.attrs.set("nodes_trueleafs", attr_ints({1, 2}));
       },
       "attribute 'nodes_trueleafs' has 2 at index 1, expected 0 or 1"},
      {[&](OpCall& c) { c.attrs.set("nodes_modes", modes_with(9)); }, "attribute 'nodes_modes' has 9 at index 1"},
      {[&](OpCall& c) { c.attrs.set("nodes_modes", modes_with(6)); },
       "attribute 'membership_values' is required: 1 nodes have mode BRANCH_MEMBER"},
      {[&](OpCall& c) {
         c.attrs.set("nodes_modes", modes_with(6));
         c.attrs.set("membership_values", attr_tensor(make_tensor_f32({3}, {1.0f, kNan, kNan})));
       },
       "attribute 'membership_values' must hold 1 NaN-terminated sets"},
      {[](OpCall& c) {
         c.attrs.set("tree_roots", attr_ints({0, 2}));
       },
       "attribute 'tree_roots' has 2 at index 1"},
      {[](OpCall& c) {
         // Node 1's false branch leads back to node 0, whose false branch leads to node 1.
         c.attrs.set("nodes_falsenodeids", attr_ints({1, 0}));
         c.attrs.set("nodes_falseleafs", attr_ints({0, 0}));
       },
       "the trees have a cycle: node 1 leads back to node 0"},
      {[](OpCall& c) {
         c.attrs.set("nodes_splits", attr_tensor(make_tensor<double>({2}, {0.0, 2.0})));
       },
       "attribute 'leaf_weights' must have the dtype of 'nodes_splits' (float64), got float32"},
      {[](OpCall& c) { c.attrs.set("post_transform", attr_int(7)); }, "attribute 'post_transform' must be 0 (NONE)"},
      {[](OpCall& c) {
         c.attrs.set("nodes_featureids", attr_ints({0, -1}));
       },
       "attribute 'nodes_featureids' has -1 at index 1"},
  };
  for (const auto& [mutate, text] : cases)
    expect_rejected(two_trees<float>(make_tensor_f32({1, 1}, {0.0f})), mutate, text);
}

}  // namespace
}  // namespace ignis::nn_test
