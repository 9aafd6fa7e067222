// SPDX-License-Identifier: Apache-2.0
// Calibrated static int8, written as QDQ: standard QuantizeLinear/DequantizeLinear pairs that
// any runtime executes as written and that int8 backends fuse into integer kernels.
//
//  - Activations: every float32 tensor read by Conv, MatMul or Gemm (A; and MatMul's B when it
//    is computed) or written by Conv (when something reads it) gets x -> QuantizeLinear ->
//    DequantizeLinear -> readers, with one int8 scale and zero point from calibration; MatMul
//    and Gemm outputs stay float32 (activation_tensors). Before calibration, SmoothQuant
//    (smooth_activations.h) may divide a projection's input channels by factors moved into its
//    weights, folded afterwards into that input's QuantizeLinear (one scale per channel). As in
//    onnxruntime's default S8S8 QDQ the activation grid is asymmetric: the range [lo, hi]
//    (widened to hold 0, so that 0 stays exact) maps onto [-128, 127] with
//    scale = (hi - lo) / 255 and zero point = round(-128 - lo / scale).
//  - Weights: int8 symmetric, one scale per output channel (int8_weights.h), through
//    DequantizeLinear with `axis` (per tensor below opset 13).
//  - Biases of Conv and Gemm: int32 with scale x_scale * w_scale and zero point 0 (the form
//    QLinearConv-style kernels consume, where the bias adds straight into the int32
//    accumulator); left float32 when a value would not fit in int32.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "compress/accuracy_budget.h"
#include "compress/activation_error.h"
#include "compress/calibrate.h"
#include "compress/graph_edit.h"
#include "compress/int8_weights.h"
#include "compress/quantize_graph.h"
#include "compress/smooth_activations.h"
#include "core/strings.h"
#include "ir/rewrite.h"
#include "passes/match.h"

namespace ignis::compress {

namespace {

struct QParams {
  float scale = 1.0f;
  int zero_point = 0;
};

QParams int8_asymmetric(const CalibratedRange& r) {
  const double lo = std::min(0.0f, r.min), hi = std::max(0.0f, r.max);
  const auto scale = static_cast<float>((hi - lo) / 255.0);
  if (!(scale >= std::numeric_limits<float>::min())) return {1.0f, 0};  // a tensor of zeros
  const double zp = std::nearbyint(-128.0 - lo / static_cast<double>(scale));
  return {scale, static_cast<int>(std::clamp(zp, -128.0, 127.0))};
}

bool is_target(const ir::Node& n) {
  return n.domain.empty() && (n.op_type == "Conv" || n.op_type == "MatMul" || n.op_type == "Gemm");
}

// Output-channel axis of the weight of target `n` (weight rank `rank`), or -1 for per tensor.
int weight_axis(const ir::Node& n, int rank) {
  if (n.op_type == "Conv") return 0;
  if (n.op_type == "Gemm") return n.attrs.get_int("transB", 0) != 0 ? 0 : 1;
  return rank >= 2 ? rank - 1 : -1;
}

// A Relu, or a Clip with constant bounds lo <= 0 <= hi (ReLU6): the calibrated range of its
// output lies inside [lo, hi] and holds 0, so the int8 saturation of the QuantizeLinear after
// it clamps at least as tightly, and int8 kernels fold it (fuse_qdq_into_qlinear.cc).
bool clamps_around_zero(const ir::Graph& g, const ir::Node& n) {
  if (!n.domain.empty()) return false;
  if (n.op_type == "Relu") return true;
  const auto bounds = passes::constant_clip_bounds(g, n);
  return bounds && bounds->first <= 0.0f && bounds->second >= 0.0f;
}

// The tensors to calibrate, in node order without repeats. A target's output read only by a
// Relu or ReLU6-like Clip (clamps_around_zero) is quantized after it instead (as onnxruntime
// places QDQ, which then drops the op): one rounding instead of two, the whole int8 range for
// the values that survive, and the Conv -> Relu -> Q pattern that int8 kernels fuse. MatMul
// and Gemm outputs stay float32: in a transformer they go to the bias and residual adds,
// which run in float32, and one int8 scale for a projection's output (the residual stream's
// outlier channels) cost all-MiniLM-L6-v2 most of its accuracy (held-out sentence-embedding
// cosine min 0.926 -> 0.986 without them); where another target reads one, it is quantized
// as that target's input.
std::vector<std::string> activation_tensors(const ir::Graph& g, const std::vector<size_t>& targets) {
  const auto readers = ir::consumers(g);
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto want = [&](const std::string& v) {
    if (!v.empty() && ir::constant_value(g, v) == nullptr && seen.insert(v).second) out.push_back(v);
  };
  for (size_t i : targets) {
    const ir::Node& n = g.nodes[i];
    want(n.inputs[0]);
    if (n.op_type == "MatMul") want(n.inputs[1]);
    if (n.op_type != "Conv") continue;
    const auto r = readers.find(n.outputs[0]);
    if (r == readers.end()) continue;
    const ir::Node* only = r->second.size() == 1 ? &g.nodes[r->second[0]] : nullptr;
    if (only && clamps_around_zero(g, *only) && !ir::is_graph_output(g, n.outputs[0])) {
      if (readers.count(only->outputs[0]) || ir::is_graph_output(g, only->outputs[0])) want(only->outputs[0]);
      continue;
    }
    want(n.outputs[0]);
  }
  return out;
}

struct QuantizedWeight {
  std::string value;  // the DequantizeLinear output
  Tensor scale;       // scalar or [channels]
};

// Writes the QDQ form of `targets` (node indices of `g`) with the calibrated ranges, and folds
// the smoothing Muls into the QuantizeLinear nodes that read them.
Status write_qdq(ir::Graph& g, const std::vector<size_t>& targets, const Calibration& cal, bool per_channel,
                 const QuantizeOptions& o, const std::vector<SmoothedActivation>& smoothed, CompressReport* report) {
  // Activations: every reader of x reads DequantizeLinear(QuantizeLinear(x)) instead.
  std::map<std::string, QParams> activation;  // keyed by the DequantizeLinear output
  for (const std::string& name : activation_tensors(g, targets)) {
    const auto found = cal.ranges.find(name);
    if (found == cal.ranges.end()) continue;  // not float32, or no finite value seen
    const CalibratedRange& range = found->second;
    const QParams p = int8_asymmetric(range);
    Tensor scale = Tensor::empty(DType::F32, Shape{});
    *scale.data_as<float>() = p.scale;
    Tensor zero = Tensor::empty(DType::I8, Shape{});
    *zero.data_as<int8_t>() = static_cast<int8_t>(p.zero_point);
    const std::string s = add_initializer(g, name + "_scale", std::move(scale));
    const std::string z = add_initializer(g, name + "_zero_point", std::move(zero));
    const std::string q = ir::unique_value_name(g, name + "_quantized");
    const std::string dq = ir::unique_value_name(g, name + "_dequantized");
    ir::replace_uses(g, name, dq);
    add_node(g, name + "/QuantizeLinear", "QuantizeLinear", {name, s, z}, {q});
    add_node(g, name + "/DequantizeLinear", "DequantizeLinear", {q, s, z}, {dq});
    activation[dq] = p;
    report->activations.push_back({name, range.min, range.max, p.scale, p.zero_point});
  }

  // Weights, then biases, of the target nodes (indices stay valid: nodes are only appended).
  std::map<std::pair<std::string, int>, QuantizedWeight> weights;
  for (size_t i : targets) {
    const std::string w_name = g.nodes[i].inputs[1];
    const Tensor* w = ir::constant_value(g, w_name);
    if (w == nullptr || w->dtype() != DType::F32) continue;
    if (w->numel() < o.min_elements.value_or(0)) {
      report->skipped.push_back(str_cat(w_name, ": ", w->numel(), " elements, below the minimum of ", *o.min_elements));
      continue;
    }
    const int axis = per_channel ? weight_axis(g.nodes[i], w->rank()) : -1;
    auto it = weights.find({w_name, axis});
    if (it == weights.end()) {
      Int8Weight q8 = quantize_int8_symmetric(*w, axis);
      WeightChange change = int8_weight_change(
          w_name, g.nodes[i].op_type,
          axis >= 0 ? str_cat("int8 per-channel axis ", axis) : std::string("int8 per-tensor"), *w, q8);
      report->parameters_changed += change.elements;
      report->changed.push_back(std::move(change));
      QuantizedWeight qw;
      qw.scale = q8.scale;
      const std::string q = add_initializer(g, w_name + "_quantized", std::move(q8.q));
      const std::string s = add_initializer(g, w_name + "_scale", std::move(q8.scale));
      const std::string z = add_initializer(g, w_name + "_zero_point", std::move(q8.zero));
      qw.value = ir::unique_value_name(g, w_name + "_dequantized");
      ir::Node& dq = add_node(g, w_name + "/DequantizeLinear", "DequantizeLinear", {q, s, z}, {qw.value});
      if (axis >= 0) dq.attrs.set("axis", int_attr(axis));
      it = weights.emplace(std::make_pair(w_name, axis), std::move(qw)).first;
    }
    g.nodes[i].inputs[1] = it->second.value;

    // Bias: Conv's B, or Gemm's C when y = A op(B) + C exactly.
    ir::Node& n = g.nodes[i];
    if (n.op_type == "MatMul" || n.inputs.size() < 3 || n.inputs[2].empty()) continue;
    if (n.op_type == "Gemm" && (n.attrs.get_float("alpha", 1.0f) != 1.0f || n.attrs.get_float("beta", 1.0f) != 1.0f))
      continue;
    const auto x = activation.find(n.inputs[0]);
    const Tensor* b = ir::constant_value(g, n.inputs[2]);
    const Tensor& ws = it->second.scale;
    if (x == activation.end() || b == nullptr || b->dtype() != DType::F32 || b->rank() != 1 ||
        (ws.rank() == 1 && ws.dim(0) != b->dim(0)))
      continue;
    Tensor bq = Tensor::empty(DType::I32, b->shape());
    Tensor bs = Tensor::empty(DType::F32, ws.shape());
    bool fits = true;
    for (int64_t c = 0; c < ws.numel(); ++c) bs.data_as<float>()[c] = x->second.scale * ws.data_as<float>()[c];
    for (int64_t c = 0; c < b->numel(); ++c) {
      const double v = std::nearbyint(b->data_as<float>()[c] / bs.data_as<float>()[ws.numel() == 1 ? 0 : c]);
      fits = fits && std::fabs(v) <= std::numeric_limits<int32_t>::max();
      bq.data_as<int32_t>()[c] = fits ? static_cast<int32_t>(v) : 0;
    }
    const std::string b_name = n.inputs[2];
    if (!fits) {
      report->skipped.push_back(str_cat(b_name, ": bias / (x_scale * w_scale) does not fit int32; kept float32"));
      continue;
    }
    const Shape shape = bs.shape();
    const std::string q = add_initializer(g, b_name + "_quantized", std::move(bq));
    const std::string s = add_initializer(g, b_name + "_scale", std::move(bs));
    const std::string z = add_initializer(g, b_name + "_zero_point", Tensor::zeros(DType::I32, shape));
    const std::string out = ir::unique_value_name(g, b_name + "_dequantized");
    g.nodes[i].inputs[2] = out;
    ir::Node& dq = add_node(g, b_name + "/DequantizeLinear", "DequantizeLinear", {q, s, z}, {out});
    if (shape.rank() == 1) dq.attrs.set("axis", int_attr(0));
  }
  ir::remove_unused_initializers(g);
  IGNIS_RETURN_IF_ERROR(fold_smoothing_into_quantize(g, smoothed).status());
  return sort_nodes(g);
}

// max_drop: when quantizing every target costs more than the budget, each target is measured
// alone (only it quantized) for what it costs the model's outputs (1 - cosine, a continuous
// measure even when the budget's metric is top-1), and the most costly ones are kept float32:
// the fewest of that order for which the loss holds, found by bisection (at worst every node
// stays float32). Measuring each node in place of ranking by the error it adds to its own
// output finds the few layers whose error the rest of the network amplifies. When even every
// node float32 misses the budget (a user's metric that never reaches it, outputs that are NaN
// on the samples), it fails: nothing is written rather than a model that breaks the budget.
Status quantize_within_budget(ir::Graph& g, const std::string& dir, const std::vector<size_t>& targets,
                              const Calibration& cal, bool per_channel, const QuantizeOptions& o,
                              const std::vector<SmoothedActivation>& smoothed, CompressReport* report) {
  const ir::Graph float_graph = g;
  std::vector<std::string> decisions;
  const auto note = [&](std::string line) {
    if (o.progress) o.progress(line);
    decisions.push_back(std::move(line));
  };
  struct Trial {
    ir::Graph graph;
    CompressReport report;
    QuantizationError error;
  };
  // The ranking runs need only the outputs' cosine, not the budget's metric (a user's metric
  // is not called n times for it).
  QuantizeOptions ranking = o;
  ranking.metric = AccuracyMetric::Cosine;
  ranking.custom_metric = nullptr;
  // The model with `quantized` targets in int8 and the others float32, measured.
  const auto trial = [&](const std::vector<size_t>& quantized, const QuantizeOptions& measure) -> Result<Trial> {
    Trial t{float_graph, *report, {}};
    IGNIS_RETURN_IF_ERROR(write_qdq(t.graph, quantized, cal, per_channel, o, smoothed, &t.report));
    IGNIS_ASSIGN_OR_RETURN(t.error, measure_quantization_error(float_graph, t.graph, dir, measure));
    return t;
  };
  std::vector<std::pair<double, size_t>> cost;  // (output error with only the node quantized, node), costliest first
  // `t` is the trial with the `kept` costliest targets float32 and the others quantized; it must
  // hold the budget.
  const auto accept = [&](Trial t, size_t kept) {
    if (!(t.error.loss <= *o.max_drop)) {
      // With nothing quantized the two models agree, so only NaN in the float outputs makes the loss NaN.
      const bool nan = std::isnan(t.error.loss) && kept == targets.size();
      return invalid_argument(str_cat(
          "the accuracy budget --max-drop ", *o.max_drop, " cannot be met: with ", kept, " of ", targets.size(),
          " nodes float32 the loss is ", t.error.loss,
          nan ? " (the float model's outputs are not finite on the calibration samples)" : "",
          "; nothing was written (raise --max-drop, or check the metric and the calibration data)"));
    }
    for (size_t r = 0; r < kept; ++r) {
      const ir::Node& n = float_graph.nodes[cost[r].second];
      t.report.skipped.push_back(str_cat(n.label(), ": kept float32 to hold --max-drop"));
      note(str_cat(n.label(), " kept float32 (quantized alone it costs ", cost[r].first, " of output cosine)"));
    }
    note(str_cat("loss ", t.error.loss, " <= ", *o.max_drop, " with ", targets.size() - kept, " of ", targets.size(),
                 " nodes quantized"));
    g = std::move(t.graph);
    *report = std::move(t.report);
    report->accuracy_loss = t.error.loss;
    report->decisions.insert(report->decisions.end(), decisions.begin(), decisions.end());
    return Status::ok();
  };

  IGNIS_ASSIGN_OR_RETURN(Trial all, trial(targets, o));
  if (all.error.loss <= *o.max_drop) return accept(std::move(all), 0);
  note(str_cat("loss ", all.error.loss, " > ", *o.max_drop, " with all ", targets.size(),
               " nodes quantized; measuring each node alone"));
  for (size_t i : targets) {
    IGNIS_ASSIGN_OR_RETURN(const Trial alone, trial({i}, ranking));
    cost.emplace_back(alone.error.output_error, i);
  }
  // A node whose quantization makes the outputs NaN (cosine NaN) counts as the costliest.
  const auto key = [](double c) { return std::isnan(c) ? std::numeric_limits<double>::infinity() : c; };
  std::stable_sort(cost.begin(), cost.end(), [&](const auto& a, const auto& b) { return key(a.first) > key(b.first); });
  // The targets quantized when the k costliest stay float32.
  const auto without_top = [&](size_t k) {
    std::vector<size_t> q;
    for (size_t r = k; r < cost.size(); ++r) q.push_back(cost[r].second);
    std::sort(q.begin(), q.end());
    return q;
  };
  // Bisection on k: k = 0 fails (measured above); k = all is assumed to hold (nothing quantized,
  // no loss), and checked by accept when nothing smaller held.
  size_t lo = 0, hi = cost.size();
  std::optional<Trial> best;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    IGNIS_ASSIGN_OR_RETURN(Trial t, trial(without_top(mid), o));
    const bool holds = t.error.loss <= *o.max_drop;
    note(str_cat("loss ", t.error.loss, holds ? " <= " : " > ", *o.max_drop, " with the ", mid,
                 " costliest nodes left float32"));
    if (holds) {
      hi = mid;
      best = std::move(t);
    } else {
      lo = mid;
    }
  }
  if (!best) {
    IGNIS_ASSIGN_OR_RETURN(Trial t, trial(without_top(hi), o));
    best = std::move(t);
  }
  return accept(std::move(*best), hi);
}

// Min/max calibration and smoothing from one pass: the factors from the per-channel max |x|,
// and the range of x / s, which the projections now read, from the per-channel min and max
// (multiplying by 1 / s_j > 0 keeps the order, rounding included, so this is the range a
// second pass over x / s would find).
Result<std::vector<SmoothedActivation>> smooth_from_channel_ranges(ir::Graph& g, const SmoothingPlan& plan,
                                                                   Calibration& cal) {
  std::map<std::string, std::vector<float>> abs_max;
  for (const auto& [name, c] : cal.channels) abs_max[name] = c.abs_max;
  IGNIS_ASSIGN_OR_RETURN(auto smoothed, apply_smoothing(g, plan, abs_max));
  for (const auto& a : smoothed) {
    const ChannelRanges& c = cal.channels.at(a.value);
    CalibratedRange r{std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
    for (size_t j = 0; j < a.inverse.size(); ++j) {
      if (!(c.min[j] <= c.max[j])) continue;  // no finite value seen in this channel
      r.min = std::min(r.min, c.min[j] * a.inverse[j]);
      r.max = std::max(r.max, c.max[j] * a.inverse[j]);
    }
    if (r.min <= r.max) cal.ranges[a.output] = r;
    else cal.skipped.push_back(str_cat(a.output, ": no finite values seen"));
  }
  return smoothed;
}

}  // namespace

Status quantize_static(ir::Graph& g, const std::string& model_path, const QuantizeOptions& o, CompressReport* report) {
  const int64_t opset = g.opset("");
  if (opset < 10)
    return unsupported(str_cat("static quantization writes QuantizeLinear/DequantizeLinear, which need opset >= 10; "
                               "the model imports opset ",
                               opset));
  if (o.max_drop && !(*o.max_drop >= 0))
    return invalid_argument(str_cat("--max-drop must be >= 0 (a loss of accuracy), got ", *o.max_drop));
  const bool per_channel = o.per_channel && opset >= 13;  // per-axis scales arrived in opset 13
  if (o.per_channel && !per_channel)
    report->skipped.push_back(str_cat("all weights: per tensor, not per channel: per-axis scales need opset >= 13 and "
                                      "the model imports opset ",
                                      opset, " (raising it first, e.g. with onnx.version_converter, is often worth "
                                             "much accuracy)"));
  const std::set<std::string> excluded(o.exclude_nodes.begin(), o.exclude_nodes.end());
  for (const auto& n : g.nodes)
    if (is_target(n) && excluded.count(n.name)) report->skipped.push_back(str_cat(n.label(), ": excluded"));
  const auto find_targets = [&] {
    std::vector<size_t> found;
    for (size_t i = 0; i < g.nodes.size(); ++i)
      if (is_target(g.nodes[i]) && !excluded.count(g.nodes[i].name)) found.push_back(i);
    return found;
  };
  std::vector<size_t> targets = find_targets();
  std::optional<ir::Graph> original;  // the float model, to measure the activations' errors against
  if (o.error_samples > 0) original = g;

  std::error_code ec;
  const std::string dir = std::filesystem::absolute(model_path, ec).parent_path().string();
  IGNIS_ASSIGN_OR_RETURN(const SmoothingPlan plan, plan_smoothing(g, targets, o.smooth_alpha));
  std::vector<SmoothedActivation> smoothed;
  Calibration cal;
  if (o.calibration_method == CalibrationMethod::MinMax) {
    IGNIS_ASSIGN_OR_RETURN(cal, calibrate(g, dir, activation_tensors(g, targets), o, plan.depth, kSmoothingSamples));
    IGNIS_ASSIGN_OR_RETURN(smoothed, smooth_from_channel_ranges(g, plan, cal));
  } else {
    // The histograms are of x / s, so s must be known before the calibration pass.
    IGNIS_ASSIGN_OR_RETURN(smoothed, smooth_activations(g, dir, targets, o));
  }
  if (!smoothed.empty()) {
    targets = find_targets();  // the Muls were sorted in
    int projections = 0;
    for (const auto& a : smoothed) projections += a.projections;
    report->decisions.push_back(str_cat("smoothed the input channels of ", projections, " projections (", smoothed.size(),
                                        " activations) with strength ", o.smooth_alpha));
  }
  if (o.calibration_method != CalibrationMethod::MinMax) {
    IGNIS_ASSIGN_OR_RETURN(cal, calibrate(g, dir, activation_tensors(g, targets), o));
  }
  report->calibration_samples = cal.samples;
  report->skipped.insert(report->skipped.end(), cal.skipped.begin(), cal.skipped.end());
  if (o.max_drop) IGNIS_RETURN_IF_ERROR(quantize_within_budget(g, dir, targets, cal, per_channel, o, smoothed, report));
  else IGNIS_RETURN_IF_ERROR(write_qdq(g, targets, cal, per_channel, o, smoothed, report));
  if (original) return measure_activation_errors(g, *original, dir, smoothed, o, report);
  return Status::ok();
}

}  // namespace ignis::compress
