// SPDX-License-Identifier: Apache-2.0
// What the tree-ensemble kernels share: the reference kernel (ref/ml_tree.cc) and the flat,
// several-rows-per-walk kernel (x86/ml_tree.cc) find leaves differently but aggregate a row's
// votes and turn them into outputs with this one code, so both give the same answers. The
// conventions (onnxruntime's where the spec is silent) are described in ref/ml_tree.cc.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/tree_ensemble.h"
#include "kernels/kernel.h"
#include "kernels/ref/ml_internal.h"
#include "kernels/ref/nn_internal.h"

namespace ignis::kernels::ref {

enum class TreeOp { Regressor, Classifier, Unified };

// The model of the node `init` describes, read and validated from its attributes.
Result<TreeEnsembleModel> read_tree_model(const KernelInit& init, TreeOp op);

// Whether thresholds and votes are held (and inputs compared, votes summed) in double: for double
// inputs or double attributes (*_as_tensor), as onnxruntime does; float otherwise.
inline bool tree_values_double(const KernelInit& init, const TreeEnsembleModel& m) {
  return init.input_dtypes[0] == DType::F64 || m.value_dtype == DType::F64;
}

// Calls f(x, n, c) with the rows of input X as a pointer of its own type (float16 converted to
// float first): n rows of c features.
template <class F>
void visit_tree_input(const Tensor& x, F&& f) {
  const int64_t n = x.rank() == 1 ? 1 : x.dim(0);
  const int64_t c = x.rank() == 1 ? x.dim(0) : x.dim(1);
  switch (x.dtype()) {
    case DType::F32: f(x.data_as<const float>(), n, c); break;
    case DType::F64: f(x.data_as<const double>(), n, c); break;
    case DType::I64: f(x.data_as<const int64_t>(), n, c); break;
    case DType::I32: f(x.data_as<const int32_t>(), n, c); break;
    case DType::F16: {
      const std::vector<float> xf = to_float_vector(x);
      f(xf.data(), n, c);
      break;
    }
    default: std::abort();  // the registrations admit these dtypes only
  }
}

// Whether a row whose feature value is v takes the true child of a branch (mode not Leaf) with
// threshold t; [set, set + count) is a Member branch's set. Features are compared in V
// (integers as float, as onnxruntime does); NaN goes to the true child where the branch
// tracks missing values.
template <class V>
inline bool tree_branch_true(TreeNodeMode mode, bool missing_true, V v, V t, const V* set, int32_t count) {
  bool yes = false;
  switch (mode) {
    case TreeNodeMode::Leq: yes = v <= t; break;
    case TreeNodeMode::Lt: yes = v < t; break;
    case TreeNodeMode::Gte: yes = v >= t; break;
    case TreeNodeMode::Gt: yes = v > t; break;
    case TreeNodeMode::Eq: yes = v == t; break;
    case TreeNodeMode::Neq: yes = v != t; break;
    case TreeNodeMode::Member: yes = std::find(set, set + count, v) != set + count; break;
    case TreeNodeMode::Leaf: break;
  }
  return yes || (missing_true && std::isnan(v));
}

// The aggregation and output stage for values of type V (float or double).
template <class V>
class TreeEnsembleOutputs {
 public:
  TreeEnsembleOutputs(const TreeEnsembleModel& m, TreeOp op)
      : m_(m), classify_(op == TreeOp::Classifier), post_(parse_post_transform(m.post_transform)) {
    for (const TreeVote& v : m_.weights) votes_.push_back(static_cast<V>(v.weight));
    for (double v : m_.base_values) base_.push_back(static_cast<V>(v));
  }

  // Adds the votes weights[first, first + count) of one leaf to a row's scores; `has` marks the
  // targets that got a vote (MIN and MAX start from the first vote).
  void add_votes(int32_t first, int32_t count, V* score, uint8_t* has) const {
    for (int32_t j = first; j < first + count; ++j) {
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

  // Per-thread state: the outputs' pointers and a row of doubles.
  struct Sink {
    int64_t* labels = nullptr;
    std::string* label_strings = nullptr;
    float* scores = nullptr;
    Tensor* y = nullptr;
    std::vector<double> row;
  };

  Sink sink(KernelContext& ctx) const {
    Sink s;
    const bool string_labels = !m_.class_label_strings.empty();
    if (classify_ && ctx.has_output(0)) {
      // Labels are int64 (classlabels_int64s) or strings (classlabels_strings).
      if (string_labels) s.label_strings = ctx.output(0).data_as<std::string>();
      else s.labels = ctx.output(0).data_as<int64_t>();
    }
    if (classify_ && ctx.has_output(1)) s.scores = ctx.output(1).data_as<float>();
    if (!classify_ && ctx.has_output(0)) s.y = &ctx.output(0);
    s.row.resize(static_cast<size_t>(m_.targets));
    return s;
  }

  // Writes row i's outputs from its aggregated scores.
  void write_row(Sink& s, int64_t i, const V* score, const uint8_t* has) const {
    const int64_t k = m_.targets;
    if (classify_) {
      const size_t label = classify_row(score, has, s.row.data());
      if (s.labels != nullptr) s.labels[i] = m_.class_labels[label];
      if (s.label_strings != nullptr) s.label_strings[i] = m_.class_label_strings[label];
      if (s.scores != nullptr)
        for (int64_t j = 0; j < k; ++j) s.scores[i * k + j] = static_cast<float>(s.row[j]);
      return;
    }
    regress_row(score, has, s.row.data());
    if (s.y != nullptr) store_row(*s.y, i, k, s.row.data());
  }

 private:
  // Row i of a [N, k] float, double or float16 output.
  static void store_row(Tensor& y, int64_t i, int64_t k, const double* row) {
    for (int64_t j = 0; j < k; ++j) {
      switch (y.dtype()) {
        case DType::F64: y.data_as<double>()[i * k + j] = row[j]; break;
        case DType::F16: y.data_as<Half>()[i * k + j] = from_compute<Half>(row[j]); break;
        default: y.data_as<float>()[i * k + j] = static_cast<float>(row[j]); break;
      }
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

  const TreeEnsembleModel& m_;  // owned by the kernel
  bool classify_;
  PostTransform post_;
  std::vector<V> votes_;  // one per m_.weights entry
  std::vector<V> base_;
};

}  // namespace ignis::kernels::ref
