// SPDX-License-Identifier: Apache-2.0
// Reference kernels for the tree ensembles of the ONNX ML domain: TreeEnsembleRegressor and
// TreeEnsembleClassifier (versions 1 and 3) and TreeEnsemble (version 5). The kernel reads the
// ensemble once, when it is made (core/tree_ensemble), then walks every tree for each row, the
// rows spread over the thread pool.
//
// Thresholds, votes and base values are held in V, and inputs are compared and votes summed in
// V: double for double inputs or double attributes (*_as_tensor), float otherwise. That is how
// onnxruntime evaluates these ops, so a feature equal to a float threshold and a tie between two
// classes' votes come out as they do there. Where the spec leaves a case open, onnxruntime's
// answer is taken too: a target no reached leaf votes for aggregates to 0 (MIN and MAX
// included), and a classifier's label is the first highest-scoring class among those that got
// votes (or have base values). Where onnxruntime departs from the spec, ignis follows the spec:
// post_transform applies to a single target, every vote of a leaf counts, base values are added
// to targets without votes, a two-column binary classifier's label is one of its labels, and
// TreeEnsemble's post_transform 1 is SOFTMAX.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/strings.h"
#include "core/tree_ensemble.h"
#include "kernels/ref/ml_internal.h"
#include "kernels/ref/nn_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

enum class TreeOp { Regressor, Classifier, Unified };

// Rows per chunk of the parallel loop are sized so that a chunk walks about this many trees.
constexpr int64_t kTreesPerChunk = 4096;

// Row i of a [N, k] float, double or float16 output.
void store_row(Tensor& y, int64_t i, int64_t k, const double* row) {
  for (int64_t j = 0; j < k; ++j) {
    switch (y.dtype()) {
      case DType::F64: y.data_as<double>()[i * k + j] = row[j]; break;
      case DType::F16: y.data_as<Half>()[i * k + j] = from_compute<Half>(row[j]); break;
      default: y.data_as<float>()[i * k + j] = static_cast<float>(row[j]); break;
    }
  }
}

template <class V>
class TreeEnsembleKernel final : public Kernel {
 public:
  TreeEnsembleKernel(TreeEnsembleModel model, TreeOp op)
      : m_(std::move(model)), op_(op), post_(parse_post_transform(m_.post_transform)) {
    for (const TreeNode& n : m_.nodes) thresholds_.push_back(static_cast<V>(n.threshold));
    for (const TreeVote& v : m_.weights) votes_.push_back(static_cast<V>(v.weight));
    for (double v : m_.members) members_.push_back(static_cast<V>(v));
    for (double v : m_.base_values) base_.push_back(static_cast<V>(v));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t n = x.rank() == 1 ? 1 : x.dim(0);
    const int64_t c = x.rank() == 1 ? x.dim(0) : x.dim(1);
    if (m_.max_feature >= c)  // shape inference rejects this; restated so no read is out of bounds
      return internal_error(str_cat("tree ensemble reads feature ", m_.max_feature, " of ", c));
    switch (x.dtype()) {
      case DType::F32: run_rows(ctx, x.data_as<const float>(), n, c); break;
      case DType::F64: run_rows(ctx, x.data_as<const double>(), n, c); break;
      case DType::I64: run_rows(ctx, x.data_as<const int64_t>(), n, c); break;
      case DType::I32: run_rows(ctx, x.data_as<const int32_t>(), n, c); break;
      case DType::F16: {
        const std::vector<float> xf = to_float_vector(x);
        run_rows(ctx, xf.data(), n, c);
        break;
      }
      default: std::abort();  // the registrations admit these dtypes only
    }
    return Status::ok();
  }

 private:
  // The leaf of the tree rooted at `i` that `row` reaches.
  template <class X>
  int32_t leaf_of(int32_t i, const X* row) const {
    for (;;) {
      const TreeNode& node = m_.nodes[i];
      if (node.mode == TreeNodeMode::Leaf) return i;
      // Features are compared in V (integers as float, as onnxruntime does).
      const V v = static_cast<V>(row[node.feature]);
      const V t = thresholds_[i];
      bool yes = false;
      switch (node.mode) {
        case TreeNodeMode::Leq: yes = v <= t; break;
        case TreeNodeMode::Lt: yes = v < t; break;
        case TreeNodeMode::Gte: yes = v >= t; break;
        case TreeNodeMode::Gt: yes = v > t; break;
        case TreeNodeMode::Eq: yes = v == t; break;
        case TreeNodeMode::Neq: yes = v != t; break;
        case TreeNodeMode::Member: {
          const auto set = members_.begin() + node.first;
          yes = std::find(set, set + node.count, v) != set + node.count;
          break;
        }
        case TreeNodeMode::Leaf: break;
      }
      if (!yes && node.missing_tracks_true && std::isnan(v)) yes = true;
      i = yes ? node.true_child : node.false_child;
    }
  }

  void add_votes(int32_t leaf, V* score, uint8_t* has) const {
    const TreeNode& node = m_.nodes[leaf];
    for (int32_t j = node.first; j < node.first + node.count; ++j) {
      const auto t = static_cast<size_t>(m_.weights[j].target);
      const V w = votes_[j];
      if (m_.aggregate == TreeAggregate::Min)
        score[t] = has[t] ? std::min(score[t], w) : w;
      else if (m_.aggregate == TreeAggregate::Max)
        score[t] = has[t] ? std::max(score[t], w) : w;
      else
        score[t] += w;
      has[t] = 1;
    }
  }

  // Regressors: each target's aggregate plus its base value, transformed, into `out`.
  void regress_row(const V* score, const uint8_t* has, double* out) const {
    const int64_t k = m_.targets;
    const auto trees = static_cast<V>(m_.roots.size());
    for (int64_t t = 0; t < k; ++t) {
      V v = has[t] ? score[t] : V(0);
      if (m_.aggregate == TreeAggregate::Average) v /= trees;
      if (!base_.empty()) v += base_[t];
      out[t] = static_cast<double>(v);
    }
    post_transform_row(post_, out, k);
  }

  // Classifiers: the index of the label, and the class scores into `out`.
  size_t classify_row(const V* score, const uint8_t* has, double* out) const {
    if (m_.binary_one_column) {
      // Every vote is for class 0, so a tree always scores it (see TreeEnsembleModel).
      const V s = score[0] + (base_.empty() ? V(0) : base_[0]);
      const bool positive = m_.votes_nonnegative ? s > V(0.5) : s > V(0);
      if (post_ == PostTransform::Logistic) {
        out[0] = logistic(-static_cast<double>(s));
        out[1] = logistic(static_cast<double>(s));
      } else {
        out[0] = static_cast<double>(m_.votes_nonnegative ? V(1) - s : -s);
        out[1] = static_cast<double>(s);
      }
      return positive ? 1 : 0;
    }
    const int64_t k = m_.targets;
    int64_t best = -1;
    V best_score = V(0);
    for (int64_t j = 0; j < k; ++j) {
      V v = has[j] ? score[j] : V(0);
      if (!base_.empty()) v += base_[j];
      out[j] = static_cast<double>(v);
      if ((has[j] || !base_.empty()) && (best < 0 || v > best_score)) {
        best = j;
        best_score = v;
      }
    }
    post_transform_row(post_, out, k);
    return static_cast<size_t>(std::max<int64_t>(best, 0));
  }

  template <class X>
  void run_rows(KernelContext& ctx, const X* x, int64_t n, int64_t c) const {
    const int64_t k = m_.targets;
    const auto trees = static_cast<int64_t>(m_.roots.size());
    const int64_t grain = std::max<int64_t>(1, kTreesPerChunk / trees);
    const bool classify = op_ == TreeOp::Classifier;
    // Labels are int64 (classlabels_int64s) or strings (classlabels_strings).
    const bool string_labels = !m_.class_label_strings.empty();
    int64_t* labels = classify && ctx.has_output(0) && !string_labels ? ctx.output(0).data_as<int64_t>() : nullptr;
    std::string* label_strings =
        classify && ctx.has_output(0) && string_labels ? ctx.output(0).data_as<std::string>() : nullptr;
    float* scores_out = classify && ctx.has_output(1) ? ctx.output(1).data_as<float>() : nullptr;
    Tensor* y = ctx.has_output(0) ? &ctx.output(0) : nullptr;
    parallel_for(ctx.pool(), n, grain, [&](int64_t begin, int64_t end) {
      std::vector<V> score(static_cast<size_t>(k));
      std::vector<uint8_t> has(static_cast<size_t>(k));
      std::vector<double> row(static_cast<size_t>(k));
      for (int64_t i = begin; i < end; ++i) {
        std::fill(score.begin(), score.end(), V(0));
        std::fill(has.begin(), has.end(), uint8_t{0});
        for (const int32_t root : m_.roots) add_votes(leaf_of(root, x + i * c), score.data(), has.data());
        if (classify) {
          const size_t label = classify_row(score.data(), has.data(), row.data());
          if (labels != nullptr) labels[i] = m_.class_labels[label];
          if (label_strings != nullptr) label_strings[i] = m_.class_label_strings[label];
          if (scores_out != nullptr)
            for (int64_t j = 0; j < k; ++j) scores_out[i * k + j] = static_cast<float>(row[j]);
          continue;
        }
        regress_row(score.data(), has.data(), row.data());
        if (y != nullptr) store_row(*y, i, k, row.data());
      }
    });
  }

  TreeEnsembleModel m_;
  TreeOp op_;
  PostTransform post_;
  std::vector<V> thresholds_;  // one per node
  std::vector<V> votes_;       // one per m_.weights entry
  std::vector<V> members_;
  std::vector<V> base_;
};

template <TreeOp Op>
Result<std::unique_ptr<Kernel>> create_tree_ensemble(const KernelInit& init) {
  Result<TreeEnsembleModel> m = Op == TreeOp::Regressor    ? read_tree_ensemble_regressor(init.attrs)
                                : Op == TreeOp::Classifier ? read_tree_ensemble_classifier(init.attrs)
                                                           : read_tree_ensemble(init.attrs);
  if (!m) return m.error();
  if (init.input_dtypes[0] == DType::F64 || m->value_dtype == DType::F64)
    return std::unique_ptr<Kernel>(std::make_unique<TreeEnsembleKernel<double>>(std::move(*m), Op));
  return std::unique_ptr<Kernel>(std::make_unique<TreeEnsembleKernel<float>>(std::move(*m), Op));
}

}  // namespace

void register_ml_tree(KernelRegistry& r) {
  r.add({.domain = kMl,
         .op_type = "TreeEnsembleRegressor",
         .types = kMlTypes,
         .id = "ref/tree_ensemble_regressor",
         .factory = create_tree_ensemble<TreeOp::Regressor>});
  r.add({.domain = kMl,
         .op_type = "TreeEnsembleClassifier",
         .types = kMlTypes,
         .id = "ref/tree_ensemble_classifier",
         .factory = create_tree_ensemble<TreeOp::Classifier>});
  r.add({.domain = kMl,
         .op_type = "TreeEnsemble",
         .types = {DType::F32, DType::F64, DType::F16},
         .id = "ref/tree_ensemble",
         .factory = create_tree_ensemble<TreeOp::Unified>});
}

}  // namespace ignis::kernels::ref
