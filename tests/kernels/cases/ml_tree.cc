// SPDX-License-Identifier: Apache-2.0
// Tree ensemble cases (ai.onnx.ml TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble):
// random forests of odd sizes (1 to 41 trees, leaves from 1 deep to 9 deep, trees of a single
// leaf), every branch mode each op has, missing-value tracking, every aggregate and post
// transform, base values, binary classifiers with one column of votes, leaves with several
// votes (some twice for one target) and leaves that vote once for every target. Inputs mix small integers (so EQ, NEQ and MEMBER branches meet equal values and
// integer thresholds meet ties), reals and NaN. Trees and outputs are compared exactly
// (error_scale 0): a fast kernel must add a row's votes in the reference's order.
#include <algorithm>
#include <random>

#include "core/strings.h"
#include "kernels/cases/cases.h"
#include "testing/op_runner.h"

namespace ignis::kernel_cases {

namespace {

enum class Format { Legacy, Unified };  // versions 1 and 3, or TreeEnsemble (5)

struct ForestSpec {
  int trees = 3;
  int depth = 4;          // the deepest leaf
  int64_t features = 5;
  int64_t targets = 1;    // targets or classes
  int rows = 7;
  std::vector<int> modes;  // TreeEnsemble-5 codes (0 LEQ .. 6 MEMBER) the branches draw from
  bool missing = false;    // some branches send NaN to the true child
  bool one_column = false;  // every vote for class 0 (binary classifiers)
  int max_votes = 1;        // votes per leaf, 1..max_votes
  bool every_target = false;  // each leaf votes once for every target, in shuffled order
};

// One tree in creation order: node 0 is the root; leaves have mode -1.
struct Node {
  int mode = -1;
  int64_t feature = 0;
  float split = 0;
  int missing = 0;
  int true_child = -1, false_child = -1;
  std::vector<std::pair<int64_t, float>> votes;  // leaves: (target, weight)
  std::vector<float> members;                    // MEMBER branches
};

// Splits and member values come from the input's small integers or reals in [-1, 1].
float draw_value(std::mt19937& rng) {
  std::uniform_int_distribution<int> kind(0, 2);
  if (kind(rng) == 0) return std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  return static_cast<float>(std::uniform_int_distribution<int>(0, 3)(rng));
}

void grow(std::vector<Node>& tree, int at, int depth, const ForestSpec& s, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const bool leaf = depth >= s.depth || (depth > 0 && u(rng) < 0.25);
  if (leaf && s.every_target) {
    std::vector<int64_t> order(static_cast<size_t>(s.targets));
    for (int64_t t = 0; t < s.targets; ++t) order[t] = t;
    std::shuffle(order.begin(), order.end(), rng);
    for (int64_t t : order) tree[at].votes.push_back({t, std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng)});
    return;
  }
  if (leaf) {
    const int votes = std::uniform_int_distribution<int>(1, s.max_votes)(rng);
    for (int v = 0; v < votes; ++v) {
      const int64_t target = s.one_column ? 0 : std::uniform_int_distribution<int64_t>(0, s.targets - 1)(rng);
      tree[at].votes.push_back({target, std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng)});
    }
    return;
  }
  Node& n = tree[at];
  n.mode = s.modes[std::uniform_int_distribution<size_t>(0, s.modes.size() - 1)(rng)];
  n.feature = std::uniform_int_distribution<int64_t>(0, s.features - 1)(rng);
  n.split = draw_value(rng);
  n.missing = s.missing && u(rng) < 0.5 ? 1 : 0;
  if (n.mode == 6) {
    const int count = std::uniform_int_distribution<int>(1, 3)(rng);
    for (int i = 0; i < count; ++i) n.members.push_back(draw_value(rng));
  }
  const int t = static_cast<int>(tree.size());
  tree.resize(tree.size() + 2);
  tree[at].true_child = t;
  tree[at].false_child = t + 1;
  grow(tree, t, depth + 1, s, rng);
  grow(tree, t + 1, depth + 1, s, rng);
}

std::vector<std::vector<Node>> random_forest(const ForestSpec& s, std::mt19937& rng) {
  std::vector<std::vector<Node>> forest(static_cast<size_t>(s.trees));
  for (auto& tree : forest) {
    tree.resize(1);
    grow(tree, 0, 0, s, rng);
  }
  return forest;
}

// `v` as a one-dimensional tensor attribute of `dtype`.
template <class T>
Attribute tensor_attr(DType dtype, const std::vector<T>& v) {
  Tensor t = Tensor::empty(dtype, Shape{static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<T>()[i] = v[i];
  return testing::attr_tensor(std::move(t));
}

// Versions 1 and 3: nodes by (tree, id), votes by (tree, leaf id). `prefix` is "target" or "class".
void set_legacy(AttrMap& a, const std::vector<std::vector<Node>>& forest, const std::string& prefix) {
  static const char* kModes[] = {"BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"};
  std::vector<int64_t> tree_ids, node_ids, features, trues, falses, missing, vote_trees, vote_nodes, vote_ids;
  std::vector<std::string> modes;
  std::vector<float> values, weights;
  for (size_t t = 0; t < forest.size(); ++t) {
    for (size_t i = 0; i < forest[t].size(); ++i) {
      const Node& n = forest[t][i];
      tree_ids.push_back(static_cast<int64_t>(t));
      node_ids.push_back(static_cast<int64_t>(i));
      features.push_back(n.mode < 0 ? 0 : n.feature);
      trues.push_back(n.mode < 0 ? 0 : n.true_child);
      falses.push_back(n.mode < 0 ? 0 : n.false_child);
      missing.push_back(n.missing);
      modes.push_back(n.mode < 0 ? "LEAF" : kModes[n.mode]);
      values.push_back(n.split);
      for (const auto& [target, w] : n.votes) {
        vote_trees.push_back(static_cast<int64_t>(t));
        vote_nodes.push_back(static_cast<int64_t>(i));
        vote_ids.push_back(target);
        weights.push_back(w);
      }
    }
  }
  a.set("nodes_treeids", ints_attr(tree_ids));
  a.set("nodes_nodeids", ints_attr(node_ids));
  a.set("nodes_featureids", ints_attr(features));
  a.set("nodes_truenodeids", ints_attr(trues));
  a.set("nodes_falsenodeids", ints_attr(falses));
  a.set("nodes_missing_value_tracks_true", ints_attr(missing));
  a.set("nodes_modes", testing::attr_strings(modes));
  a.set("nodes_values", testing::attr_floats(values));
  a.set(prefix + "_treeids", ints_attr(vote_trees));
  a.set(prefix + "_nodeids", ints_attr(vote_nodes));
  a.set(prefix + "_ids", ints_attr(vote_ids));
  a.set(prefix + "_weights", testing::attr_floats(weights));
}

// TreeEnsemble (5): branches and leaves in two lists; a leaf has one vote, so one with several
// keeps its first.
void set_unified(AttrMap& a, const std::vector<std::vector<Node>>& forest) {
  std::vector<int64_t> features, trues, true_leafs, falses, false_leafs, missing, leaf_targets, roots;
  std::vector<uint8_t> modes;
  std::vector<float> splits, weights, members;
  for (const auto& tree : forest) {
    // Index of each node among the forest's branches or leaves.
    std::vector<int64_t> index(tree.size());
    int64_t branches = static_cast<int64_t>(features.size()), leaves = static_cast<int64_t>(leaf_targets.size());
    for (size_t i = 0; i < tree.size(); ++i) index[i] = tree[i].mode < 0 ? leaves++ : branches++;
    if (tree[0].mode < 0) {
      // A single-leaf tree: version 5 roots are branches, so one whose children are both the leaf.
      roots.push_back(static_cast<int64_t>(features.size()));
      features.push_back(0);
      modes.push_back(0);
      splits.push_back(0.0f);
      missing.push_back(0);
      trues.push_back(index[0]);
      falses.push_back(index[0]);
      true_leafs.push_back(1);
      false_leafs.push_back(1);
    } else {
      roots.push_back(index[0]);
    }
    for (const Node& n : tree) {
      if (n.mode < 0) {
        leaf_targets.push_back(n.votes[0].first);
        weights.push_back(n.votes[0].second);
        continue;
      }
      features.push_back(n.feature);
      modes.push_back(static_cast<uint8_t>(n.mode));
      splits.push_back(n.split);
      missing.push_back(n.missing);
      trues.push_back(index[n.true_child]);
      true_leafs.push_back(tree[n.true_child].mode < 0 ? 1 : 0);
      falses.push_back(index[n.false_child]);
      false_leafs.push_back(tree[n.false_child].mode < 0 ? 1 : 0);
      if (n.mode == 6) {
        members.insert(members.end(), n.members.begin(), n.members.end());
        members.push_back(std::numeric_limits<float>::quiet_NaN());
      }
    }
  }
  a.set("nodes_featureids", ints_attr(features));
  a.set("nodes_modes", tensor_attr(DType::U8, modes));
  a.set("nodes_splits", tensor_attr(DType::F32, splits));
  a.set("nodes_truenodeids", ints_attr(trues));
  a.set("nodes_trueleafs", ints_attr(true_leafs));
  a.set("nodes_falsenodeids", ints_attr(falses));
  a.set("nodes_falseleafs", ints_attr(false_leafs));
  a.set("nodes_missing_value_tracks_true", ints_attr(missing));
  a.set("leaf_targetids", ints_attr(leaf_targets));
  a.set("leaf_weights", tensor_attr(DType::F32, weights));
  a.set("tree_roots", ints_attr(roots));
  if (!members.empty()) a.set("membership_values", tensor_attr(DType::F32, members));
}

// X: small integers, reals in [-1, 1] and (with missing) NaN.
std::vector<double> random_rows(const ForestSpec& s, std::mt19937& rng) {
  std::vector<double> x(static_cast<size_t>(s.rows * s.features));
  std::uniform_int_distribution<int> kind(0, 9);
  for (double& v : x) {
    const int k = kind(rng);
    v = k == 0 && s.missing ? std::numeric_limits<double>::quiet_NaN()
        : k < 5             ? static_cast<double>(std::uniform_int_distribution<int>(0, 3)(rng))
                            : std::uniform_real_distribution<double>(-1.0, 1.0)(rng);
  }
  return x;
}

std::vector<float> random_base(int64_t n, std::mt19937& rng) {
  std::vector<float> b(static_cast<size_t>(n));
  for (float& v : b) v = std::uniform_real_distribution<float>(-0.5f, 0.5f)(rng);
  return b;
}

KernelCase forest_case(const std::string& op, int64_t opset, const ForestSpec& s, uint32_t seed) {
  std::mt19937 rng(seed);
  KernelCase c;
  c.domain = "ai.onnx.ml";
  c.op_type = op;
  c.opset = opset;
  c.inputs = {Shape{s.rows, s.features}};
  c.input_values = {random_rows(s, rng)};
  c.error_scale = 0;  // exact
  c.label = str_cat(s.trees, " trees of depth <= ", s.depth, ", ", s.features, " features, ", s.targets,
                    " targets, ", s.rows, " rows, modes");
  for (int m : s.modes) c.label += str_cat(" ", m);
  if (s.missing) c.label += ", missing values";
  const auto forest = random_forest(s, rng);
  if (op == "TreeEnsemble") set_unified(c.attrs, forest);
  else set_legacy(c.attrs, forest, op == "TreeEnsembleClassifier" ? "class" : "target");
  return c;
}

// Branch modes by version-5 code.
const std::vector<int> kOrdered = {0, 1, 2, 3};
const std::vector<int> kLegacyAll = {0, 1, 2, 3, 4, 5};
const std::vector<int> kUnifiedAll = {0, 1, 2, 3, 4, 5, 6};

std::vector<ForestSpec> forest_specs(const std::vector<int>& all_modes) {
  std::vector<ForestSpec> specs;
  specs.push_back({.trees = 1, .depth = 0, .rows = 3, .modes = {0}});  // a single leaf
  for (int mode : all_modes) specs.push_back({.trees = 3, .depth = 3, .rows = 9, .modes = {mode}});
  for (int mode : {0, 3}) specs.push_back({.trees = 5, .depth = 5, .rows = 11, .modes = {mode}, .missing = true});
  specs.push_back({.trees = 7, .depth = 6, .features = 9, .rows = 17, .modes = kOrdered});
  specs.push_back({.trees = 11, .depth = 9, .features = 13, .rows = 37, .modes = all_modes, .missing = true});
  specs.push_back({.trees = 41, .depth = 7, .features = 6, .rows = 101, .modes = {0}});  // split over threads
  return specs;
}

}  // namespace

std::vector<KernelCase> tree_ensemble_regressor_cases() {
  std::vector<KernelCase> cases;
  uint32_t seed = 1;
  static const char* kAggregates[] = {"SUM", "AVERAGE", "MIN", "MAX"};
  static const char* kTransforms[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  size_t variant = 0;
  for (ForestSpec s : forest_specs(kLegacyAll)) {
    s.targets = 1 + static_cast<int64_t>(variant % 3);
    s.max_votes = 1 + static_cast<int>(variant % 2) * 2;
    s.every_target = variant % 4 == 0;
    KernelCase c = forest_case("TreeEnsembleRegressor", variant % 2 ? 3 : 1, s, seed++);
    c.attrs.set("n_targets", int_attr(s.targets));
    c.attrs.set("aggregate_function", string_attr(kAggregates[variant % 4]));
    c.attrs.set("post_transform", string_attr(kTransforms[variant % 5]));
    std::mt19937 rng(seed++);
    if (variant % 3 != 1) c.attrs.set("base_values", testing::attr_floats(random_base(s.targets, rng)));
    c.label += str_cat(", ", kAggregates[variant % 4], ", ", kTransforms[variant % 5]);
    cases.push_back(std::move(c));
    ++variant;
  }
  return cases;
}

std::vector<KernelCase> tree_ensemble_classifier_cases() {
  std::vector<KernelCase> cases;
  uint32_t seed = 101;
  static const char* kTransforms[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  size_t variant = 0;
  for (ForestSpec s : forest_specs(kLegacyAll)) {
    // Every third forest is binary with one column of votes (PROBIT is not defined for it).
    s.one_column = variant % 3 == 2;
    // Otherwise 3+ classes: two whose votes happen to fall on class 0 only read as one column.
    s.targets = s.one_column ? 2 : 3 + static_cast<int64_t>(variant % 3);
    s.max_votes = s.one_column ? 1 : 1 + static_cast<int>(variant % 3);
    s.every_target = variant % 3 == 0;  // as scikit-learn's forests vote
    const char* transform = kTransforms[variant % (s.one_column ? 3 : 5)];
    KernelCase c = forest_case("TreeEnsembleClassifier", variant % 2 ? 3 : 1, s, seed++);
    std::vector<int64_t> labels;
    for (int64_t j = 0; j < s.targets; ++j) labels.push_back(10 * j + 5);
    c.attrs.set("classlabels_int64s", ints_attr(labels));
    c.attrs.set("post_transform", string_attr(transform));
    std::mt19937 rng(seed++);
    if (variant % 2 == 0) c.attrs.set("base_values", testing::attr_floats(random_base(s.one_column ? 1 : s.targets, rng)));
    c.label += str_cat(", ", transform, s.one_column ? ", one column" : "");
    cases.push_back(std::move(c));
    ++variant;
  }
  return cases;
}

std::vector<KernelCase> tree_ensemble_cases() {
  std::vector<KernelCase> cases;
  uint32_t seed = 201;
  size_t variant = 0;
  for (ForestSpec s : forest_specs(kUnifiedAll)) {
    s.targets = 1 + static_cast<int64_t>(variant % 3);
    KernelCase c = forest_case("TreeEnsemble", 5, s, seed++);
    c.attrs.set("n_targets", int_attr(s.targets));
    c.attrs.set("aggregate_function", int_attr(static_cast<int64_t>(variant % 4)));
    c.attrs.set("post_transform", int_attr(static_cast<int64_t>(variant % 5)));
    c.label += str_cat(", aggregate ", variant % 4, ", post_transform ", variant % 5);
    cases.push_back(std::move(c));
    ++variant;
  }
  return cases;
}

}  // namespace ignis::kernel_cases
