// SPDX-License-Identifier: Apache-2.0
// quantize_model: weight-only quantization written as standard ONNX.
//
// int8: each weight W becomes an int8 initializer Q with scales S (one per output channel, or
// one for the tensor) and a zero point of 0, and a DequantizeLinear(Q, S, 0) node producing the
// value W was, so the reading ops are untouched. Symmetric: S = max|W| / 127 over the channel,
// Q = round_half_even(W / S) in [-127, 127] (-128 is never used, keeping the range symmetric);
// the error per element is at most S / 2. A channel of zeros gets S = 1 (Q = 0 exactly).
// fp16: W becomes a float16 initializer and a Cast(to = float) node; weights beyond float16's
// range are left alone.
// At session creation constant folding evaluates these nodes once, so ignis runs such a model
// at float32 speed from a file 4x (2x) smaller; other runtimes treat the nodes as they choose.
// dynamic: the rewrite of quantize_dynamic.cc, which quantizes activations too.
#include <algorithm>
#include <cmath>
#include <set>

#include "compress/graph_edit.h"
#include "compress/int8_weights.h"
#include "compress/quantize_graph.h"
#include "compress/weights.h"
#include "core/half.h"
#include "core/strings.h"
#include "ir/rewrite.h"

namespace ignis {

namespace {

using compress::int_attr;
using compress::kOnnxFloat;

constexpr float kHalfMax = 65504.0f;  // largest finite float16

float max_abs_of(const Tensor& t) {
  float m = 0.0f;
  const float* w = t.data_as<float>();
  for (int64_t i = 0; i < t.numel(); ++i) m = std::max(m, std::fabs(w[i]));
  return m;
}

// Replaces weight `w` by DequantizeLinear(int8, scale, zero point).
ir::Node quantize_int8(ir::Graph& g, const compress::WeightTensor& w, bool per_channel, WeightChange* change) {
  compress::Int8Weight q8 = compress::quantize_int8_symmetric(g.initializers.at(w.value), per_channel ? w.channel_axis : -1);
  change->max_abs_error = q8.max_abs_error;
  change->zeros_after = q8.zeros;
  change->scheme = per_channel ? str_cat("int8 per-channel axis ", w.channel_axis) : std::string("int8 per-tensor");
  Tensor q = std::move(q8.q), scale = std::move(q8.scale), zero = std::move(q8.zero);

  const std::string q_name = ir::unique_value_name(g, w.value + "_quantized");
  g.initializers.emplace(q_name, std::move(q));
  const std::string s_name = ir::unique_value_name(g, w.value + "_scale");
  g.initializers.emplace(s_name, std::move(scale));
  const std::string z_name = ir::unique_value_name(g, w.value + "_zero_point");
  g.initializers.emplace(z_name, std::move(zero));

  ir::Node dq;
  dq.name = w.value + "/DequantizeLinear";
  dq.op_type = "DequantizeLinear";
  dq.inputs = {q_name, s_name, z_name};
  dq.outputs = {w.value};
  if (per_channel) dq.attrs.set("axis", int_attr(w.channel_axis));
  return dq;
}

// Replaces weight `w` by Cast(float16 copy, to = float).
ir::Node quantize_fp16(ir::Graph& g, const compress::WeightTensor& w, WeightChange* change) {
  const Tensor& t = g.initializers.at(w.value);
  const float* x = t.data_as<float>();
  Tensor h = Tensor::empty(DType::F16, t.shape());
  uint16_t* hp = static_cast<uint16_t*>(h.data());
  float err = 0.0f;
  int64_t zeros = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    hp[i] = float_to_half(x[i]);
    const float back = half_to_float(hp[i]);
    zeros += back == 0.0f;
    err = std::max(err, std::fabs(x[i] - back));
  }
  change->max_abs_error = err;
  change->zeros_after = zeros;
  change->scheme = "fp16";

  const std::string h_name = ir::unique_value_name(g, w.value + "_fp16");
  g.initializers.emplace(h_name, std::move(h));
  ir::Node cast;
  cast.name = w.value + "/Cast";
  cast.op_type = "Cast";
  cast.inputs = {h_name};
  cast.outputs = {w.value};
  cast.attrs.set("to", int_attr(kOnnxFloat));
  return cast;
}

// Verifies and writes the rewritten graph, completing the report with the sizes after.
Result<CompressReport> finish(const ir::Graph& g, const std::string& output_path, CompressReport report) {
  report.initializer_bytes_after = compress::initializer_bytes(g);
  IGNIS_RETURN_IF_ERROR(ir::verify(g));
  IGNIS_RETURN_IF_ERROR(compress::write_model_graph(g, output_path, &report.file_bytes_after));
  return report;
}

// Ops that only a quantized model holds: ONNX's QDQ and integer ops, and onnxruntime's
// com.microsoft quantized ops (QLinear*, QOrdered*, QGemm, MatMulNBits...).
bool is_quantized_op(const ir::Node& n) {
  static const std::set<std::string, std::less<>> kOps = {
      "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "MatMulInteger", "ConvInteger",
      "MatMulNBits", "MatMulBnb4", "MatMulFpQ4", "MatMulIntegerToFloat", "DynamicQuantizeMatMul",
      "DynamicQuantizeLSTM", "QGemm", "QAttention", "QEmbedLayerNormalization", "GatherBlockQuantized"};
  return kOps.count(n.op_type) > 0 || n.op_type.starts_with("QLinear") || n.op_type.starts_with("QOrdered");
}

// "53 QuantizeLinear, 53 DequantizeLinear nodes" for the quantized ops of `g` in order of first
// appearance; empty when it holds none.
std::string quantized_ops_summary(const ir::Graph& g) {
  std::vector<std::pair<std::string, int64_t>> counts;
  int64_t total = 0;
  for (const ir::Node& n : g.nodes) {
    if (!is_quantized_op(n)) continue;
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == n.op_type; });
    if (it == counts.end()) it = counts.insert(counts.end(), {n.op_type, 0});
    ++it->second;
    ++total;
  }
  if (total == 0) return "";
  std::vector<std::string> parts;
  for (const auto& [op, count] : counts) parts.push_back(str_cat(count, " ", op));
  return str_cat(str_join(parts, ", "), total == 1 ? " node" : " nodes");
}

int64_t count_zeros(const Tensor& t) {
  const float* x = t.data_as<float>();
  return std::count(x, x + t.numel(), 0.0f);
}

}  // namespace

Result<CompressReport> quantize_model(const std::string& input_path, const std::string& output_path,
                                      const QuantizeOptions& options) {
  QuantizeOptions o = options;
  if (!o.min_elements) o.min_elements = o.mode == QuantizeMode::Static ? 0 : 1024;
  if (*o.min_elements < 0) return invalid_argument(str_cat("min_elements must be >= 0, got ", *o.min_elements));
  const bool per_node = o.mode == QuantizeMode::Dynamic || o.mode == QuantizeMode::Static || o.mode == QuantizeMode::Int4;
  if (!o.exclude_nodes.empty() && !per_node)
    return invalid_argument("excluding nodes applies to dynamic, static and int4 quantization, whose ops are chosen per node");
  if (o.mode == QuantizeMode::Int4 && (o.block_size < 16 || (o.block_size & (o.block_size - 1)) != 0))
    return invalid_argument(str_cat("block_size must be a power of 2 >= 16, got ", o.block_size));
  if (!o.calibration_data.empty() && o.mode != QuantizeMode::Static && o.mode != QuantizeMode::Int4)
    return invalid_argument(str_cat("calibration data applies to static int8 and int4 quantization, not to ",
                                    o.mode == QuantizeMode::Fp16 ? "fp16" : o.mode == QuantizeMode::Dynamic ? "dynamic" : "int8"));
  if (o.per_row && o.mode != QuantizeMode::Dynamic)
    return invalid_argument("per-row activation scales apply to dynamic quantization (--mode dynamic) only");
  if (o.mode == QuantizeMode::Static && o.calibration_data.empty())
    return invalid_argument("static quantization needs a calibration data folder");
  if (o.mode == QuantizeMode::Static && !(o.percentile > 0.0 && o.percentile <= 100.0))
    return invalid_argument(str_cat("percentile must be in (0, 100], got ", o.percentile));
  if (o.calibration_samples < 0)
    return invalid_argument(str_cat("calibration_samples must be >= 0, got ", o.calibration_samples));
  CompressReport report;
  IGNIS_ASSIGN_OR_RETURN(ir::Graph g, compress::read_model_graph(input_path, &report.file_bytes_before));
  // Every mode, fp16 included, starts from the float model: quantizing again would round values
  // already rounded (or, for fp16, leave a model half int8 and half float16 that no one tested).
  if (const std::string found = quantized_ops_summary(g); !found.empty())
    return invalid_argument(str_cat("'", input_path, "' is already quantized: it holds ", found,
                                    "; quantize the float model instead"));
  const auto unknown = compress::unknown_node_names(g, o.exclude_nodes);
  if (!unknown.empty())
    return invalid_argument(str_cat("no node named '", str_join(unknown, "', '"), "' to exclude in '", input_path, "'"));
  report.parameters = compress::initializer_elements(g);
  report.initializer_bytes_before = compress::initializer_bytes(g);
  if (o.mode == QuantizeMode::Dynamic) {
    IGNIS_RETURN_IF_ERROR(compress::quantize_dynamic(g, o, &report));
    return finish(g, output_path, std::move(report));
  }
  if (o.mode == QuantizeMode::Int4) {
    IGNIS_RETURN_IF_ERROR(compress::quantize_int4(g, input_path, o, &report));
    return finish(g, output_path, std::move(report));
  }
  if (o.mode == QuantizeMode::Static) {
    IGNIS_RETURN_IF_ERROR(compress::quantize_static(g, input_path, o, &report));
    return finish(g, output_path, std::move(report));
  }
  const int64_t opset = g.opset("");
  if (o.mode == QuantizeMode::Int8 && opset < 10)
    return unsupported(str_cat("int8 weights are written as DequantizeLinear, which needs opset >= 10; '", input_path,
                               "' imports opset ", opset));
  // Per-axis scales arrived in DequantizeLinear-13; older models get one scale per tensor.
  const bool per_channel = o.per_channel && opset >= 13;

  std::vector<ir::Node> added;
  for (const auto& w : compress::find_weights(g, *o.min_elements, &report.skipped)) {
    const Tensor& t = g.initializers.at(w.value);
    WeightChange change;
    change.value = w.value;
    change.op_type = w.op_type;
    change.elements = t.numel();
    change.zeros_before = count_zeros(t);
    change.max_abs = max_abs_of(t);
    if (o.mode == QuantizeMode::Fp16 && !(change.max_abs <= kHalfMax)) {
      report.skipped.push_back(str_cat(w.value, ": values beyond float16's range (max |w| ", change.max_abs, ")"));
      continue;
    }
    added.push_back(o.mode == QuantizeMode::Int8 ? quantize_int8(g, w, per_channel, &change)
                                                       : quantize_fp16(g, w, &change));
    g.initializers.erase(w.value);
    report.parameters_changed += change.elements;
    report.changed.push_back(std::move(change));
  }
  // The new nodes read only initializers, so they may lead the node list.
  g.nodes.insert(g.nodes.begin(), std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
  return finish(g, output_path, std::move(report));
}

}  // namespace ignis
