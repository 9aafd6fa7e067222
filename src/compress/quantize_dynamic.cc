// SPDX-License-Identifier: Apache-2.0
// Dynamic int8 quantization of MatMul and Gemm, written with standard ONNX ops in the form
// onnxruntime's quantize_dynamic writes (and the int8 kernels fuse):
//
//   x ─ DynamicQuantizeLinear ─► xq (uint8), x_scale, x_zp      (one per activation tensor)
//   MatMulInteger(xq, Wq, x_zp, W_zp) ─► Cast(to=float) ─► Mul(·, x_scale * W_scale) [─► Add(C)]
//
// or, per row (QuantizeOptions::per_row), with one symmetric int8 scale for each row of x
// (its last axis), in standard ops that any runtime runs and ignis fuses back into
// ai.ignis.DynamicQuantizeRows (fuse_dynamic_quantize_rows):
//
//   s = Div(Max(ReduceMax(Abs(x), axes = [-1], keepdims = 1), kRowScaleFloor), 127)   [..., 1]
//   xq = Cast(Clip(Round(Div(x, s)), -127, 127), to = int8)
//   MatMulInteger(xq, Wq, , W_zp) ─► Cast(to=float) ─► Mul(·, W_scale) ─► Mul(·, s) [─► Add(C)]
//
// A row with one large value no longer sets the step of every other row (a transformer's
// tokens differ in range by orders of magnitude); the floor keeps an all-zero row's scale
// positive (0 / 0 would be NaN).
// Wq is int8 symmetric (W_zp = 0), with one scale per output column N ([N] scale and zero
// point) or one for the tensor. Algebra: x ≈ x_scale * (xq - x_zp) and W ≈ W_scale * Wq, so
// x @ W ≈ x_scale * W_scale * ((xq - x_zp) @ Wq) with the integer product exact in int32;
// a per-column W_scale factors out of each column's sum. Gemm's op(B) = Bᵀ (transB) is
// transposed here into [K, N]; alpha multiplies W_scale; beta * C becomes the added bias.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "compress/graph_edit.h"
#include "compress/int8_weights.h"
#include "compress/quantize_graph.h"
#include "core/strings.h"
#include "ir/rewrite.h"

namespace ignis::compress {

namespace {

Tensor transpose_2d(const Tensor& t) {
  const int64_t rows = t.dim(0), cols = t.dim(1);
  Tensor out = Tensor::empty(DType::F32, Shape{cols, rows});
  const float* x = t.data_as<float>();
  float* y = out.data_as<float>();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * cols + c];
  return out;
}

Tensor scaled_copy(const Tensor& t, float factor) {
  Tensor out = Tensor::empty(DType::F32, t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) out.data_as<float>()[i] = t.data_as<float>()[i] * factor;
  return out;
}

// What one MatMul/Gemm needs rewritten: y = alpha * (x @ op(W)) + bias.
struct Candidate {
  std::string x, weight, bias;  // bias: "" when none
  bool transposed = false;      // W is stored [N, K] (Gemm transB)
  float alpha = 1.0f, beta = 1.0f;
};

// Marks nodes that are not MatMul/Gemm at all: nothing to report for them.
const std::string kNotMatMul = "not a MatMul or Gemm";

// Fills *c for a node this mode rewrites and returns ""; otherwise returns why it stays float.
std::string match(const ir::Graph& g, const ir::Node& n, int64_t min_elements, Candidate* c) {
  if (!n.domain.empty() || (n.op_type != "MatMul" && n.op_type != "Gemm")) return kNotMatMul;
  const Tensor* w = ir::constant_value(g, n.inputs[1]);
  if (w == nullptr) return "B is computed, not a constant initializer";
  if (w->dtype() != DType::F32) return str_cat("B has dtype ", dtype_name(w->dtype()), ", not float32");
  if (w->rank() != 2) return str_cat("B is ", w->rank(), "-D, not 2-D");
  if (ir::constant_value(g, n.inputs[0]) != nullptr) return "A is a constant (constant folding's job)";
  if (w->numel() < min_elements) return str_cat("B has ", w->numel(), " elements, below the minimum of ", min_elements);
  c->x = n.inputs[0];
  c->weight = n.inputs[1];
  if (n.op_type == "Gemm") {
    if (n.attrs.get_int("transA", 0) != 0) return "transA=1";
    c->transposed = n.attrs.get_int("transB", 0) != 0;
    c->alpha = n.attrs.get_float("alpha", 1.0f);
    c->beta = n.attrs.get_float("beta", 1.0f);
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
      const Tensor* bias = ir::constant_value(g, n.inputs[2]);
      if (c->beta != 1.0f && (bias == nullptr || bias->dtype() != DType::F32))
        return "beta != 1 with a C that is not a float32 constant";
      if (c->beta != 0.0f) c->bias = n.inputs[2];
    }
  }
  return "";
}

std::string node_base(const ir::Node& n) { return n.name.empty() ? n.outputs[0] : n.name; }

constexpr int64_t kOnnxInt8 = 3;          // TensorProto.INT8
constexpr float kRowScaleFloor = 1e-30f;  // below any row worth a nonzero code
constexpr float kRowLimit = 127.0f;       // symmetric int8: codes in [-127, 127]

Tensor f32_scalar(float v) {
  Tensor t = Tensor::empty(DType::F32, Shape{});
  *t.data_as<float>() = v;
  return t;
}

// Appends the per-row quantization of x (header comment); returns {xq, s}.
std::pair<std::string, std::string> quantize_rows(ir::Graph& g, const std::string& x) {
  const std::string base = x + "/DynamicQuantizeRows";
  auto value = [&](const std::string& suffix) { return ir::unique_value_name(g, x + suffix); };
  const std::string abs = value("_abs"), max = value("_row_max"), floored = value("_row_max_floored");
  const std::string scale = value("_row_scale"), divided = value("_divided"), rounded = value("_rounded");
  const std::string clipped = value("_clipped"), q = value("_quantized");
  const std::string floor_c = add_initializer(g, x + "_row_scale_floor", f32_scalar(kRowScaleFloor));
  const std::string limit_c = add_initializer(g, x + "_row_limit", f32_scalar(kRowLimit));
  const std::string low_c = add_initializer(g, x + "_row_low", f32_scalar(-kRowLimit));
  add_node(g, base + "/Abs", "Abs", {x}, {abs});
  if (g.opset("") >= 18) {  // axes became an input in opset 18
    Tensor axes = Tensor::empty(DType::I64, Shape{1});
    axes.data_as<int64_t>()[0] = -1;
    const std::string axes_c = add_initializer(g, x + "_row_axes", std::move(axes));
    add_node(g, base + "/ReduceMax", "ReduceMax", {abs, axes_c}, {max}).attrs.set("keepdims", int_attr(1));
  } else {
    Attribute axes;
    axes.kind = Attribute::Kind::Ints;
    axes.ints = {-1};
    ir::Node& reduce = add_node(g, base + "/ReduceMax", "ReduceMax", {abs}, {max});
    reduce.attrs.set("axes", axes);
    reduce.attrs.set("keepdims", int_attr(1));
  }
  add_node(g, base + "/Max", "Max", {max, floor_c}, {floored});
  add_node(g, base + "/Scale", "Div", {floored, limit_c}, {scale});
  add_node(g, base + "/Div", "Div", {x, scale}, {divided});
  add_node(g, base + "/Round", "Round", {divided}, {rounded});
  add_node(g, base + "/Clip", "Clip", {rounded, low_c, limit_c}, {clipped});
  add_node(g, base + "/Cast", "Cast", {clipped}, {q}).attrs.set("to", int_attr(kOnnxInt8));
  return {q, scale};
}

}  // namespace

Status quantize_dynamic(ir::Graph& g, const QuantizeOptions& o, CompressReport* report) {
  if (g.opset("") < 11)
    return unsupported(str_cat("dynamic quantization writes ",
                               o.per_row ? "Round and Clip with bound inputs" : "DynamicQuantizeLinear",
                               ", which need opset >= 11; the model imports opset ", g.opset("")));
  const std::set<std::string> excluded(o.exclude_nodes.begin(), o.exclude_nodes.end());
  struct QuantizedWeight {
    std::string q, scale, zero;
  };
  std::map<std::pair<std::string, bool>, QuantizedWeight> weights;  // (initializer, transposed)
  struct QuantizedActivation {
    std::string q, scale, zero;
  };
  std::unordered_map<std::string, QuantizedActivation> activations;
  std::map<std::string, size_t> reported;  // initializer -> index in report->changed
  std::vector<bool> remove;

  const size_t original = g.nodes.size();
  for (size_t i = 0; i < original; ++i) {
    Candidate c;
    std::string why = match(g, g.nodes[i], o.min_elements.value_or(0), &c);
    if (why == kNotMatMul) continue;
    if (why.empty() && excluded.count(g.nodes[i].name)) why = "excluded";
    if (!why.empty()) {
      report->skipped.push_back(str_cat(g.nodes[i].label(), ": ", why));
      continue;
    }
    const ir::Node n = g.nodes[i];  // copy: appending nodes below may move g.nodes
    const std::string base = node_base(n);

    auto wit = weights.find({c.weight, c.transposed});
    if (wit == weights.end()) {
      const Tensor& w = g.initializers.at(c.weight);
      Int8Weight q8 = quantize_int8_symmetric(c.transposed ? transpose_2d(w) : w, o.per_channel ? 1 : -1);
      if (!reported.count(c.weight)) {
        std::string scheme = o.per_channel ? "int8 dynamic per-column" : "int8 dynamic per-tensor";
        if (o.per_row) scheme += ", activations per row";
        WeightChange change = int8_weight_change(c.weight, n.op_type, scheme, w, q8);
        reported[c.weight] = report->changed.size();
        report->parameters_changed += change.elements;
        report->changed.push_back(std::move(change));
      }
      const std::string stem = c.transposed ? c.weight + "_transposed" : c.weight;
      QuantizedWeight qw;
      qw.q = add_initializer(g, stem + "_quantized", std::move(q8.q));
      qw.scale = add_initializer(g, stem + "_scale", std::move(q8.scale));
      qw.zero = add_initializer(g, stem + "_zero_point", std::move(q8.zero));
      wit = weights.emplace(std::make_pair(c.weight, c.transposed), qw).first;
    }
    const QuantizedWeight qw = wit->second;

    auto ait = activations.find(c.x);
    if (ait == activations.end() && o.per_row) {
      QuantizedActivation qa;
      std::tie(qa.q, qa.scale) = quantize_rows(g, c.x);
      ait = activations.emplace(c.x, qa).first;
    } else if (ait == activations.end()) {
      // The three suffixes differ, so names made unique one by one cannot collide.
      QuantizedActivation qa;
      qa.q = ir::unique_value_name(g, c.x + "_quantized");
      qa.scale = ir::unique_value_name(g, c.x + "_scale");
      qa.zero = ir::unique_value_name(g, c.x + "_zero_point");
      add_node(g, c.x + "/DynamicQuantizeLinear", "DynamicQuantizeLinear", {c.x}, {qa.q, qa.scale, qa.zero});
      ait = activations.emplace(c.x, qa).first;
    }
    const QuantizedActivation qa = ait->second;

    std::string w_scale = qw.scale;
    if (c.alpha != 1.0f)
      w_scale = add_initializer(g, base + "_alpha_scale", scaled_copy(g.initializers.at(qw.scale), c.alpha));
    const std::string product = ir::unique_value_name(g, base + "_int32");
    const std::string as_float = ir::unique_value_name(g, base + "_float");
    // Per tensor: one Mul by x_scale * W_scale; per row: by W_scale, then by x's row scale.
    std::string scale = w_scale;
    if (!o.per_row) {
      scale = ir::unique_value_name(g, base + "_scale");
      add_node(g, base + "/scale", "Mul", {qa.scale, w_scale}, {scale});
    }
    add_node(g, base + "/MatMulInteger", "MatMulInteger", {qa.q, qw.q, qa.zero, qw.zero}, {product});
    add_node(g, base + "/Cast", "Cast", {product}, {as_float}).attrs.set("to", int_attr(kOnnxFloat));
    const std::string scaled = c.bias.empty() ? n.outputs[0] : ir::unique_value_name(g, base + "_scaled");
    if (o.per_row) {
      const std::string by_column = ir::unique_value_name(g, base + "_column_scaled");
      add_node(g, base + "/Mul", "Mul", {as_float, scale}, {by_column});
      add_node(g, base + "/RowMul", "Mul", {by_column, qa.scale}, {scaled});
    } else {
      add_node(g, base + "/Mul", "Mul", {as_float, scale}, {scaled});
    }
    if (!c.bias.empty()) {
      std::string bias = c.bias;
      if (c.beta != 1.0f)
        bias = add_initializer(g, base + "_beta_bias", scaled_copy(g.initializers.at(c.bias), c.beta));
      add_node(g, base + "/Add", "Add", {scaled, bias}, {n.outputs[0]});
    }
    remove.resize(g.nodes.size(), false);
    remove[i] = true;
  }
  remove.resize(g.nodes.size(), false);
  ir::remove_nodes(g, remove);
  ir::remove_unused_initializers(g);
  return sort_nodes(g);
}

}  // namespace ignis::compress
