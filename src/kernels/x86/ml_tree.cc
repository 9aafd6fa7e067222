// SPDX-License-Identifier: Apache-2.0
// Tree ensembles (TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble) walked from a flat
// node array. The reference kernel (ref/ml_tree.cc) follows one row down one tree at a time
// through 48-byte nodes and a switch on each node's mode; here, when the kernel is made, the
// reachable nodes are renumbered tree by tree (depth first, so a walk stays near its root's
// cache lines) into 16-byte (float) or 24-byte (double) records, and a leaf becomes a node whose
// two children are itself. Eight rows then walk a tree together for exactly the tree's height:
// no branch depends on where a row is, and the eight independent loads overlap their latency.
// Ensembles whose branches all use one of LEQ, LT, GTE, GT without missing-value tracking (what
// scikit-learn, XGBoost and LightGBM converters write) get that comparison inlined; any other
// mix takes a per-node switch.
//
// Results equal the reference's: each row adds its trees' votes in tree order, in the same type,
// and the output stage is the reference's own (ref/ml_tree.h). The code uses no intrinsics; it
// sits with the x86 kernels because they are the optimized set the registry chooses from.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/strings.h"
#include "core/thread_pool.h"
#include "kernels/ref/ml_tree.h"
#include "kernels/x86/x86_internal.h"

namespace ignis::kernels::x86 {

namespace {

using ref::tree_branch_true;
using ref::TreeOp;

// Rows that walk a tree together.
constexpr int64_t kRows = 8;
// Blocks per chunk of the parallel loop are sized so that a chunk walks about this many trees.
constexpr int64_t kWalksPerChunk = 1024;

template <class V>
struct FlatNode {
  V threshold;
  int32_t feature;
  int32_t child[2];  // [false, true]; a leaf's are both itself
};

// One comparison for every branch: the flat walk with it inlined.
enum class Uniform : uint8_t { None, Leq, Lt, Gte, Gt };

template <class V>
class FlatTreeEnsembleKernel final : public Kernel {
 public:
  FlatTreeEnsembleKernel(TreeEnsembleModel model, TreeOp op) : m_(std::move(model)), out_(m_, op) {
    for (double v : m_.members) members_.push_back(static_cast<V>(v));
    flatten();
    densify();
  }

  Status run(KernelContext& ctx) const override {
    const Tensor& x = ctx.input(0);
    const int64_t c = x.rank() == 1 ? x.dim(0) : x.dim(1);
    if (m_.max_feature >= c)  // shape inference rejects this; restated so no read is out of bounds
      return internal_error(str_cat("tree ensemble reads feature ", m_.max_feature, " of ", c));
    ref::visit_tree_input(x, [&](const auto* rows, int64_t n, int64_t cols) {
      switch (uniform_) {
        case Uniform::Leq: run_rows(ctx, rows, n, cols, [](int32_t, V v, V t) { return v <= t; }); break;
        case Uniform::Lt: run_rows(ctx, rows, n, cols, [](int32_t, V v, V t) { return v < t; }); break;
        case Uniform::Gte: run_rows(ctx, rows, n, cols, [](int32_t, V v, V t) { return v >= t; }); break;
        case Uniform::Gt: run_rows(ctx, rows, n, cols, [](int32_t, V v, V t) { return v > t; }); break;
        case Uniform::None:
          run_rows(ctx, rows, n, cols, [this](int32_t i, V v, V t) { return test(i, v, t); });
          break;
      }
    });
    return Status::ok();
  }

 private:
  // Renumbers the nodes reachable from the roots depth first, tree by tree, and measures each
  // tree's height (the most branches on a path from its root): nodes may be shared (TreeEnsemble
  // allows a DAG), never cyclic, so a post-order finishes every child before its parents.
  void flatten() {
    const auto count = static_cast<int32_t>(m_.nodes.size());
    std::vector<int32_t> flat_of(static_cast<size_t>(count), -1);
    std::vector<int32_t> post;  // model indices, children before parents
    std::vector<std::pair<int32_t, bool>> stack;
    for (const int32_t root : m_.roots) {
      stack.push_back({root, false});
      while (!stack.empty()) {
        auto [i, expanded] = stack.back();
        stack.pop_back();
        if (expanded) {
          post.push_back(i);
          continue;
        }
        if (flat_of[i] >= 0) continue;
        flat_of[i] = static_cast<int32_t>(model_of_.size());
        model_of_.push_back(i);
        stack.push_back({i, true});
        const TreeNode& n = m_.nodes[i];
        if (n.mode == TreeNodeMode::Leaf) continue;
        // The true child is pushed first so the false child, popped first, follows its parent.
        if (flat_of[n.true_child] < 0) stack.push_back({n.true_child, false});
        if (flat_of[n.false_child] < 0) stack.push_back({n.false_child, false});
      }
    }
    nodes_.resize(model_of_.size());
    modes_.resize(model_of_.size());
    bool uniform = true;
    TreeNodeMode mode = TreeNodeMode::Leaf;
    for (size_t f = 0; f < model_of_.size(); ++f) {
      const TreeNode& n = m_.nodes[model_of_[f]];
      const auto self = static_cast<int32_t>(f);
      modes_[f] = n.mode;
      if (n.mode == TreeNodeMode::Leaf) {
        nodes_[f] = FlatNode<V>{V(0), 0, {self, self}};
        continue;
      }
      nodes_[f] = FlatNode<V>{static_cast<V>(n.threshold), static_cast<int32_t>(n.feature),
                              {flat_of[n.false_child], flat_of[n.true_child]}};
      if (mode == TreeNodeMode::Leaf) mode = n.mode;
      uniform = uniform && n.mode == mode && !n.missing_tracks_true;
    }
    if (uniform) {
      switch (mode) {
        case TreeNodeMode::Leq: uniform_ = Uniform::Leq; break;
        case TreeNodeMode::Lt: uniform_ = Uniform::Lt; break;
        case TreeNodeMode::Gte: uniform_ = Uniform::Gte; break;
        case TreeNodeMode::Gt: uniform_ = Uniform::Gt; break;
        default: uniform_ = mode == TreeNodeMode::Leaf ? Uniform::Leq : Uniform::None; break;  // Leaf: no branches
      }
    }
    std::vector<int32_t> height(model_of_.size(), 0);
    for (const int32_t i : post) {
      const TreeNode& n = m_.nodes[i];
      if (n.mode == TreeNodeMode::Leaf) continue;
      height[flat_of[i]] = 1 + std::max(height[flat_of[n.true_child]], height[flat_of[n.false_child]]);
    }
    for (const int32_t root : m_.roots) {
      roots_.push_back(flat_of[root]);
      heights_.push_back(height[flat_of[root]]);
    }
  }

  // Sums (SUM, AVERAGE) where no leaf votes twice for one target, and where a dense row per
  // leaf costs at most twice the sparse votes (a random forest classifier's leaves vote for
  // every class): the votes become one row of k values per leaf, 0 for targets it leaves out,
  // added with a plain vector loop. Adding 0 leaves a score as it was (scores start at +0 and
  // a sum of two values is -0 only when both are), so results stay those of the sparse votes.
  void densify() {
    if (m_.aggregate != TreeAggregate::Sum && m_.aggregate != TreeAggregate::Average) return;
    const int64_t k = m_.targets;
    int64_t leaves = 0;
    for (const int32_t i : model_of_) leaves += m_.nodes[i].mode == TreeNodeMode::Leaf ? 1 : 0;
    if (leaves * k > 2 * static_cast<int64_t>(m_.weights.size()) + 64) return;
    std::vector<int32_t> rows(model_of_.size(), -1);
    std::vector<V> dense(static_cast<size_t>(leaves * k), V(0));
    std::vector<uint8_t> has(static_cast<size_t>(leaves * k), 0);
    int32_t next = 0;
    for (size_t f = 0; f < model_of_.size(); ++f) {
      const TreeNode& n = m_.nodes[model_of_[f]];
      if (n.mode != TreeNodeMode::Leaf) continue;
      rows[f] = next;
      const size_t at = static_cast<size_t>(next++ * k);
      for (int32_t j = n.first; j < n.first + n.count; ++j) {
        const auto t = static_cast<size_t>(m_.weights[j].target);
        if (has[at + t]) return;  // two votes for one target: their order matters, stay sparse
        has[at + t] = 1;
        dense[at + t] = static_cast<V>(m_.weights[j].weight);
      }
    }
    dense_row_ = std::move(rows);
    dense_ = std::move(dense);
    has_ = std::move(has);
  }

  // Branch test of flat node i for the modes without a uniform comparison (a leaf's children
  // are both itself, so its answer does not matter).
  bool test(int32_t i, V v, V t) const {
    const TreeNode& n = m_.nodes[model_of_[i]];
    const V* set = modes_[i] == TreeNodeMode::Member ? members_.data() + n.first : nullptr;
    return tree_branch_true(modes_[i], n.missing_tracks_true, v, t, set, n.count);
  }

  // Rows [r0, r0 + rows), rows <= kRows: every tree, in order, for all of them; score and has
  // hold kRows rows of k targets.
  template <class X, class Test>
  void walk_block(const X* x, int64_t c, int64_t r0, int64_t rows, const Test& yes, V* score, uint8_t* has) const {
    const int64_t k = m_.targets;
    const X* base = x + r0 * c;
    for (size_t t = 0; t < roots_.size(); ++t) {
      int32_t at[kRows];
      for (int64_t r = 0; r < kRows; ++r) at[r] = roots_[t];
      for (int32_t d = 0; d < heights_[t]; ++d) {
        for (int64_t r = 0; r < rows; ++r) {
          const FlatNode<V>& n = nodes_[at[r]];
          const V v = static_cast<V>(base[r * c + n.feature]);  // compared in V, as the reference
          at[r] = n.child[yes(at[r], v, n.threshold) ? 1 : 0];
        }
      }
      if (!dense_.empty()) {
        for (int64_t r = 0; r < rows; ++r) {
          const size_t row = static_cast<size_t>(dense_row_[at[r]] * k);
          V* s = score + r * k;
          uint8_t* h = has + r * k;
          for (int64_t j = 0; j < k; ++j) s[j] += dense_[row + j];
          for (int64_t j = 0; j < k; ++j) h[j] |= has_[row + j];
        }
        continue;
      }
      for (int64_t r = 0; r < rows; ++r) {
        const TreeNode& leaf = m_.nodes[model_of_[at[r]]];
        out_.add_votes(leaf.first, leaf.count, score + r * k, has + r * k);
      }
    }
  }

  template <class X, class Test>
  void run_rows(KernelContext& ctx, const X* x, int64_t n, int64_t c, const Test& yes) const {
    const int64_t k = m_.targets;
    const int64_t blocks = (n + kRows - 1) / kRows;
    const auto trees = static_cast<int64_t>(roots_.size());
    const int64_t grain = std::max<int64_t>(1, kWalksPerChunk / (trees * kRows));
    parallel_for(ctx.pool(), blocks, grain, [&](int64_t begin, int64_t end) {
      std::vector<V> score(static_cast<size_t>(kRows * k));
      std::vector<uint8_t> has(static_cast<size_t>(kRows * k));
      auto sink = out_.sink(ctx);
      for (int64_t b = begin; b < end; ++b) {
        const int64_t r0 = b * kRows;
        const int64_t rows = std::min(kRows, n - r0);
        std::fill(score.begin(), score.end(), V(0));
        std::fill(has.begin(), has.end(), uint8_t{0});
        walk_block(x, c, r0, rows, yes, score.data(), has.data());
        for (int64_t r = 0; r < rows; ++r) out_.write_row(sink, r0 + r, score.data() + r * k, has.data() + r * k);
      }
    });
  }

  TreeEnsembleModel m_;
  ref::TreeEnsembleOutputs<V> out_;  // reads m_
  std::vector<V> members_;
  std::vector<FlatNode<V>> nodes_;
  std::vector<TreeNodeMode> modes_;  // per flat node, for Uniform::None
  std::vector<int32_t> model_of_;    // flat node -> index in m_.nodes
  std::vector<int32_t> roots_;       // flat index of each tree's root
  std::vector<int32_t> heights_;     // branches on each tree's longest path
  // Dense votes (see densify): per flat leaf, its row of dense_ and has_; empty when sparse.
  std::vector<int32_t> dense_row_;
  std::vector<V> dense_;
  std::vector<uint8_t> has_;
  Uniform uniform_ = Uniform::None;
};

template <TreeOp Op>
Result<std::unique_ptr<Kernel>> create_flat_tree_ensemble(const KernelInit& init) {
  IGNIS_ASSIGN_OR_RETURN(TreeEnsembleModel m, ref::read_tree_model(init, Op));
  if (ref::tree_values_double(init, m))
    return std::unique_ptr<Kernel>(std::make_unique<FlatTreeEnsembleKernel<double>>(std::move(m), Op));
  return std::unique_ptr<Kernel>(std::make_unique<FlatTreeEnsembleKernel<float>>(std::move(m), Op));
}

}  // namespace

void register_ml_tree(KernelRegistry& r) {
  // No ISA: the kernel is plain C++, preferred over the reference wherever optimized kernels are.
  r.add({.domain = ref::kMl,
         .op_type = "TreeEnsembleRegressor",
         .types = ref::kMlTypes,
         .priority = 1,
         .role = KernelRole::Optimized,
         .id = "cpu/tree_ensemble_regressor_flat",
         .factory = create_flat_tree_ensemble<TreeOp::Regressor>});
  r.add({.domain = ref::kMl,
         .op_type = "TreeEnsembleClassifier",
         .types = ref::kMlTypes,
         .priority = 1,
         .role = KernelRole::Optimized,
         .id = "cpu/tree_ensemble_classifier_flat",
         .factory = create_flat_tree_ensemble<TreeOp::Classifier>});
  r.add({.domain = ref::kMl,
         .op_type = "TreeEnsemble",
         .types = {DType::F32, DType::F64, DType::F16},
         .priority = 1,
         .role = KernelRole::Optimized,
         .id = "cpu/tree_ensemble_flat",
         .factory = create_flat_tree_ensemble<TreeOp::Unified>});
}

}  // namespace ignis::kernels::x86
