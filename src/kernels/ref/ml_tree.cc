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
#include "kernels/ref/ml_tree.h"
#include "kernels/ref/nn_internal.h"
#include "kernels/registry.h"

namespace ignis::kernels::ref {

namespace {

// Rows per chunk of the parallel loop are sized so that a chunk walks about this many trees.
constexpr int64_t kTreesPerChunk = 4096;

template <class V>
class TreeEnsembleKernel final : public Kernel {
 public:
  TreeEnsembleKernel(TreeEnsembleModel model, TreeOp op) : m_(std::move(model)), out_(m_, op) {
    for (const TreeNode& n : m_.nodes) thresholds_.push_back(static_cast<V>(n.threshold));
    for (double v : m_.members) members_.push_back(static_cast<V>(v));
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t c = x.rank() == 1 ? x.dim(0) : x.dim(1);
    if (m_.max_feature >= c)  // shape inference rejects this; restated so no read is out of bounds
      return internal_error(str_cat("tree ensemble reads feature ", m_.max_feature, " of ", c));
    visit_tree_input(x, [&](const auto* rows, int64_t n, int64_t cols) { run_rows(ctx, rows, n, cols); });
    return Status::ok();
  }

 private:
  // The leaf of the tree rooted at `i` that `row` reaches.
  template <class X>
  int32_t leaf_of(int32_t i, const X* row) const {
    for (;;) {
      const TreeNode& node = m_.nodes[i];
      if (node.mode == TreeNodeMode::Leaf) return i;
      const V* set = node.mode == TreeNodeMode::Member ? members_.data() + node.first : nullptr;
      const bool yes = tree_branch_true(node.mode, node.missing_tracks_true, static_cast<V>(row[node.feature]),
                                        thresholds_[i], set, node.count);
      i = yes ? node.true_child : node.false_child;
    }
  }

  template <class X>
  void run_rows(KernelContext& ctx, const X* x, int64_t n, int64_t c) const {
    const int64_t k = m_.targets;
    const auto trees = static_cast<int64_t>(m_.roots.size());
    const int64_t grain = std::max<int64_t>(1, kTreesPerChunk / trees);
    parallel_for(ctx.pool(), n, grain, [&](int64_t begin, int64_t end) {
      std::vector<V> score(static_cast<size_t>(k));
      std::vector<uint8_t> has(static_cast<size_t>(k));
      auto sink = out_.sink(ctx);
      for (int64_t i = begin; i < end; ++i) {
        std::fill(score.begin(), score.end(), V(0));
        std::fill(has.begin(), has.end(), uint8_t{0});
        for (const int32_t root : m_.roots) {
          const TreeNode& leaf = m_.nodes[leaf_of(root, x + i * c)];
          out_.add_votes(leaf.first, leaf.count, score.data(), has.data());
        }
        out_.write_row(sink, i, score.data(), has.data());
      }
    });
  }

  TreeEnsembleModel m_;
  TreeEnsembleOutputs<V> out_;  // reads m_
  std::vector<V> thresholds_;   // one per node
  std::vector<V> members_;
};

template <TreeOp Op>
Result<std::unique_ptr<Kernel>> create_tree_ensemble(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(TreeEnsembleModel m, read_tree_model(init, Op));
  if (tree_values_double(init, m))
    return std::unique_ptr<Kernel>(std::make_unique<TreeEnsembleKernel<double>>(std::move(m), Op));
  return std::unique_ptr<Kernel>(std::make_unique<TreeEnsembleKernel<float>>(std::move(m), Op));
}

}  // namespace

Result<TreeEnsembleModel> read_tree_model(const KernelInit& init, TreeOp op) {
  switch (op) {
    case TreeOp::Regressor: return read_tree_ensemble_regressor(init.attrs);
    case TreeOp::Classifier: return read_tree_ensemble_classifier(init.attrs);
    case TreeOp::Unified: break;
  }
  return read_tree_ensemble(init.attrs);
}

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
