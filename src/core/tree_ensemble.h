// SPDX-License-Identifier: Apache-2.0
// The tree ensembles of the ONNX ML domain (TreeEnsembleRegressor and TreeEnsembleClassifier
// versions 1 and 3, TreeEnsemble version 5) read from their attributes into one validated form:
// shape inference uses it to report malformed models, the reference kernel to walk the trees.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/attribute.h"
#include "ignis/dtype.h"
#include "ignis/status.h"

namespace ignis {

enum class TreeNodeMode : uint8_t { Leq, Lt, Gte, Gt, Eq, Neq, Member, Leaf };
enum class TreeAggregate : uint8_t { Sum, Average, Min, Max };

struct TreeNode {
  TreeNodeMode mode = TreeNodeMode::Leaf;
  bool missing_tracks_true = false;  // a NaN feature takes the true branch
  int64_t feature = 0;
  double threshold = 0;
  // Branches: indices into TreeEnsembleModel::nodes. A child is never an ancestor (no cycles);
  // branches whose two children are one node (a single-leaf tree) are bypassed, never reached.
  int32_t true_child = 0;
  int32_t false_child = 0;
  // Leaf: its votes, weights[first, first + count). Member: its set, members[first, first + count).
  int32_t first = 0;
  int32_t count = 0;
};

struct TreeVote {
  int64_t target;  // target (regressors) or class index (classifiers)
  double weight;
};

struct TreeEnsembleModel {
  std::vector<TreeNode> nodes;
  std::vector<int32_t> roots;  // one per tree
  std::vector<TreeVote> weights;
  std::vector<double> members;
  std::vector<double> base_values;  // empty, or one per target (one in total for binary_one_column)
  int64_t targets = 1;              // n_targets, or the number of classes
  TreeAggregate aggregate = TreeAggregate::Sum;
  std::string post_transform = "NONE";
  int64_t max_feature = -1;  // the largest feature index a reachable branch reads
  // The type thresholds and votes are given in: TreeEnsemble-5's type T; for versions 1 and 3,
  // float64 when an *_as_tensor attribute holds doubles, float32 otherwise.
  DType value_dtype = DType::Undefined;

  // Classifiers. Two classes scored by one column of votes (every class id 0): that column is
  // the positive class's score s, and onnxruntime's convention is followed: the label is the
  // positive one when s > 0.5 (all votes >= 0) or s > 0 (some vote negative), and the scores
  // are [1 - s, s] or [-s, s] in the same two cases, [logistic(-s), logistic(s)] for LOGISTIC.
  std::vector<int64_t> class_labels;              // classlabels_int64s, or
  std::vector<std::string> class_label_strings;  // classlabels_strings
  bool binary_one_column = false;
  bool votes_nonnegative = true;
};

// Each reads and checks the op's attributes: array lengths, node and tree ids, children inside
// their tree, no cycles, every leaf with at least one vote, targets and classes in range.
// Errors are InvalidArgument (malformed) or Unsupported (valid but not implemented: a single
// class...), with messages naming the attribute.
Result<TreeEnsembleModel> read_tree_ensemble_regressor(const AttrMap& attrs);
Result<TreeEnsembleModel> read_tree_ensemble_classifier(const AttrMap& attrs);
Result<TreeEnsembleModel> read_tree_ensemble(const AttrMap& attrs);  // TreeEnsemble (ai.onnx.ml 5)

}  // namespace ignis
