// SPDX-License-Identifier: Apache-2.0
// smooth_activations(): SmoothQuant's per-channel factors from the calibration samples,
// applied as a Mul before the projections and folded into their weights; afterwards
// fold_smoothing_into_quantize() moves each Mul into the QuantizeLinear that reads it.
#include "compress/smooth_activations.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "compress/calibrate.h"
#include "compress/graph_edit.h"
#include "core/strings.h"
#include "ir/rewrite.h"

namespace ignis::compress {

namespace {

// A projection whose input channels can be smoothed: MatMul(x, W [K, N]) or Gemm(x, W) with
// transA = 0 (W [K, N], or [N, K] with transB), W a float32 constant. Returns K, or -1.
int64_t smoothable_depth(const ir::Graph& g, const ir::Node& n) {
  if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm") || n.inputs.size() < 2) return -1;
  if (n.op_type == "Gemm" && n.attrs.get_int("transA", 0) != 0) return -1;
  if (ir::constant_value(g, n.inputs[0]) != nullptr) return -1;
  const Tensor* w = ir::constant_value(g, n.inputs[1]);
  if (w == nullptr || w->dtype() != DType::F32 || w->rank() != 2) return -1;
  return n.op_type == "Gemm" && n.attrs.get_int("transB", 0) != 0 ? w->dim(1) : w->dim(0);
}

// max |w| over row j (input channel j) of W, for every j, into `out` (max-accumulated).
void weight_row_max(const ir::Node& n, const Tensor& w, std::vector<float>& out) {
  const bool by_column = n.op_type == "Gemm" && n.attrs.get_int("transB", 0) != 0;  // W [N, K]
  const float* v = w.data_as<float>();
  const int64_t rows = w.dim(0), cols = w.dim(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      float& m = out[static_cast<size_t>(by_column ? c : r)];
      m = std::max(m, std::fabs(v[r * cols + c]));
    }
}

// W with input channel j scaled by s[j].
Tensor scaled_weight(const ir::Node& n, const Tensor& w, const std::vector<float>& s) {
  const bool by_column = n.op_type == "Gemm" && n.attrs.get_int("transB", 0) != 0;
  Tensor out = Tensor::empty(DType::F32, w.shape());
  const float* v = w.data_as<float>();
  float* o = out.data_as<float>();
  const int64_t rows = w.dim(0), cols = w.dim(1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = v[r * cols + c] * s[static_cast<size_t>(by_column ? c : r)];
  return out;
}

}  // namespace

Result<SmoothingPlan> plan_smoothing(const ir::Graph& g, const std::vector<size_t>& targets, double alpha) {
  SmoothingPlan plan;
  plan.alpha = alpha;
  if (!(alpha > 0.0)) return plan;
  if (!(alpha <= 1.0)) return invalid_argument(str_cat("the smoothing strength must be in [0, 1], got ", alpha));
  std::map<std::string, int64_t> depth;
  for (size_t i : targets) {
    const int64_t k = smoothable_depth(g, g.nodes[i]);
    if (k < 1) continue;
    const std::string& x = g.nodes[i].inputs[0];
    if (depth.count(x) && depth[x] != k) {
      depth[x] = -1;  // projections of different depths read it: left alone
      continue;
    }
    depth[x] = k;
    plan.projections[x].push_back(i);
  }
  for (const auto& [x, k] : depth) {
    if (k > 0) {
      plan.values.push_back(x);
      plan.depth[x] = k;
    } else {
      plan.projections.erase(x);
    }
  }
  return plan;
}

Result<std::vector<SmoothedActivation>> apply_smoothing(ir::Graph& g, const SmoothingPlan& plan,
                                                        const std::map<std::string, std::vector<float>>& abs_max) {
  std::vector<SmoothedActivation> done;
  const auto readers = ir::consumers(g);
  for (const auto& x : plan.values) {
    const auto found = abs_max.find(x);
    if (found == abs_max.end() || static_cast<int64_t>(found->second.size()) != plan.depth.at(x)) continue;
    const std::vector<size_t>& members = plan.projections.at(x);
    const size_t k = found->second.size();
    std::vector<float> w_max(k, 0.0f);
    for (size_t i : members) weight_row_max(g.nodes[i], *ir::constant_value(g, g.nodes[i].inputs[1]), w_max);
    std::vector<float> s(k, 1.0f), inv(k, 1.0f);
    for (size_t j = 0; j < k; ++j) {
      const double a = found->second[j], w = w_max[j];
      if (!(a > 0.0) || !(w > 0.0) || !std::isfinite(a)) continue;  // nothing to move: 1
      const double f = std::clamp(std::pow(a, plan.alpha) / std::pow(w, 1.0 - plan.alpha), 1e-5, 1e5);
      s[j] = static_cast<float>(f);
      inv[j] = static_cast<float>(1.0 / f);
    }
    // The weights: rescaled in place where only these projections read them, else copied.
    for (size_t i : members) {
      ir::Node& n = g.nodes[i];
      const std::string w_name = n.inputs[1];
      const Tensor& w = *ir::constant_value(g, w_name);
      Tensor scaled = scaled_weight(n, w, s);
      const auto r = readers.find(w_name);
      const bool shared = ir::is_graph_output(g, w_name) || (r != readers.end() && r->second.size() > 1);
      if (shared) n.inputs[1] = add_initializer(g, w_name + "_smoothed", std::move(scaled));
      else g.initializers[w_name] = std::move(scaled);
    }
    Tensor inv_t = Tensor::empty(DType::F32, Shape{static_cast<int64_t>(k)});
    std::copy(inv.begin(), inv.end(), inv_t.data_as<float>());
    SmoothedActivation a;
    a.value = x;
    a.mul = x + "/smooth";
    a.output = ir::unique_value_name(g, x + "_smoothed");
    a.inverse = std::move(inv);
    a.projections = static_cast<int>(members.size());
    const std::string inv_name = add_initializer(g, x + "_smoothing", std::move(inv_t));
    for (size_t i : members) g.nodes[i].inputs[0] = a.output;
    add_node(g, a.mul, "Mul", {x, inv_name}, {a.output});
    done.push_back(std::move(a));
  }
  IGNIS_RETURN_IF_ERROR(sort_nodes(g));
  return done;
}

Result<std::vector<SmoothedActivation>> smooth_activations(ir::Graph& g, const std::string& model_dir,
                                                           const std::vector<size_t>& targets,
                                                           const QuantizeOptions& o) {
  IGNIS_ASSIGN_OR_RETURN(const SmoothingPlan plan, plan_smoothing(g, targets, o.smooth_alpha));
  if (plan.values.empty()) return std::vector<SmoothedActivation>{};
  // max |x_j| per channel of the last axis (calibrate's per-channel ranges, min/max only: no
  // histograms); a value whose last axis is not K in some sample is dropped.
  QuantizeOptions first = o;
  first.calibration_method = CalibrationMethod::MinMax;
  first.calibration_samples =
      o.calibration_samples > 0 ? std::min(o.calibration_samples, kSmoothingSamples) : kSmoothingSamples;
  if (o.progress) first.progress = [&o](const std::string& line) { o.progress("smoothing: " + line); };
  IGNIS_ASSIGN_OR_RETURN(const Calibration cal,
                         calibrate(g, model_dir, plan.values, first, plan.depth, kSmoothingSamples));
  std::map<std::string, std::vector<float>> act_max;
  for (const auto& [x, c] : cal.channels) act_max[x] = c.abs_max;
  return apply_smoothing(g, plan, act_max);
}

Result<int> fold_smoothing_into_quantize(ir::Graph& g, const std::vector<SmoothedActivation>& smoothed) {
  if (smoothed.empty() || g.opset("") < 13) return 0;
  const auto readers = ir::consumers(g);
  std::vector<bool> remove(g.nodes.size(), false);
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < g.nodes.size(); ++i) by_name[g.nodes[i].name] = i;
  int folded = 0;
  for (const auto& a : smoothed) {
    const auto mi = by_name.find(a.mul);
    const auto r = readers.find(a.output);
    if (mi == by_name.end() || r == readers.end() || r->second.size() != 1 || ir::is_graph_output(g, a.output))
      continue;
    ir::Node& q = g.nodes[static_cast<size_t>(r->second[0])];
    if (!q.domain.empty() || q.op_type != "QuantizeLinear" || q.inputs.size() < 3 || q.inputs[0] != a.output) continue;
    const Tensor* scale = ir::constant_value(g, q.inputs[1]);
    const Tensor* zero = ir::constant_value(g, q.inputs[2]);
    const Tensor* inv = ir::constant_value(g, g.nodes[mi->second].inputs[1]);
    if (!scale || !zero || !inv || scale->numel() != 1 || zero->numel() != 1 || scale->dtype() != DType::F32) continue;
    // Q(x * inv, y_s) = Q(x, y_s / inv): channel j of the last axis at its own scale.
    const int64_t k = inv->numel();
    Tensor per_channel = Tensor::empty(DType::F32, Shape{k});
    Tensor zeros = Tensor::empty(zero->dtype(), Shape{k});
    const size_t zsize = dtype_size(zero->dtype());
    for (int64_t j = 0; j < k; ++j) {
      per_channel.data_as<float>()[j] = scale->data_as<float>()[0] / inv->data_as<float>()[j];
      std::memcpy(static_cast<std::byte*>(zeros.data()) + j * static_cast<int64_t>(zsize), zero->data(), zsize);
    }
    q.inputs[0] = a.value;
    q.inputs[1] = add_initializer(g, a.value + "_scale_per_channel", std::move(per_channel));
    q.inputs[2] = add_initializer(g, a.value + "_zero_point_per_channel", std::move(zeros));
    q.attrs.set("axis", int_attr(-1));
    remove[mi->second] = true;
    ++folded;
  }
  ir::remove_nodes(g, remove);
  ir::remove_unused_initializers(g);
  return folded;
}

}  // namespace ignis::compress
