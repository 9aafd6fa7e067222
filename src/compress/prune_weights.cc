// SPDX-License-Identifier: Apache-2.0
// prune_model: magnitude pruning of weights, written as the same graph with zeros in them.
//
// Element granularity zeroes the round(sparsity * n) elements of smallest |w| in each weight
// tensor (ties broken by position, so the count is exact); channel granularity zeroes the
// round(sparsity * channels) output channels of smallest L2 norm, the form later structured
// rewrites can remove. Shapes, ops and biases are unchanged, so the model runs anywhere;
// the zeros make it compress well and are what sparse kernels would exploit.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compress/weights.h"
#include "core/strings.h"

namespace ignis {

namespace {

// Indices of the `k` smallest keys (ties: lower index first).
std::vector<int64_t> smallest(const std::vector<float>& keys, int64_t k) {
  std::vector<int64_t> idx(keys.size());
  std::iota(idx.begin(), idx.end(), int64_t{0});
  auto less = [&](int64_t a, int64_t b) { return keys[a] < keys[b] || (keys[a] == keys[b] && a < b); };
  std::nth_element(idx.begin(), idx.begin() + k, idx.end(), less);
  idx.resize(static_cast<size_t>(k));
  return idx;
}

Tensor prune_tensor(const Tensor& t, const compress::WeightTensor& w, const PruneOptions& o, WeightChange* change) {
  Tensor out = Tensor::empty(DType::F32, t.shape());
  const float* x = t.data_as<float>();
  float* y = out.data_as<float>();
  std::copy(x, x + t.numel(), y);
  if (o.granularity == PruneGranularity::Element) {
    std::vector<float> mag(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < mag.size(); ++i) mag[i] = std::fabs(x[i]);
    const auto k = static_cast<int64_t>(std::llround(o.sparsity * static_cast<double>(t.numel())));
    for (int64_t i : smallest(mag, k)) y[i] = 0.0f;
    change->scheme = str_cat("element ", std::llround(o.sparsity * 100), "%");
  } else {
    const ChannelSplit split(t.shape(), w.channel_axis);
    std::vector<double> sq(static_cast<size_t>(split.channels), 0.0);
    split.for_each([&](int64_t c, int64_t i) { sq[static_cast<size_t>(c)] += static_cast<double>(x[i]) * x[i]; });
    std::vector<float> norm(sq.begin(), sq.end());
    const auto k = static_cast<int64_t>(std::llround(o.sparsity * static_cast<double>(split.channels)));
    std::vector<bool> drop(static_cast<size_t>(split.channels), false);
    for (int64_t c : smallest(norm, k)) drop[static_cast<size_t>(c)] = true;
    split.for_each([&](int64_t c, int64_t i) {
      if (drop[static_cast<size_t>(c)]) y[i] = 0.0f;
    });
    change->scheme = str_cat("channel axis ", w.channel_axis, " ", std::llround(o.sparsity * 100), "%");
  }
  for (int64_t i = 0; i < t.numel(); ++i) {
    change->zeros_before += x[i] == 0.0f;
    change->zeros_after += y[i] == 0.0f;
    change->max_abs = std::max(change->max_abs, std::fabs(x[i]));
    change->max_abs_error = std::max(change->max_abs_error, std::fabs(x[i] - y[i]));
  }
  return out;
}

}  // namespace

Result<CompressReport> prune_model(const std::string& input_path, const std::string& output_path,
                                   const PruneOptions& options) {
  if (!(options.sparsity >= 0.0 && options.sparsity < 1.0))
    return invalid_argument(str_cat("sparsity must be in [0, 1), got ", options.sparsity));
  if (options.min_elements < 0) return invalid_argument(str_cat("min_elements must be >= 0, got ", options.min_elements));
  CompressReport report;
  IGNIS_ASSIGN_OR_RETURN(ir::Graph g, compress::read_model_graph(input_path, &report.file_bytes_before));
  report.parameters = compress::initializer_elements(g);
  report.initializer_bytes_before = compress::initializer_bytes(g);
  for (const auto& w : compress::find_weights(g, options.min_elements, &report.skipped)) {
    Tensor& t = g.initializers.at(w.value);
    WeightChange change;
    change.value = w.value;
    change.op_type = w.op_type;
    change.elements = t.numel();
    t = prune_tensor(t, w, options, &change);
    report.parameters_changed += change.elements;
    report.changed.push_back(std::move(change));
  }
  report.initializer_bytes_after = compress::initializer_bytes(g);
  IGNIS_RETURN_IF_ERROR(compress::write_model_graph(g, output_path, &report.file_bytes_after));
  return report;
}

}  // namespace ignis
